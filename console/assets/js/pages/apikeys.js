// API keys: create, rotate and revoke. A created or rotated key is shown once, in a dialog,
// and dropped from the page when it closes: the API never shows it again either.
import { html, useState } from '../lib.js';
import { api, asOf } from '../api.js';
import { Link } from '../router.js';
import { Page, useApi, Result, FormBox, Field, Checkboxes, useSubmit, errorFor, Facts, Time, Status, Empty, Confirm, SecretOnce, workspaceOptions } from '../ui.js';
import { Budgets } from './workspaces.js';

const kinds = [
  { value: 'workspace/service', label: 'Workspace service key' },
  { value: 'workspace/user', label: 'Workspace user key' },
  { value: 'organisation/service', label: 'Organisation service (admin) key' },
];

const commonScopes = ['completions.write', 'logs.list', 'logs.view', 'logs.export', 'analytics.view', 'configs.read', 'configs.list',
  'providers.read', 'providers.list', 'policies.read', 'policies.list', 'audit_logs.list'];

function words(s) {
  return String(s || '').split(/[\s,]+/).filter(Boolean);
}

// useKeyActions holds the rotate and revoke dialogs and the key shown once.
function useKeyActions(reload) {
  const [rotating, setRotating] = useState(null);
  const [revoking, setRevoking] = useState(null);
  const [once, setOnce] = useState(null);
  const dialogs = html`
    <${Confirm} open=${!!rotating} title=${rotating ? 'Rotate “' + rotating.name + '”?' : ''} confirm="Rotate key" onClose=${() => setRotating(null)}
      onConfirm=${async () => {
        const { data } = await api(`/api-keys/${rotating.id}/rotate`, { method: 'POST' });
        const name = rotating.name;
        setRotating(null);
        setOnce({ key: data.key, title: 'New key for “' + name + '”', until: data.key_transition_expires_at });
        reload();
      }}>
      <p>Causeway issues a new key. The current key keeps working during the transition period, then stops.</p>
    <//>
    <${Confirm} open=${!!revoking} title=${revoking ? 'Revoke “' + revoking.name + '”?' : ''} confirm="Revoke key" danger onClose=${() => setRevoking(null)}
      onConfirm=${async () => { await api(`/api-keys/${revoking.id}`, { method: 'DELETE' }); setRevoking(null); reload(); }}>
      <p>Requests with this key are refused from now on, on every instance. This cannot be undone.</p>
    <//>
    <${SecretOnce} secret=${once && once.key} title=${once ? once.title : ''} onClose=${() => setOnce(null)}>
      ${once && once.until && html`<p>The key it replaces keeps working until <${Time} at=${once.until} />.</p>`}
    <//>`;
  return { dialogs, setRotating, setRevoking, setOnce };
}

