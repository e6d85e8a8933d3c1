// Managed providers (virtual keys) and the organisation's integrations. A provider key is
// typed into a password field and sent once; the API never answers it (only whether there is
// one, masked), so no secret shows after creation.
import { html } from '../lib.js';
import { api, asOf } from '../api.js';
import { Link } from '../router.js';
import { Page, useApi, Result, FormBox, Field, useSubmit, errorFor, Facts, Time, Status, Empty, workspaceOptions } from '../ui.js';
import { Budgets } from './workspaces.js';
import { History } from './audit.js';

const aiProviders = ['openai', 'anthropic', 'google', 'azure-openai', 'groq', 'mistral-ai', 'together-ai', 'fireworks-ai', 'deepseek',
  'openrouter', 'ollama', 'vllm', 'cohere'];

function masked(x) {
  return x.has_key ? html`<code>${x.masked_key || '****'}</code>` : html`<span class="muted">none</span>`;
}

export function Providers() {
  const providers = useApi('/providers', { page_size: 200 });
  const integrations = useApi('/integrations', { page_size: 200 });
  const workspaces = useApi('/workspaces', { page_size: 200 });
  const wsOpts = workspaceOptions(workspaces.data);
  const providerSub = useSubmit(async (v, form) => {
    const body = { name: v.name, workspace_id: v.workspace_id, note: v.note || undefined };
    if (v.slug) body.slug = v.slug;
    if (v.integration_id) body.integration_id = v.integration_id;
    else {
      body.ai_provider_id = v.ai_provider_id;
      if (v.key) body.key = v.key;
    }
    if (v.credit_limit) body.usage_limits = { type: v.budget_type || 'cost', credit_limit: Number(v.credit_limit) };
    await api('/providers', { method: 'POST', body });
    form.reset();
    providers.reload();
  });
  const integrationSub = useSubmit(async (v, form) => {
    const body = { name: v.name, ai_provider_id: v.ai_provider_id, description: v.description || undefined };
    if (v.slug) body.slug = v.slug;
    if (v.key) body.key = v.key;
    await api('/integrations', { method: 'POST', body });
    form.reset();
    integrations.reload();
  });
  const enableSub = useSubmit(async (v) => {
    await api(`/integrations/${encodeURIComponent(v.integration)}/workspaces`, { method: 'PUT', body: { workspaces: [{ id: v.workspace, enabled: v.enabled === 'true' }] } });
    integrations.reload();
    providers.reload();
  });
  const integrationOpts = ((integrations.data && integrations.data.data) || []).map((i) => ({ value: i.slug, label: `${i.name} (${i.slug})` }));
  return html`<${Page} title="Providers">
    <section aria-labelledby="prov-h">
      <h2 id="prov-h">Managed providers</h2>
      <p class="hint">Call one with <code>x-gateway-provider: @slug</code>; its key stays in Causeway, sealed.</p>
      <${Result} r=${providers} what="managed providers">${(d) => (d.data.length ? html`<table>
        <caption class="visually-hidden">Managed providers</caption>
        <thead><tr><th scope="col">Name</th><th scope="col">Slug</th><th scope="col">Provider</th><th scope="col">Integration</th><th scope="col">Key</th><th scope="col">Status</th><th scope="col">Budget</th></tr></thead>
        <tbody>${d.data.map((p) => html`<tr key=${p.id}>
          <th scope="row"><${Link} to=${'/providers/' + p.slug}>${p.name}<//></th><td><code>@${p.slug}</code></td><td>${p.ai_provider_id}</td>
          <td>${p.integration_id ? html`<${Link} to=${'/integrations/' + p.integration_id}>${p.integration_id}<//>` : '—'}</td><td>${masked(p)}</td>
          <td><${Status} value=${p.status} /></td><td><${Budgets} limits=${p.usage_limits} /></td>
        </tr>`)}</tbody></table>` : html`<${Empty}>No managed providers${asOf() ? ' at that time' : ''}.<//>`)}<//>
    </section>
    <section aria-labelledby="int-h">
      <h2 id="int-h">Integrations</h2>
      <p class="hint">An organisation's provider account, shared with the workspaces it is enabled for.</p>
      <${Result} r=${integrations} what="integrations">${(d) => (d.data.length ? html`<table>
        <caption class="visually-hidden">Integrations</caption>
        <thead><tr><th scope="col">Name</th><th scope="col">Slug</th><th scope="col">Provider</th><th scope="col">Key</th><th scope="col">Status</th><th scope="col">Created</th></tr></thead>
        <tbody>${d.data.map((i) => html`<tr key=${i.id}>
          <th scope="row"><${Link} to=${'/integrations/' + i.slug}>${i.name}<//></th><td><code>${i.slug}</code></td><td>${i.ai_provider_id}</td>
          <td>${masked(i)}</td><td><${Status} value=${i.status} /></td><td><${Time} at=${i.created_at} /></td>
        </tr>`)}</tbody></table>` : html`<${Empty}>No integrations${asOf() ? ' at that time' : ''}.<//>`)}<//>
    </section>
    <div class="form-pair">
      <${FormBox} title="Add a managed provider" submit="Add provider" sub=${providerSub}>
        <${Field} label="Name" name="name" required error=${errorFor(providerSub.error, 'name')} />
        <${Field} label="Slug (optional)" name="slug" error=${errorFor(providerSub.error, 'slug')} />
        <${Field} label="Workspace" name="workspace_id" as="select" options=${wsOpts} error=${errorFor(providerSub.error, 'workspace_id')} />
        <${Field} label="From integration" name="integration_id" as="select" options=${[{ value: '', label: 'None: its own key below' }, ...integrationOpts]}
          error=${errorFor(providerSub.error, 'integration_id', 'integration_slug')} />
        <${Field} label="Provider" name="ai_provider_id" as="select" options=${aiProviders.map((p) => ({ value: p, label: p }))} hint="When not from an integration."
          error=${errorFor(providerSub.error, 'ai_provider_id')} />
        <${Field} label="Provider key" name="key" type="password" autocomplete="off" hint="Sealed before it is stored; only its last four characters are ever shown again."
          error=${errorFor(providerSub.error, 'key')} />
        <div class="row">
          <${Field} label="Budget type" name="budget_type" as="select" options=${[{ value: 'cost', label: 'Cost (USD)' }, { value: 'tokens', label: 'Tokens' }]} />
          <${Field} label="Credit limit (optional)" name="credit_limit" type="number" min="1" step="any" errorNames=${['usage_limits']} error=${errorFor(providerSub.error, 'usage_limits')} />
        </div>
        <${Field} label="Note (optional)" name="note" error=${errorFor(providerSub.error, 'note')} />
      <//>
      <div>
        <${FormBox} title="Add an integration" submit="Add integration" sub=${integrationSub}>
          <${Field} label="Name" name="name" required error=${errorFor(integrationSub.error, 'name')} />
          <${Field} label="Slug (optional)" name="slug" error=${errorFor(integrationSub.error, 'slug')} />
          <${Field} label="Provider" name="ai_provider_id" as="select" options=${aiProviders.map((p) => ({ value: p, label: p }))} error=${errorFor(integrationSub.error, 'ai_provider_id')} />
          <${Field} label="Provider key" name="key" type="password" autocomplete="off" hint="Sealed before it is stored; only its last four characters are ever shown again." error=${errorFor(integrationSub.error, 'key')} />
          <${Field} label="Description (optional)" name="description" error=${errorFor(integrationSub.error, 'description')} />
        <//>
        <${FormBox} title="Enable an integration for a workspace" submit="Save" sub=${enableSub}>
          <${Field} label="Integration" name="integration" as="select" options=${integrationOpts} errorNames=${['slug']} error=${errorFor(enableSub.error, 'slug')} />
          <${Field} label="Workspace" name="workspace" as="select" options=${wsOpts} errorNames=${['workspaces']} error=${errorFor(enableSub.error, 'workspaces', 'id')} />
          <${Field} label="Access" name="enabled" as="select" options=${[{ value: 'true', label: 'Enabled' }, { value: 'false', label: 'Disabled' }]} />
        <//>
      </div>
    </div>
  <//>`;
}

