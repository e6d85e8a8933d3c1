// Workspaces and their members.
import { html, useState } from '../lib.js';
import { api, asOf } from '../api.js';
import { Link } from '../router.js';
import { Page, useApi, Result, FormBox, Field, useSubmit, errorFor, Facts, Time, Status, UsageBar, Empty, Confirm, ErrorAlert, Dialog } from '../ui.js';

// Budgets shows a resource's usage limits against its current usage, or says usage is not
// kept in history.
export function Budgets({ limits, usage, label = 'Budget' }) {
  const list = (Array.isArray(limits) ? limits : limits ? [limits] : []).filter(Boolean);
  if (!list.length) return html`<span class="muted">No budget</span>`;
  if (asOf()) return html`<span class="muted">${list.map((l) => `${l.credit_limit} ${l.type}`).join(', ')} (usage is shown for the present only)</span>`;
  return list.map((l, i) => html`<${UsageBar} key=${i} label=${`${label} (${l.type})`} used=${l.current_usage ?? usage ?? 0} limit=${l.credit_limit} unit=${l.type} />`);
}

export function Workspaces() {
  const list = useApi('/workspaces', { page_size: 200 });
  const sub = useSubmit(async (v, form) => {
    const res = await api('/workspaces', { method: 'POST', body: { name: v.name, description: v.description || undefined } });
    form.reset();
    list.reload();
    return res;
  });
  return html`<${Page} title="Workspaces">
    <${Result} r=${list} what="workspaces">${(d) => (d.data.length ? html`<table>
      <caption class="visually-hidden">Workspaces</caption>
      <thead><tr><th scope="col">Name</th><th scope="col">Slug</th><th scope="col">Status</th><th scope="col">Budget</th><th scope="col">Created</th></tr></thead>
      <tbody>${d.data.map((w) => html`<tr key=${w.id}>
        <th scope="row"><${Link} to=${'/workspaces/' + w.id}>${w.name}<//></th>
        <td><code>${w.slug}</code></td><td><${Status} value=${w.status} /></td>
        <td><${Budgets} limits=${w.usage_limits} usage=${w.current_usage} /></td>
        <td><${Time} at=${w.created_at} /></td>
      </tr>`)}</tbody></table>` : html`<${Empty}>No workspaces${asOf() ? ' at that time' : ''}.<//>`)}<//>
    <${FormBox} title="Create a workspace" submit="Create workspace" sub=${sub}>
      <${Field} label="Name" name="name" required error=${errorFor(sub.error, 'name')} />
      <${Field} label="Description" name="description" error=${errorFor(sub.error, 'description')} />
    <//>
  <//>`;
}

// CachePurge empties the workspace's answer cache, one namespace at a time, after a dialog
// that asks for the namespace (empty: the default one) and says what a purge does.
function CachePurge({ workspaceID }) {
  const [open, setOpen] = useState(false);
  const [done, setDone] = useState(null);
  const sub = useSubmit(async (v) => {
    const { data } = await api(`/workspaces/${encodeURIComponent(workspaceID)}/cache`, { method: 'DELETE', query: { namespace: v.namespace.trim() } });
    setOpen(false);
    setDone(data);
  });
  const close = () => {
    setOpen(false);
    sub.setError(null);
  };
  return html`<section aria-labelledby="cache-h">
    <h2 id="cache-h">Answer cache</h2>
    <p class="hint">Answers stored for this workspace's requests whose config turns the cache on, by namespace (<code>x-gateway-cache-namespace</code>). A purge removes them on every instance; the next such request calls its provider.</p>
    ${asOf() ? html`<p class="note">Writes are off in a historical view: return to the present to purge the cache.</p>`
      : html`<div class="actions"><button type="button" class="danger" onClick=${() => { setDone(null); setOpen(true); }}>Purge answer cache</button></div>`}
    <p role="status" class="purged">${done && `Purged ${done.deleted} ${done.deleted === 1 ? 'entry' : 'entries'} from ${done.namespace ? 'the namespace “' + done.namespace + '”' : 'the default namespace'}.`}</p>
    <${Dialog} open=${open} title="Purge the answer cache?" onClose=${close}>
      <form onSubmit=${sub.onSubmit} novalidate>
        <p>Every cached answer of this workspace in the namespace below is removed; this cannot be undone.</p>
        <${Field} label="Namespace (optional)" name="namespace" autocomplete="off" hint="Empty: the default namespace, of the requests that send no x-gateway-cache-namespace."
          error=${errorFor(sub.error, 'namespace')} />
        <${ErrorAlert} error=${sub.error} prefix="The API refused this" />
        <div class="actions">
          <button type="submit" class="danger" aria-disabled=${sub.busy ? 'true' : undefined}>${sub.busy ? 'Working…' : 'Purge'}</button>
          <button type="button" onClick=${close}>Cancel</button>
        </div>
      </form>
    <//>
  </section>`;
}

