// Guardrails: checks run on requests and answers, with what to do when they fail. The API
// checks every check when a guardrail is saved and names the one it refuses (checks[0].id).
import { html } from '../lib.js';
import { api, asOf } from '../api.js';
import { Link } from '../router.js';
import { Page, useApi, Result, FormBox, Field, useSubmit, errorFor, Facts, Time, Status, Empty, JSONBlock, workspaceOptions, parseJSONField } from '../ui.js';
import { History } from './audit.js';

const checksExample = '[\n  { "id": "default.regexMatch", "parameters": { "rule": "\\\\bpassword\\\\b", "not": true } }\n]';
const actionsExample = '{ "deny": true }';

export function Guardrails() {
  const list = useApi('/guardrails', { page_size: 200 });
  const workspaces = useApi('/workspaces', { page_size: 200 });
  const sub = useSubmit(async (v, form) => {
    const checks = parseJSONField('checks', v.checks);
    const actions = parseJSONField('actions', v.actions, { optional: true });
    const body = { name: v.name, checks, actions };
    if (v.workspace_id) body.workspace_id = v.workspace_id;
    else body.organisation_id = ((workspaces.data && workspaces.data.data[0]) || {}).organisation_id; // the signed-in key's
    await api('/guardrails', { method: 'POST', body });
    form.reset();
    list.reload();
  });
  return html`<${Page} title="Guardrails">
    <${Result} r=${list} what="guardrails">${(d) => (d.data.length ? html`<table>
      <caption class="visually-hidden">Guardrails</caption>
      <thead><tr><th scope="col">Name</th><th scope="col">Slug</th><th scope="col">Workspace</th><th scope="col">Status</th><th scope="col">Last updated</th></tr></thead>
      <tbody>${d.data.map((g) => html`<tr key=${g.id}>
        <th scope="row"><${Link} to=${'/guardrails/' + g.id}>${g.name}<//></th><td><code>${g.slug}</code></td>
        <td>${g.workspace_id ? html`<code class="id">${g.workspace_id}</code>` : 'organisation'}</td><td><${Status} value=${g.status} /></td><td><${Time} at=${g.last_updated_at} /></td>
      </tr>`)}</tbody></table>` : html`<${Empty}>No guardrails${asOf() ? ' at that time' : ''}.<//>`)}<//>
    <${FormBox} title="Create a guardrail" submit="Create guardrail" sub=${sub} wide>
      <${Field} label="Name" name="name" required error=${errorFor(sub.error, 'name')} />
      <${Field} label="Workspace" name="workspace_id" as="select" options=${workspaceOptions(workspaces.data, { any: 'The whole organisation' })} error=${errorFor(sub.error, 'workspace_id', 'organisation_id')} />
      <${Field} label="Checks" name="checks" as="textarea" rows="6" class="mono" value=${checksExample} hint="A JSON list of checks: id (e.g. default.regexMatch, default.wordCount), parameters, is_enabled." error=${errorFor(sub.error, 'checks')} />
      <${Field} label="Actions" name="actions" as="textarea" rows="3" class="mono" value=${actionsExample} hint="JSON: deny, async, on_success, on_fail." error=${errorFor(sub.error, 'actions')} />
    <//>
  <//>`;
}

export function GuardrailDetail({ params }) {
  const g = useApi('/guardrails/' + encodeURIComponent(params.id));
  const versions = useApi('/guardrails/' + encodeURIComponent(params.id) + '/versions', { page_size: 20 });
  const sub = useSubmit(async (v) => {
    const checks = parseJSONField('checks', v.checks);
    const actions = parseJSONField('actions', v.actions, { optional: true });
    await api('/guardrails/' + encodeURIComponent(params.id), { method: 'PUT', body: { name: v.name, checks, actions } });
    g.reload();
    versions.reload();
  });
  return html`<${Page} title=${g.data ? 'Guardrail ' + g.data.name : 'Guardrail'}>
    <p><${Link} to="/guardrails">All guardrails<//></p>
    <${Result} r=${g} what="the guardrail">${(d) => html`<${Facts} items=${[
      ['Name', d.name], ['Slug', html`<code>${d.slug}</code>`], ['Id', html`<code>${d.id}</code>`], ['Status', html`<${Status} value=${d.status} />`],
      ['Workspace', d.workspace_id ? html`<${Link} to=${'/workspaces/' + d.workspace_id}>${d.workspace_id}<//>` : 'organisation'],
      ['Version', html`<code>${d.version_id}</code>`], ['Created', html`<${Time} at=${d.created_at} />`], ['Last updated', html`<${Time} at=${d.last_updated_at} />`],
    ]} />
    <div class="two">
      <div><h2>Checks</h2><${JSONBlock} value=${d.checks} label="Checks, as JSON" /></div>
      <div><h2>Actions</h2><${JSONBlock} value=${d.actions} label="Actions, as JSON" /></div>
    </div>
    <${FormBox} title="Change the guardrail" submit="Save a new version" sub=${sub} wide>
      <${Field} label="Name" name="name" value=${d.name} error=${errorFor(sub.error, 'name')} />
      <${Field} label="Checks" name="checks" as="textarea" rows="8" class="mono" value=${JSON.stringify(d.checks, null, 2)} error=${errorFor(sub.error, 'checks')} />
      <${Field} label="Actions" name="actions" as="textarea" rows="6" class="mono" value=${JSON.stringify(d.actions, null, 2)} error=${errorFor(sub.error, 'actions')} />
    <//>
    <section aria-labelledby="gv-h"><h2 id="gv-h">Versions</h2>
      <${Result} r=${versions} what="its versions">${(v) => html`<ol class="versions">${(v.data || []).map((x) => html`<li key=${x.version_id}>
        <code>${x.version_id}</code>, <${Time} at=${x.created_at} />: ${(x.checks || []).map((c) => c.id).join(', ')}</li>`)}</ol>`}<//>
    </section>
    <${History} type="guardrail" id=${d.id} />`}<//>
  <//>`;
}