export function ProviderDetail({ params }) {
  const p = useApi('/providers/' + encodeURIComponent(params.slug));
  return html`<${Page} title=${p.data ? 'Provider ' + p.data.name : 'Provider'}>
    <p><${Link} to="/providers">All providers<//></p>
    <${Result} r=${p} what="the provider">${(d) => html`<${Facts} items=${[
      ['Name', d.name], ['Slug', html`<code>@${d.slug}</code>`], ['Id', html`<code>${d.id}</code>`], ['Provider', d.ai_provider_id],
      ['Integration', d.integration_id], ['Key', masked(d)], ['Status', html`<${Status} value=${d.status} />`],
      ['Workspace', html`<${Link} to=${'/workspaces/' + d.workspace_id}>${d.workspace_id}<//>`], ['Budget', html`<${Budgets} limits=${d.usage_limits} />`],
      ['Note', d.note], ['Expires', html`<${Time} at=${d.expires_at} />`], ['Created', html`<${Time} at=${d.created_at} />`],
    ]} />
    <${History} type="provider" id=${d.id} />`}<//>
  <//>`;
}

export function IntegrationDetail({ params }) {
  const i = useApi('/integrations/' + encodeURIComponent(params.slug));
  const ws = useApi('/integrations/' + encodeURIComponent(params.slug) + '/workspaces');
  return html`<${Page} title=${i.data ? 'Integration ' + i.data.name : 'Integration'}>
    <p><${Link} to="/providers">All providers and integrations<//></p>
    <${Result} r=${i} what="the integration">${(d) => html`<${Facts} items=${[
      ['Name', d.name], ['Slug', html`<code>${d.slug}</code>`], ['Id', html`<code>${d.id}</code>`], ['Provider', d.ai_provider_id], ['Key', masked(d)],
      ['Status', html`<${Status} value=${d.status} />`], ['Description', d.description], ['Enabled workspaces', d.workspace_count],
      ['Created', html`<${Time} at=${d.created_at} />`], ['Last updated', html`<${Time} at=${d.last_updated_at} />`],
    ]} />
    <section aria-labelledby="iw-h"><h2 id="iw-h">Workspaces</h2>
      <${Result} r=${ws} what="its workspaces">${(w) => ((w.workspaces || w.data || []).length ? html`<ul>${(w.workspaces || w.data).map((x) => html`<li key=${x.id}>
        <${Link} to=${'/workspaces/' + x.id}>${x.id}<//>: ${x.enabled ? 'enabled' : 'disabled'}</li>`)}</ul>` : html`<${Empty}>Not enabled for any workspace.<//>`)}<//>
    </section>
    <${History} type="integration" id=${d.id} />`}<//>
  <//>`;
}
