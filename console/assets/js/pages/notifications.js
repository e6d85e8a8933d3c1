// Notifications: what Causeway recorded (budget and rate-limit alerts, key rotation and expiry
// notices, invites) and how each was delivered, by e-mail and to webhooks: each delivery's
// channel, target, status, attempts, last error and next attempt, as the API answers them.
import { html } from '../lib.js';
import { asOf } from '../api.js';
import { Link, href, navigate } from '../router.js';
import { Page, useApi, Result, Field, Facts, Time, Status, Empty, Pager } from '../ui.js';
import { History } from './audit.js';

// notificationKinds are the kinds a notification can be of (domain.NotificationKinds).
export const notificationKinds = ['api_key.expired', 'api_key.expiry_warning', 'api_key.rotated', 'api_key.rotation_upcoming',
  'invite', 'rate_limit.exceeded', 'usage.exhausted', 'usage.threshold_reached'];

// resourcePaths are the console pages of the resources a notification can be about.
const resourcePaths = { api_key: '/api-keys/', workspace: '/workspaces/', rate_limit_policy: '/policies/rate-limits/', usage_limit_policy: '/policies/usage-limits/' };

function Resource({ type, id }) {
  if (!type && !id) return '—';
  const to = resourcePaths[type];
  return html`${type} ${to ? html`<${Link} to=${to + id}><code>${id}</code><//>` : html`<code class="id">${id}</code>`}`;
}

// useWebhookNames names the webhooks deliveries went to (deleted ones too); a key that may not
// list webhooks sees their ids.
function useWebhookNames() {
  const hooks = useApi('/webhooks', { page_size: 1000, status: 'active,archived' });
  const names = {};
  for (const h of (hooks.data && hooks.data.data) || []) names[h.id] = h.name;
  return names;
}

// Target is where a delivery goes: an address, or a webhook, by its name when it is known.
function Target({ d, names }) {
  if (d.channel !== 'webhook') return html`<code>${d.target}</code>`;
  const name = names && names[d.target];
  return html`<${Link} to=${'/webhooks/' + d.target}>${name || html`<code>${d.target}</code>`}<//>`;
}

// DeliveryLines sums a notification's deliveries up in a list, one line each.
function DeliveryLines({ list, names }) {
  if (!list || !list.length) return html`<span class="muted">none planned</span>`;
  return html`<ul class="deliveries">${list.map((d, i) => html`<li key=${i}>
    ${d.channel} <${Target} d=${d} names=${names} /> <${Status} value=${d.status} /> · ${d.attempts} ${d.attempts === 1 ? 'attempt' : 'attempts'}
    ${d.last_error && html` · last error: <span class="error-text">${d.last_error}</span>`}
    ${d.next_attempt_at && d.status === 'pending' && html` · next attempt <${Time} at=${d.next_attempt_at} />`}
  </li>`)}</ul>`;
}

// Deliveries is the whole table of a notification's deliveries.
export function Deliveries({ list, names }) {
  if (!list || !list.length) return html`<${Empty}>No deliveries: nothing was planned yet, or the notification had nowhere to go.<//>`;
  return html`<table class="deliveries-table">
    <caption class="visually-hidden">Deliveries of the notification</caption>
    <thead><tr><th scope="col">Channel</th><th scope="col">Target</th><th scope="col">Status</th><th scope="col">Attempts</th><th scope="col">Last error</th><th scope="col">Next attempt</th><th scope="col">Delivered</th></tr></thead>
    <tbody>${list.map((d, i) => html`<tr key=${i}>
      <th scope="row">${d.channel}</th><td><${Target} d=${d} names=${names} /></td><td><${Status} value=${d.status} /></td><td>${d.attempts}</td>
      <td>${d.last_error || '—'}</td><td><${Time} at=${d.next_attempt_at} /></td><td><${Time} at=${d.delivered_at} /></td>
    </tr>`)}</tbody></table>`;
}