const roles = [{ value: 'member', label: 'Member' }, { value: 'manager', label: 'Manager' }, { value: 'admin', label: 'Admin' }];

export function WorkspaceDetail({ params }) {
  const ws = useApi('/workspaces/' + encodeURIComponent(params.id));
  const members = useApi('/workspaces/' + encodeURIComponent(params.id) + '/users', { page_size: 200 });
  const users = useApi(asOf() ? null : '/users', { page_size: 200 });
  const [removing, setRemoving] = useState(null);
  const sub = useSubmit(async (v) => {
    await api(`/workspaces/${encodeURIComponent(params.id)}/users`, { method: 'POST', body: { users: [{ id: v.users, role: v.role }] } });
    members.reload();
  });
  const title = ws.data ? 'Workspace ' + ws.data.name : 'Workspace';
  return html`<${Page} title=${title}>
    <p><${Link} to="/workspaces">All workspaces<//> · <${Link} to="/audit" params=${{ resource_type: 'workspace', resource_id: params.id }}>Its history in the audit log<//></p>
    <${Result} r=${ws} what="the workspace">${(w) => html`<${Facts} items=${[
      ['Name', w.name], ['Slug', html`<code>${w.slug}</code>`], ['Id', html`<code>${w.id}</code>`], ['Status', html`<${Status} value=${w.status} />`],
      ['Description', w.description], ['Budget', html`<${Budgets} limits=${w.usage_limits} usage=${w.current_usage} />`],
      ['Rate limits', (w.rate_limits || []).map((r) => `${r.value} ${r.type} per ${r.unit}`).join(', ')],
      ['Created', html`<${Time} at=${w.created_at} />`], ['Last updated', html`<${Time} at=${w.last_updated_at} />`],
    ]} />`}<//>
    <section aria-labelledby="members">
      <h2 id="members">Members</h2>
      <${Result} r=${members} what="the members">${(d) => (d.data.length ? html`<table>
        <caption class="visually-hidden">Members of the workspace</caption>
        <thead><tr><th scope="col">Name</th><th scope="col">Email</th><th scope="col">Role</th><th scope="col">Organisation role</th>${!asOf() && html`<th scope="col">Actions</th>`}</tr></thead>
        <tbody>${d.data.map((m) => html`<tr key=${m.id}>
          <th scope="row">${[m.first_name, m.last_name].filter(Boolean).join(' ') || '—'}</th><td>${m.email}</td><td>${m.role}</td><td>${m.org_role}</td>
          ${!asOf() && html`<td><button type="button" class="small" onClick=${() => setRemoving(m)}>Remove<span class="visually-hidden"> ${m.email}</span></button></td>`}
        </tr>`)}</tbody></table>` : html`<${Empty}>No members.<//>`)}<//>
    </section>
    <${CachePurge} workspaceID=${params.id} />
    <${FormBox} title="Add a member" submit="Add member" sub=${sub}>
      ${users.error && html`<${ErrorAlert} error=${users.error} prefix="Could not list the organisation's users" />`}
      <${Field} label="User" name="users" as="select" errorNames=${['id']} error=${errorFor(sub.error, 'users', 'id')}
        options=${((users.data && users.data.data) || []).map((u) => ({ value: u.id, label: `${u.email} (${u.role})` }))} />
      <${Field} label="Role in the workspace" name="role" as="select" options=${roles} error=${errorFor(sub.error, 'role')} />
    <//>
    <${Confirm} open=${!!removing} title="Remove the member?" confirm="Remove" danger onClose=${() => setRemoving(null)}
      onConfirm=${async () => { await api(`/workspaces/${encodeURIComponent(params.id)}/users/${removing.id}`, { method: 'DELETE' }); setRemoving(null); members.reload(); }}>
      <p>${removing && removing.email} will no longer be a member of this workspace.</p>
    <//>
  <//>`;
}
