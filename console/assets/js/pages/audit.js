// The audit log: every admin change, who made it, and the resource before and after, shown
// as a diff field by field.
import { html } from '../lib.js';
import { Link, href, navigate } from '../router.js';
import { Page, useApi, Result, Field, Facts, Time, Empty, Pager, JSONBlock } from '../ui.js';
import { Diff } from '../diff.js';

const types = ['', 'workspace', 'workspace_member', 'user', 'invite', 'api_key', 'rate_limit_policy', 'usage_limit_policy', 'integration', 'provider',
  'config', 'config_default', 'guardrail', 'prompt', 'prompt_partial', 'prompt_label', 'prompt_collection', 'model_pricing', 'log_export',
  'notification', 'webhook', 'organisation', 'reservation', 'bootstrap'];

const filterNames = ['resource_type', 'resource_id', 'action', 'user_type', 'start_time', 'end_time'];

function localToISO(v) {
  const d = new Date(v);
  return v && !isNaN(d) ? d.toISOString() : '';
}

function isoToLocal(iso) {
  const d = new Date(iso);
  if (!iso || isNaN(d)) return '';
  const p = (n) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())}T${p(d.getHours())}:${p(d.getMinutes())}`;
}

function Records({ list }) {
  return list.data.length ? html`<table>
    <caption class="visually-hidden">Audit records, newest first</caption>
    <thead><tr><th scope="col">When</th><th scope="col">Action</th><th scope="col">Resource</th><th scope="col">By</th><th scope="col">Request</th><th scope="col">Changes</th></tr></thead>
    <tbody>${list.data.map((r) => html`<tr key=${r.id}>
      <td><${Time} at=${r.timestamp} /></td><th scope="row">${r.action}</th>
      <td>${r.resource_type} <code class="id">${r.resource_id}</code></td>
      <td>${r.user_type} <code class="id">${(r.user_id || '').slice(0, 8)}</code></td>
      <td>${r.method} <code>${r.uri}</code> → ${r.response_status_code}</td>
      <td><${Link} to=${'/audit/' + r.id}>Show changes<span class="visually-hidden"> of ${r.action} at ${r.timestamp}</span><//></td>
    </tr>`)}</tbody></table>` : html`<${Empty}>No audit records match.<//>`;
}

export function Audit({ loc }) {
  const q = new URLSearchParams(loc.search);
  const page = Number(q.get('page') || 0);
  const query = { page_size: 50, current_page: page };
  for (const n of filterNames) query[n] = q.get(n) || '';
  const list = useApi('/audit-logs', query);
  const apply = (e) => {
    e.preventDefault();
    const f = e.currentTarget.elements;
    const params = {};
    for (const n of filterNames) params[n] = n.endsWith('_time') ? localToISO(f[n].value) : f[n].value.trim();
    navigate(href('/audit', params));
  };
  const setPage = (n) => navigate(href('/audit', { ...Object.fromEntries(q), page: n || null }));
  return html`<${Page} title="Audit log">
    <form class="filters" onSubmit=${apply} aria-label="Filter the audit log">
      <${Field} label="Resource type" name="resource_type" as="select" value=${query.resource_type} options=${types.map((t) => ({ value: t, label: t || 'Any' }))} />
      <${Field} label="Resource id" name="resource_id" value=${query.resource_id} />
      <${Field} label="Action" name="action" value=${query.action} hint="An event type, e.g. APIKeyRotated" />
      <${Field} label="Actor kind" name="user_type" as="select" value=${query.user_type} options=${[{ value: '', label: 'Any' }, { value: 'api_key', label: 'API key' }, { value: 'user', label: 'User' }, { value: 'system', label: 'System' }]} />
      <${Field} label="From" name="start_time" type="datetime-local" value=${isoToLocal(query.start_time)} />
      <${Field} label="To" name="end_time" type="datetime-local" value=${isoToLocal(query.end_time)} />
      <div class="actions"><button type="submit" class="primary">Apply filters</button></div>
    </form>
    <${Result} r=${list} what="the audit log">${(d) => html`<${Records} list=${d} /><${Pager} list=${d} page=${page} onPage=${setPage} />`}<//>
  <//>`;
}

export function AuditDetail({ params }) {
  const rec = useApi('/audit-logs/' + encodeURIComponent(params.id));
  return html`<${Page} title=${rec.data ? 'Audit record: ' + rec.data.action : 'Audit record'}>
    <p><${Link} to="/audit">The audit log<//>${rec.data && html` · <${Link} to="/audit" params=${{ resource_type: rec.data.resource_type, resource_id: rec.data.resource_id }}>Every change of this resource<//>`}</p>
    <${Result} r=${rec} what="the record">${(r) => html`<${Facts} items=${[
      ['When', html`<${Time} at=${r.timestamp} />`], ['Action', r.action], ['Resource', html`${r.resource_type} <code>${r.resource_id}</code>`],
      ['By', html`${r.user_type} <code>${r.user_id}</code>`], ['Request', html`${r.method} <code>${r.uri}</code> → ${r.response_status_code}`],
      ['Request id', html`<code>${r.request_id}</code>`], ['Client', `${r.client_ip || '—'} · ${r.user_agent || '—'}`], ['Position', r.position],
    ]} />
    <section aria-labelledby="changes"><h2 id="changes">Changes</h2><${Diff} before=${r.before} after=${r.after} /></section>
    <details><summary>Before and after, whole</summary>
      <div class="two"><div><h3>Before</h3><${JSONBlock} value=${r.before} label="Before, as JSON" /></div><div><h3>After</h3><${JSONBlock} value=${r.after} label="After, as JSON" /></div></div>
    </details>`}<//>
  <//>`;
}

// History lists the changes of one resource, each linked to its diff.
export function History({ type, id }) {
  const list = useApi('/audit-logs', { resource_type: type, resource_id: id, page_size: 20 });
  return html`<section aria-labelledby="history-h">
    <h2 id="history-h">History</h2>
    <${Result} r=${list} what="the history">${(d) => html`<${Records} list=${d} />`}<//>
  </section>`;
}
