// Saved gateway configs: routing (single, fallback, load balancing), retries, caching. The
// API checks a config when it is saved and names the field it refuses (config.strategy.mode,
// with an AB code), which is shown under the config's text.
import { html } from '../lib.js';
import { api, asOf } from '../api.js';
import { Link } from '../router.js';
import { Page, useApi, Result, FormBox, Field, useSubmit, errorFor, Facts, Time, Status, Empty, JSONBlock, workspaceOptions, parseJSONField } from '../ui.js';
import { History } from './audit.js';

const example = '{\n  "strategy": { "mode": "fallback" },\n  "targets": [\n    { "provider": "@my-openai" },\n    { "provider": "@my-anthropic" }\n  ]\n}';
const configHint = 'JSON: strategy (single, fallback or loadbalance), targets, retry, cache, request_timeout, override_params.';

export function Configs() {
  const list = useApi('/configs', { page_size: 200 });
  const workspaces = useApi('/workspaces', { page_size: 200 });
  const sub = useSubmit(async (v, form) => {
    const config = parseJSONField('config', v.config);
    const body = { name: v.name, workspace_id: v.workspace_id, config };
    if (v.slug) body.slug = v.slug;
    await api('/configs', { method: 'POST', body });
    form.reset();
    list.reload();
  });
  return html`<${Page} title="Configs">
    <${Result} r=${list} what="configs">${(d) => (d.data.length ? html`<table>
      <caption class="visually-hidden">Saved configs</caption>
      <thead><tr><th scope="col">Name</th><th scope="col">Slug</th><th scope="col">Workspace</th><th scope="col">Status</th><th scope="col">Default</th><th scope="col">Last updated</th></tr></thead>
      <tbody>${d.data.map((c) => html`<tr key=${c.id}>
        <th scope="row"><${Link} to=${'/configs/' + c.slug}>${c.name}<//></th><td><code>${c.slug}</code></td><td><code class="id">${c.workspace_id}</code></td>
        <td><${Status} value=${c.status} /></td><td>${c.is_default ? 'yes' : 'no'}</td><td><${Time} at=${c.last_updated_at} /></td>
      </tr>`)}</tbody></table>` : html`<${Empty}>No configs${asOf() ? ' at that time' : ''}.<//>`)}<//>
    <${FormBox} title="Create a config" submit="Create config" sub=${sub} wide>
      <${Field} label="Name" name="name" required error=${errorFor(sub.error, 'name')} />
      <${Field} label="Slug (optional)" name="slug" error=${errorFor(sub.error, 'slug')} />
      <${Field} label="Workspace" name="workspace_id" as="select" options=${workspaceOptions(workspaces.data)} error=${errorFor(sub.error, 'workspace_id')} />
      <${Field} label="Config" name="config" as="textarea" rows="10" class="mono" value=${example} hint=${configHint} error=${errorFor(sub.error, 'config')} />
    <//>
  <//>`;
}

export function ConfigDetail({ params }) {
  const c = useApi('/configs/' + encodeURIComponent(params.slug));
  const versions = useApi('/configs/' + encodeURIComponent(params.slug) + '/versions', { page_size: 20 });
  const sub = useSubmit(async (v) => {
    const config = parseJSONField('config', v.config);
    await api('/configs/' + encodeURIComponent(params.slug), { method: 'PUT', body: { name: v.name, config } });
    c.reload();
    versions.reload();
  });
  const data = c.data && (c.data.data || c.data);
  return html`<${Page} title=${data ? 'Config ' + data.name : 'Config'}>
    <p><${Link} to="/configs">All configs<//></p>
    <${Result} r=${c} what="the config">${() => html`<${Facts} items=${[
      ['Name', data.name], ['Slug', html`<code>${data.slug}</code>`], ['Id', html`<code>${data.id}</code>`], ['Status', html`<${Status} value=${data.status} />`],
      ['Workspace', html`<${Link} to=${'/workspaces/' + data.workspace_id}>${data.workspace_id}<//>`], ['Version', html`<code>${data.version_id}</code>`],
      ['Created', html`<${Time} at=${data.created_at} />`], ['Last updated', html`<${Time} at=${data.last_updated_at} />`],
    ]} />
    <h2>Config</h2>
    <${JSONBlock} value=${data.config} label="The config, as JSON" />
    <${FormBox} title="Change the config" submit="Save a new version" sub=${sub} wide>
      <${Field} label="Name" name="name" value=${data.name} error=${errorFor(sub.error, 'name')} />
      <${Field} label="Config" name="config" as="textarea" rows="12" class="mono" value=${JSON.stringify(data.config, null, 2)} hint=${configHint} error=${errorFor(sub.error, 'config')} />
    <//>
    <section aria-labelledby="versions-h"><h2 id="versions-h">Versions</h2>
      <${Result} r=${versions} what="its versions">${(v) => html`<ol class="versions">${(v.data || []).map((x) => html`<li key=${x.version_id}>
        <code>${x.version_id}</code>, <${Time} at=${x.last_updated_at || x.created_at} /></li>`)}</ol>`}<//>
    </section>
    <${History} type="config" id=${data.id} />`}<//>
  <//>`;
}