export function APIKeys({ loc }) {
  const filter = new URLSearchParams(loc.search).get('workspace_id') || '';
  const keys = useApi('/api-keys', { page_size: 200, workspace_id: filter });
  const workspaces = useApi('/workspaces', { page_size: 200 });
  const actions = useKeyActions(keys.reload);
  const wsName = (id) => {
    const w = workspaces.data && workspaces.data.data.find((x) => x.id === id);
    return w ? w.name : id || '—';
  };
  const sub = useSubmit(async (v, form) => {
    const body = { name: v.name, scopes: [...(v.scopes || []), ...words(v.more_scopes)] };
    if (v.kind !== 'organisation/service') body.workspace_id = v.workspace_id;
    if (v.budget_type) body.usage_limits = { type: v.budget_type, credit_limit: v.credit_limit === '' ? undefined : Number(v.credit_limit) };
    if (v.expires_at) body.expires_at = new Date(v.expires_at).toISOString();
    const { data } = await api('/api-keys/' + v.kind, { method: 'POST', body });
    form.reset();
    actions.setOnce({ key: data.key, title: 'Key “' + v.name + '” created' });
    keys.reload();
  });
  return html`<${Page} title="API keys">
    <form class="filters" onSubmit=${(e) => e.preventDefault()}>
      <${Field} label="Workspace" name="workspace_filter" as="select" value=${filter}
        options=${workspaceOptions(workspaces.data, { any: 'Every workspace I can see' })}
        onChange=${(e) => { const p = new URLSearchParams(location.search); e.currentTarget.value ? p.set('workspace_id', e.currentTarget.value) : p.delete('workspace_id'); history.replaceState(null, '', location.pathname + (p.toString() ? '?' + p : '')); dispatchEvent(new Event('console:navigate')); }} />
    </form>
    <${Result} r=${keys} what="API keys">${(d) => (d.data && d.data.length ? html`<table>
      <caption class="visually-hidden">API keys</caption>
      <thead><tr><th scope="col">Name</th><th scope="col">Kind</th><th scope="col">Workspace</th><th scope="col">Key</th><th scope="col">Status</th><th scope="col">Budget</th>${!asOf() && html`<th scope="col">Actions</th>`}</tr></thead>
      <tbody>${d.data.map((k) => html`<tr key=${k.id}>
        <th scope="row"><${Link} to=${'/api-keys/' + k.id}>${k.name}<//></th>
        <td>${k.type}</td><td>${k.workspace_id ? wsName(k.workspace_id) : 'organisation'}</td>
        <td><code title="masked: the key itself is never shown again">${k.key}</code></td><td><${Status} value=${k.status} /></td>
        <td><${Budgets} limits=${k.usage_limits} usage=${k.current_usage} /></td>
        ${!asOf() && html`<td class="row-actions">
          <button type="button" class="small" onClick=${() => actions.setRotating(k)}>Rotate<span class="visually-hidden"> ${k.name}</span></button>
          <button type="button" class="small danger" onClick=${() => actions.setRevoking(k)}>Revoke<span class="visually-hidden"> ${k.name}</span></button>
        </td>`}
      </tr>`)}</tbody></table>` : html`<${Empty}>No API keys${asOf() ? ' at that time' : ''}.<//>`)}<//>
    <${FormBox} title="Create an API key" submit="Create key" sub=${sub} wide>
      <${Field} label="Name" name="name" required error=${errorFor(sub.error, 'name')} />
      <${Field} label="Kind" name="kind" as="select" options=${kinds} error=${errorFor(sub.error, 'type', 'sub-type')} errorNames=${['type']} />
      <${Field} label="Workspace" name="workspace_id" as="select" options=${workspaceOptions(workspaces.data)} hint="Ignored for an organisation key."
        error=${errorFor(sub.error, 'workspace_id')} />
      <${Checkboxes} legend="Scopes" name="scopes" options=${commonScopes} checked=${['completions.write']}
        hint="What the key may do; never more than your own key may." error=${errorFor(sub.error, 'scopes')} />
      <${Field} label="Other scopes" name="more_scopes" hint="Separated by spaces or commas, e.g. workspaces.read (the README lists them all)." />
      <div class="row">
        <${Field} label="Budget type" name="budget_type" as="select" options=${[{ value: '', label: 'No budget' }, { value: 'tokens', label: 'Tokens' }, { value: 'cost', label: 'Cost (USD)' }]} />
        <${Field} label="Credit limit" name="credit_limit" type="number" min="1" step="any" errorNames=${['usage_limits']} error=${errorFor(sub.error, 'usage_limits')} />
      </div>
      <${Field} label="Expires at (optional)" name="expires_at" type="datetime-local" error=${errorFor(sub.error, 'expires_at')} />
    <//>
    ${actions.dialogs}
  <//>`;
}

export function APIKeyDetail({ params }) {
  const key = useApi('/api-keys/' + encodeURIComponent(params.id));
  const actions = useKeyActions(key.reload);
  return html`<${Page} title=${key.data ? 'API key ' + key.data.name : 'API key'}>
    <p><${Link} to="/api-keys">All API keys<//> · <${Link} to="/audit" params=${{ resource_type: 'api_key', resource_id: params.id }}>Its history in the audit log<//></p>
    <${Result} r=${key} what="the key">${(k) => html`<${Facts} items=${[
      ['Name', k.name], ['Id', html`<code>${k.id}</code>`], ['Kind', k.type], ['Key (masked)', html`<code>${k.key}</code>`],
      ['Status', html`<${Status} value=${k.status} />`], ['Workspace', k.workspace_id ? html`<${Link} to=${'/workspaces/' + k.workspace_id}>${k.workspace_id}<//>` : 'organisation'],
      ['Scopes', html`<ul class="tags">${(k.scopes || []).map((s) => html`<li key=${s}><code>${s}</code></li>`)}</ul>`],
      ['Budget', html`<${Budgets} limits=${k.usage_limits} usage=${k.current_usage} />`],
      ['Rate limits', (k.rate_limits || []).map((r) => `${r.value} ${r.type} per ${r.unit}`).join(', ')],
      ['Expires', html`<${Time} at=${k.expires_at} />`], ['Rotation policy', k.rotation_policy ? JSON.stringify(k.rotation_policy) : ''],
      ['Created', html`<${Time} at=${k.created_at} />`], ['Last updated', html`<${Time} at=${k.last_updated_at} />`],
    ]} />
    ${!asOf() && html`<div class="actions">
      <button type="button" onClick=${() => actions.setRotating(k)}>Rotate key</button>
      <button type="button" class="danger" onClick=${() => actions.setRevoking(k)}>Revoke key</button>
    </div>`}`}<//>
    ${actions.dialogs}
  <//>`;
}
