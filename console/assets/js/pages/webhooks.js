// Webhooks: endpoints the notifications are posted to, signed as Standard Webhooks says. The
// signing secret is answered by the create and by a rotation only, once each: it is shown in
// the dialog API keys use, and dropped from the page when it closes (no read answers it).
import { html, useState } from '../lib.js';
import { api, asOf } from '../api.js';
import { Link, href, navigate } from '../router.js';
import { Page, useApi, Result, FormBox, Field, Checkboxes, useSubmit, errorFor, Facts, Time, Status, Empty, Confirm, SecretOnce, workspaceOptions, focus } from '../ui.js';
import { notificationKinds } from './notifications.js';
import { History } from './audit.js';

const secretWords = { label: 'Signing secret', noun: 'secret',
  kept: 'Causeway keeps it sealed and no read answers it; neither the console nor the API can show it later. Receivers check each call’s webhook-signature with it.' };

function Kinds({ kinds }) {
  if (!kinds || !kinds.length) return html`<span class="muted">every kind</span>`;
  return html`<ul class="tags">${kinds.map((k) => html`<li key=${k}><code>${k}</code></li>`)}</ul>`;
}

function State({ h }) {
  return h.disabled && h.status === 'active' ? html`<${Status} value="disabled" />` : html`<${Status} value=${h.status} />`;
}

// Disabled is the checkbox of a webhook that receives nothing while it is set.
function Disabled({ checked, error }) {
  return html`<div class=${'field' + (error ? ' invalid' : '')}>
    <label class="inline"><input type="checkbox" name="disabled" data-field="disabled" defaultChecked=${!!checked} /> Disabled: no notification is delivered to it</label>
    ${error && html`<p class="field-error"><span aria-hidden="true">⚠ </span>${error}</p>`}
  </div>`;
}

const kindsHint = 'None ticked: every kind, including kinds added later.';

export function Webhooks() {
  const list = useApi('/webhooks', { page_size: 200 });
  const workspaces = useApi('/workspaces', { page_size: 200 });
  const [once, setOnce] = useState(null);
  const wsName = (id) => {
    const w = workspaces.data && workspaces.data.data.find((x) => x.id === id);
    return w ? w.name : id;
  };
  const sub = useSubmit(async (v, form) => {
    const body = { name: v.name, url: v.url, kinds: v.kinds || [], disabled: !!v.disabled };
    if (v.workspace_id) body.workspace_id = v.workspace_id;
    const { data } = await api('/webhooks', { method: 'POST', body });
    form.reset();
    setOnce({ secret: data.secret, title: 'Webhook “' + data.name + '” created' });
    list.reload();
  });
  return html`<${Page} title="Webhooks">
    <p class="hint">Each <${Link} to="/notifications">notification<//> of a kind a webhook asks for is posted to its URL, signed with its secret (Standard Webhooks), and retried until it is answered 2xx.</p>
    <${Result} r=${list} what="webhooks">${(d) => (d.data.length ? html`<table>
      <caption class="visually-hidden">Webhooks</caption>
      <thead><tr><th scope="col">Name</th><th scope="col">URL</th><th scope="col">For</th><th scope="col">Kinds</th><th scope="col">Status</th><th scope="col">Secret made</th></tr></thead>
      <tbody>${d.data.map((h) => html`<tr key=${h.id}>
        <th scope="row"><${Link} to=${'/webhooks/' + h.id}>${h.name}<//></th><td><code>${h.url}</code></td>
        <td>${h.workspace_id ? html`<${Link} to=${'/workspaces/' + h.workspace_id}>${wsName(h.workspace_id)}<//>` : 'the whole organisation'}</td>
        <td><${Kinds} kinds=${h.kinds} /></td><td><${State} h=${h} /></td><td><${Time} at=${h.secret_rotated_at} /></td>
      </tr>`)}</tbody></table>` : html`<${Empty}>No webhooks${asOf() ? ' at that time' : ''}.<//>`)}<//>
    <${FormBox} title="Create a webhook" submit="Create webhook" sub=${sub} wide>
      <${Field} label="Name" name="name" required error=${errorFor(sub.error, 'name')} />
      <${Field} label="URL" name="url" type="url" required hint="https://…; the egress guard checks it (a private address only with CAUSEWAY_ALLOWED_HOSTS)." error=${errorFor(sub.error, 'url')} />
      <${Field} label="For" name="workspace_id" as="select" options=${workspaceOptions(workspaces.data, { any: 'The whole organisation' })}
        hint="A workspace's webhook hears only that workspace's notifications." error=${errorFor(sub.error, 'workspace_id', 'organisation_id')} />
      <${Checkboxes} legend="Kinds" name="kinds" options=${notificationKinds} hint=${kindsHint} error=${errorFor(sub.error, 'kinds')} />
      <${Disabled} error=${errorFor(sub.error, 'disabled')} />
    <//>
    <${SecretOnce} secret=${once && once.secret} title=${once ? once.title : ''} onClose=${() => setOnce(null)} ...${secretWords} />
  <//>`;
}