export function Notifications({ loc }) {
  const q = new URLSearchParams(loc.search);
  const kind = q.get('kind') || '';
  const page = Number(q.get('page') || 0);
  const list = useApi('/notifications', { kind, page_size: 50, current_page: page });
  const names = useWebhookNames();
  const apply = (e) => {
    e.preventDefault();
    navigate(href('/notifications', { kind: e.currentTarget.elements.kind.value || null, page: null }));
  };
  const setPage = (n) => navigate(href('/notifications', { kind: kind || null, page: n || null }));
  return html`<${Page} title="Notifications">
    <p class="hint">Budget and rate-limit alerts, key rotation and expiry notices and invites, and how each was delivered: by e-mail, and to the <${Link} to="/webhooks">webhooks<//>.</p>
    <form class="filters" onSubmit=${apply} aria-label="Filter the notifications">
      <${Field} label="Kind" name="kind" as="select" value=${kind} options=${[{ value: '', label: 'Every kind' }, ...notificationKinds.map((k) => ({ value: k, label: k }))]} />
      <div class="actions"><button type="submit" class="primary">Apply filter</button></div>
    </form>
    <${Result} r=${list} what="notifications">${(d) => html`${d.data.length ? html`<table>
      <caption class="visually-hidden">Notifications</caption>
      <thead><tr><th scope="col">Subject</th><th scope="col">Kind</th><th scope="col">About</th><th scope="col">Status</th><th scope="col">Deliveries</th><th scope="col">Recorded</th></tr></thead>
      <tbody>${d.data.map((n) => html`<tr key=${n.id}>
        <th scope="row"><${Link} to=${'/notifications/' + n.id}>${n.subject || n.kind}<//></th><td><code>${n.kind}</code></td>
        <td><${Resource} type=${n.resource_type} id=${n.resource_id} /></td><td><${Status} value=${n.status} /></td>
        <td><${DeliveryLines} list=${n.deliveries} names=${names} /></td><td><${Time} at=${n.created_at} /></td>
      </tr>`)}</tbody></table>` : html`<${Empty}>No notifications${kind ? ' of this kind' : ''}${asOf() ? ' at that time' : ''}.<//>`}
      <${Pager} list=${d} page=${page} onPage=${setPage} />`}<//>
  <//>`;
}

export function NotificationDetail({ params }) {
  const n = useApi('/notifications/' + encodeURIComponent(params.id));
  const names = useWebhookNames();
  return html`<${Page} title=${n.data ? 'Notification: ' + (n.data.subject || n.data.kind) : 'Notification'}>
    <p><${Link} to="/notifications">All notifications<//></p>
    <${Result} r=${n} what="the notification">${(x) => html`<${Facts} items=${[
      ['Subject', x.subject], ['Kind', html`<code>${x.kind}</code>`], ['Id', html`<code>${x.id}</code>`], ['Status', html`<${Status} value=${x.status} />`],
      ['About', html`<${Resource} type=${x.resource_type} id=${x.resource_id} />`],
      ['Workspace', x.workspace_id ? html`<${Link} to=${'/workspaces/' + x.workspace_id}>${x.workspace_id}<//>` : 'organisation'],
      ['Audiences', (x.recipients || []).length ? html`<ul class="tags">${x.recipients.map((r) => html`<li key=${r}><code>${r}</code></li>`)}</ul>` : ''],
      ['Recorded', html`<${Time} at=${x.created_at} />`], ['Deliveries planned', html`<${Time} at=${x.deliveries_planned_at} />`],
    ]} />
    ${x.data && Object.keys(x.data).length > 0 && html`<section aria-labelledby="nd-h"><h2 id="nd-h">Figures</h2>
      <${Facts} items=${Object.entries(x.data).sort(([a], [b]) => a.localeCompare(b)).map(([k, v]) => [k, v])} /></section>`}
    <section aria-labelledby="deliveries-h"><h2 id="deliveries-h">Deliveries</h2><${Deliveries} list=${x.deliveries} names=${names} /></section>
    <${History} type="notification" id=${x.id} />`}<//>
  <//>`;
}