export function WebhookDetail({ params }) {
  const path = '/webhooks/' + encodeURIComponent(params.id);
  const h = useApi(path, { status: 'active,archived' }); // a deleted webhook's page still shows it, and its history
  const [rotating, setRotating] = useState(false);
  const [deleting, setDeleting] = useState(false);
  const [once, setOnce] = useState(null);
  const sub = useSubmit(async (v) => {
    await api(path, { method: 'PUT', body: { name: v.name, url: v.url, kinds: v.kinds || [], disabled: !!v.disabled } });
    h.reload();
  });
  return html`<${Page} title=${h.data ? 'Webhook ' + h.data.name : 'Webhook'}>
    <p><${Link} to="/webhooks">All webhooks<//> · <${Link} to="/notifications">Notifications and their deliveries<//></p>
    <${Result} r=${h} what="the webhook">${(w) => html`<${Facts} items=${[
      ['Name', w.name], ['Id', html`<code>${w.id}</code>`], ['URL', html`<code>${w.url}</code>`],
      ['For', w.workspace_id ? html`<${Link} to=${'/workspaces/' + w.workspace_id}>${w.workspace_id}<//>` : 'the whole organisation'],
      ['Kinds', html`<${Kinds} kinds=${w.kinds} />`], ['Status', html`<${State} h=${w} />`],
      ['Signing secret', html`<span class="muted">never shown again; made <${Time} at=${w.secret_rotated_at} /></span>`],
      ['Created', html`<${Time} at=${w.created_at} />`], ['Last updated', html`<${Time} at=${w.last_updated_at} />`],
    ]} />
    ${!asOf() && w.status === 'active' && html`<div class="actions">
      <button type="button" onClick=${() => setRotating(true)}>Rotate secret</button>
      <button type="button" class="danger" onClick=${() => setDeleting(true)}>Delete webhook</button>
    </div>`}
    ${w.status === 'active' && html`<${FormBox} title="Change the webhook" submit="Save changes" sub=${sub} wide>
      <${Field} label="Name" name="name" value=${w.name} error=${errorFor(sub.error, 'name')} />
      <${Field} label="URL" name="url" type="url" value=${w.url} error=${errorFor(sub.error, 'url')} />
      <${Checkboxes} legend="Kinds" name="kinds" options=${notificationKinds} checked=${w.kinds || []} hint=${kindsHint} error=${errorFor(sub.error, 'kinds')} />
      <${Disabled} checked=${w.disabled} error=${errorFor(sub.error, 'disabled')} />
    <//>`}
    <${History} key=${w.last_updated_at + w.secret_rotated_at} type="webhook" id=${w.id} />
    <${Confirm} open=${rotating} title=${'Rotate the secret of “' + w.name + '”?'} confirm="Rotate secret" onClose=${() => setRotating(false)}
      onConfirm=${async () => {
        const { data } = await api(path + '/rotate-secret', { method: 'POST' });
        setRotating(false);
        setOnce({ secret: data.secret, title: 'New signing secret for “' + w.name + '”' });
        h.reload();
      }}>
      <p>Causeway makes a new signing secret and signs every call from now on with it, not the old one: give it to the receiver at once.</p>
    <//>
    <${Confirm} open=${deleting} title=${'Delete “' + w.name + '”?'} confirm="Delete webhook" danger onClose=${() => setDeleting(false)}
      onConfirm=${async () => {
        await api(path, { method: 'DELETE' });
        setDeleting(false);
        focus.next = true;
        navigate(href('/webhooks'));
      }}>
      <p>No notification is delivered to it from now on; its past deliveries stay in the notifications.</p>
    <//>
    <${SecretOnce} secret=${once && once.secret} title=${once ? once.title : ''} onClose=${() => setOnce(null)} ...${secretWords} />`}<//>
  <//>`;
}
