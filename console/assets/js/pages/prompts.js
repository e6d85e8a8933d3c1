// Prompts: templates of a workspace filed in collections, with the model, parameters and
// managed provider they are sent with; their versions (one is the default, which the gateway
// serves; labels point at others), a render panel that asks the gateway for the body it would
// send, and the partials and labels the templates use. The API checks a template when it is
// saved and names the field it refuses (string, string[1].content), shown beside it.
import { html, useState } from '../lib.js';
import { api, asOf } from '../api.js';
import { Link, href, navigate } from '../router.js';
import { Page, useApi, Result, FormBox, Field, useSubmit, errorFor, Facts, Time, Status, Empty, Confirm, ErrorAlert, JSONBlock, workspaceOptions, parseJSONField, focus } from '../ui.js';
import { History } from './audit.js';

const exampleTemplate = '[\n  { "role": "system", "content": "You are a helpful assistant." },\n  { "role": "user", "content": "{{question}}" }\n]';
const templateHint = 'Mustache: {{variable}}, sections, {{> partial-slug}}. A JSON array of chat messages (role, content), or any other text, sent as one user message.';

// PromptsNav moves between the three pages of prompts.
function PromptsNav({ here }) {
  const items = [['/prompts', 'Prompts and collections'], ['/prompts/partials', 'Partials'], ['/labels', 'Labels']];
  return html`<nav class="subnav" aria-label="Prompts">
    <ul>${items.map(([to, name]) => html`<li key=${to}><${Link} to=${to} aria-current=${here === to ? 'page' : undefined}>${name}<//></li>`)}</ul>
  </nav>`;
}

function listOf(d) {
  return Array.isArray(d) ? d : (d && d.data) || [];
}

function byID(list, id) {
  return listOf(list).find((x) => x.id === id);
}

// usableLabels are the labels a workspace's prompt may use: the organisation's and its own.
function usableLabels(labels, workspaceID) {
  return listOf(labels).filter((l) => l.is_universal || l.workspace_id === workspaceID);
}

function LabelTag({ label }) {
  if (!label) return null;
  return html`<span class="label-tag"><span class="swatch" aria-hidden="true" style=${{ background: label.color_code || '#57606a' }}></span>${label.name}</span>`;
}

// ProviderList offers the managed providers' slugs to a virtual_key field, which also takes
// one typed (a provider made later, or one the key cannot list).
function ProviderList({ id, providers }) {
  return html`<datalist id=${id}>${listOf(providers).map((p) => html`<option key=${p.id} value=${p.slug}>${p.name} (${p.ai_provider_id})</option>`)}</datalist>`;
}

// versionBody reads the version fields of a prompt form, refusing parameters that are not JSON
// as the API would (param parameters).
function versionBody(v) {
  const body = { string: v.string, parameters: parseJSONField('parameters', v.parameters), virtual_key: v.virtual_key.trim() };
  if (v.model.trim()) body.model = v.model.trim();
  if (v.version_description.trim()) body.version_description = v.version_description.trim();
  return body;
}

function VersionFields({ sub, t = {}, providers, idPrefix }) {
  return html`
    <${Field} label="Template" name="string" as="textarea" rows="8" class="mono" value=${t.string ?? exampleTemplate} hint=${templateHint} error=${errorFor(sub.error, 'string')} />
    <div class="row">
      <${Field} label="Model" name="model" value=${t.model || ''} hint="Sent as the body's model." error=${errorFor(sub.error, 'model')} />
      <${Field} label="Managed provider" name="virtual_key" value=${t.virtual_key || ''} list=${idPrefix + '-providers'} autocomplete="off"
        hint="The slug of the managed provider that serves it (@slug)." error=${errorFor(sub.error, 'virtual_key')} />
    </div>
    <${ProviderList} id=${idPrefix + '-providers'} providers=${providers} />
    <${Field} label="Parameters" name="parameters" as="textarea" rows="3" class="mono" value=${JSON.stringify(t.parameters || {}, null, 2)}
      hint="A JSON object of the model's parameters (temperature, max_tokens…); it may be empty." error=${errorFor(sub.error, 'parameters')} />
    <${Field} label="Version description (optional)" name="version_description" error=${errorFor(sub.error, 'version_description')} />`;
}

export function Prompts({ loc }) {
  const q = new URLSearchParams(loc.search);
  const wsFilter = q.get('workspace_id') || '';
  const colFilter = q.get('collection_id') || '';
  const workspaces = useApi('/workspaces', { page_size: 200 });
  const collections = useApi('/collections', { page_size: 1000, workspace_id: wsFilter });
  const prompts = useApi('/prompts', { page_size: 1000, workspace_id: wsFilter, collection_id: colFilter });
  const providers = useApi(asOf() ? null : '/providers', { page_size: 200 });
  const wsName = (id) => {
    const w = byID(workspaces.data, id);
    return w ? w.name : id;
  };
  const colName = (id) => {
    const c = byID(collections.data, id);
    return c ? c.name : id;
  };
  const colOpts = listOf(collections.data).map((c) => ({ value: c.id, label: `${c.name} (${wsName(c.workspace_id)})` }));
  const collectionSub = useSubmit(async (v, form) => {
    const body = { workspace_id: v.workspace_id, name: v.name };
    if (v.slug.trim()) body.slug = v.slug.trim();
    if (v.parent_collection_id) body.parent_collection_id = v.parent_collection_id;
    await api('/collections', { method: 'POST', body });
    form.reset();
    collections.reload();
  });
  const promptSub = useSubmit(async (v) => {
    const body = { name: v.name, collection_id: v.collection_id, ...versionBody(v) };
    if (v.slug.trim()) body.slug = v.slug.trim();
    const { data } = await api('/prompts', { method: 'POST', body });
    focus.next = true;
    navigate(href('/prompts/' + data.id));
  });
  const apply = (e) => {
    e.preventDefault();
    const f = e.currentTarget.elements;
    navigate(href('/prompts', { workspace_id: f.workspace_filter.value || null, collection_id: f.collection_filter.value || null }));
  };
  return html`<${Page} title="Prompts">
    <${PromptsNav} here="/prompts" />
    <form class="filters" onSubmit=${apply} aria-label="Filter the prompts">
      <${Field} label="Workspace" name="workspace_filter" as="select" value=${wsFilter} options=${workspaceOptions(workspaces.data, { any: 'Every workspace I can see' })} />
      <${Field} label="Collection" name="collection_filter" as="select" value=${colFilter} options=${[{ value: '', label: 'Every collection' }, ...colOpts]} />
      <div class="actions"><button type="submit" class="primary">Apply filters</button></div>
    </form>
    <section aria-labelledby="collections-h">
      <h2 id="collections-h">Collections</h2>
      <${Result} r=${collections} what="collections">${(d) => (listOf(d).length ? html`<table>
        <caption class="visually-hidden">Collections</caption>
        <thead><tr><th scope="col">Name</th><th scope="col">Slug</th><th scope="col">Workspace</th><th scope="col">Within</th><th scope="col">Prompts</th><th scope="col">Collections in it</th><th scope="col">Last updated</th></tr></thead>
        <tbody>${listOf(d).map((c) => html`<tr key=${c.id}>
          <th scope="row"><${Link} to="/prompts" params=${{ workspace_id: wsFilter || null, collection_id: c.id }}>${c.name}<span class="visually-hidden">: its prompts</span><//>${c.is_default ? html` <span class="muted">(default)</span>` : ''}</th>
          <td><code>${c.slug}</code></td><td>${wsName(c.workspace_id)}</td><td>${c.parent_collection_id ? colName(c.parent_collection_id) : '—'}</td>
          <td>${c.collection_details.prompts_count}</td><td>${c.collection_details.child_collections_count}</td><td><${Time} at=${c.last_updated_at} /></td>
        </tr>`)}</tbody></table>` : html`<${Empty}>No collections${asOf() ? ' at that time' : ''}: each workspace gets its default one with its first prompt or partial.<//>`)}<//>
    </section>
    <section aria-labelledby="prompts-h">
      <h2 id="prompts-h">${colFilter ? html`Prompts in “${colName(colFilter)}”` : 'Prompts'}</h2>
      ${colFilter && html`<p><${Link} to="/prompts" params=${{ workspace_id: wsFilter || null, collection_id: null }}>Show the prompts of every collection<//></p>`}
      <${Result} r=${prompts} what="prompts">${(d) => (listOf(d).length ? html`<table>
        <caption class="visually-hidden">Prompts</caption>
        <thead><tr><th scope="col">Name</th><th scope="col">Slug</th><th scope="col">Collection</th><th scope="col">Workspace</th><th scope="col">Model</th><th scope="col">Status</th><th scope="col">Last updated</th></tr></thead>
        <tbody>${listOf(d).map((p) => html`<tr key=${p.id}>
          <th scope="row"><${Link} to=${'/prompts/' + p.id}>${p.name}<//></th><td><code>${p.slug}</code></td><td>${colName(p.collection_id)}</td>
          <td>${wsName(p.workspace_id)}</td><td>${p.model || '—'}</td><td><${Status} value=${p.status} /></td><td><${Time} at=${p.last_updated_at} /></td>
        </tr>`)}</tbody></table>` : html`<${Empty}>No prompts${colFilter ? ' in this collection' : ''}${asOf() ? ' at that time' : ''}.<//>`)}<//>
    </section>
    <div class="form-pair">
      <${FormBox} title="Create a prompt" submit="Create prompt" sub=${promptSub}>
        <${Field} label="Name" name="name" required error=${errorFor(promptSub.error, 'name')} />
        <${Field} label="Slug (optional)" name="slug" hint="Names it in paths and in {{> }}; made from the name when left empty." error=${errorFor(promptSub.error, 'slug')} />
        <${Field} label="Collection" name="collection_id" as="select" value=${colFilter} options=${colOpts} hint="Its workspace is the collection's."
          error=${errorFor(promptSub.error, 'collection_id', 'workspace_id')} />
        <${VersionFields} sub=${promptSub} providers=${providers.data} idPrefix="new-prompt" />
      <//>
      <${FormBox} title="Create a collection" submit="Create collection" sub=${collectionSub}>
        <${Field} label="Workspace" name="workspace_id" as="select" value=${wsFilter} options=${workspaceOptions(workspaces.data)} error=${errorFor(collectionSub.error, 'workspace_id')} />
        <${Field} label="Name" name="name" required error=${errorFor(collectionSub.error, 'name')} />
        <${Field} label="Slug (optional)" name="slug" error=${errorFor(collectionSub.error, 'slug')} />
        <${Field} label="Within (optional)" name="parent_collection_id" as="select" options=${[{ value: '', label: 'None: at the top' }, ...colOpts]}
          hint="A collection of the same workspace." error=${errorFor(collectionSub.error, 'parent_collection_id')} />
      <//>
    </div>
  <//>`;
}

// variablesOf lists the variables a template names (outside partials), for the render panel
// to start from: {{name}}, {{{name}}}, {{& name}} and the sections' {{#name}} and {{^name}}.
function variablesOf(template) {
  const out = {};
  const re = /\{\{\{?\s*([#^&]?)\s*([A-Za-z_][\w.-]*)\s*\}?\}\}/g;
  for (const m of String(template || '').matchAll(re)) out[m[2]] = '';
  return out;
}

// contentText is a rendered message's content: a string, or its text parts.
function contentText(c) {
  if (typeof c === 'string') return c;
  if (Array.isArray(c)) return c.map((p) => (p && typeof p.text === 'string' ? p.text : JSON.stringify(p))).join('\n');
  return JSON.stringify(c, null, 2);
}

// RenderPanel asks the gateway for the body a prompt's version makes with the variables given
// (POST /prompts/{id}/render): a refusal (the variables it misses, a partial cycle) shows
// beside the variables, the messages below.
function RenderPanel({ prompt, versions, labels }) {
  const [result, setResult] = useState(null);
  const sub = useSubmit(async (v) => {
    setResult(null);
    const variables = parseJSONField('variables', v.variables);
    const ref = encodeURIComponent(prompt.slug) + (v.version ? '@' + encodeURIComponent(v.version) : '');
    const { data } = await api('/prompts/' + ref + '/render', { method: 'POST', body: { variables } });
    setResult({ body: (data && data.data) || {}, version: v.version });
  });
  if (asOf()) {
    return html`<section class="form-box wide" aria-labelledby="render-h"><h2 id="render-h">Render</h2>
      <p class="note">Rendering uses the prompt as it is now, not as it was: return to the present to render it.</p></section>`;
  }
  const options = [{ value: '', label: `The default version (${prompt.default_version})` }, { value: 'latest', label: 'The latest version' },
    ...listOf(versions).map((x) => ({ value: String(x.prompt_version), label: `Version ${x.prompt_version}` })),
    ...usableLabels(labels, prompt.workspace_id).map((l) => ({ value: l.name, label: `Label ${l.name}` }))];
  const messages = result && Array.isArray(result.body.messages) ? result.body.messages : [];
  return html`<section class="form-box wide" aria-labelledby="render-h">
    <h2 id="render-h">Render</h2>
    <p class="hint">The chat body the gateway makes of the prompt with these variables (<code>POST /v1/prompts/${prompt.slug}/render</code>), without calling a model.</p>
    <form onSubmit=${sub.onSubmit} novalidate>
      <${Field} label="Version" name="version" as="select" options=${options} />
      <${Field} label="Variables" name="variables" as="textarea" rows="5" class="mono" value=${JSON.stringify(variablesOf(prompt.string), null, 2)}
        hint="A JSON object of the template's variables and its partials'." errorNames=${['partials']} error=${errorFor(sub.error, 'variables', 'partials')} />
      <${ErrorAlert} error=${sub.error} prefix="The gateway refused to render it" />
      <div class="actions"><button type="submit" class="primary" aria-disabled=${sub.busy ? 'true' : undefined}>${sub.busy ? 'Rendering…' : 'Render'}</button></div>
    </form>
    <p role="status" class="rendered-status">${result ? `Rendered ${result.version ? 'version ' + result.version : 'the default version'}: ${messages.length} ${messages.length === 1 ? 'message' : 'messages'}${result.body.model ? ' for ' + result.body.model : ''}.` : ''}</p>
    ${result && html`<div class="rendered">
      <h3>Rendered messages</h3>
      <ol class="messages">${messages.map((m, i) => html`<li key=${i} class="message"><span class="role">${m.role}</span><pre class="content">${contentText(m.content)}</pre></li>`)}</ol>
      <details><summary>The whole body</summary><${JSONBlock} value=${result.body} label="The rendered body, as JSON" /></details>
    </div>`}
  </section>`;
}

export function PromptDetail({ params }) {
  const path = '/prompts/' + encodeURIComponent(params.id);
  const p = useApi(path);
  const versions = useApi(path + '/versions');
  const labels = useApi('/labels', { page_size: 1000 });
  const providers = useApi(asOf() ? null : '/providers', { page_size: 200 });
  const [acted, setActed] = useState({ error: null, done: '' });
  const reload = () => {
    p.reload();
    versions.reload();
  };
  const makeDefault = async (n) => {
    setActed({ error: null, done: '' });
    try {
      await api(path + '/makeDefault', { method: 'PUT', body: { version: n } });
      setActed({ error: null, done: `Version ${n} is now the default: the gateway serves it.` });
      reload();
    } catch (e) {
      setActed({ error: e, done: '' });
    }
  };
  const labelSub = useSubmit(async (v) => {
    await api(`${path}/versions/${encodeURIComponent(v.target_version)}`, { method: 'PUT', body: { label_id: v.label_id || null } });
    const l = byID(labels.data, v.label_id);
    setActed({ error: null, done: l ? `Label ${l.name} now points at version ${v.target_version}.` : `Version ${v.target_version} has no label now.` });
    reload();
  });
  const updateSub = useSubmit(async (v, form) => {
    const { data } = await api(path, { method: 'PUT', body: { name: v.name, patch: true, ...versionBody(v) } });
    form.elements.version_description.value = ''; // it described the version just saved
    reload();
    setActed({ error: null, done: `A new version was saved (${data.prompt_version_id}); it is served once it is made the default.` });
  });
  const labelOf = (id) => byID(labels.data, id);
  return html`<${Page} title=${p.data ? 'Prompt ' + p.data.name : 'Prompt'}>
    <${PromptsNav} here="" />
    <${Result} r=${p} what="the prompt">${(x) => {
      const latest = listOf(versions.data)[0];
      const t = latest ? latest.prompt_template : x;
      return html`<p><${Link} to="/prompts" params=${{ collection_id: x.collection_id }}>The prompts of its collection<//></p>
      <${Facts} items=${[
        ['Name', x.name], ['Slug', html`<code>${x.slug}</code>`], ['Id', html`<code>${x.id}</code>`], ['Status', html`<${Status} value=${x.status} />`],
        ['Workspace', html`<${Link} to=${'/workspaces/' + x.workspace_id}>${x.workspace_id}<//>`],
        ['Default version', html`${x.default_version} <span class="muted">(the gateway serves it)</span>`],
        ['Model', x.model], ['Managed provider', x.virtual_key ? html`<code>@${x.virtual_key}</code>` : ''],
        ['Created', html`<${Time} at=${x.created_at} />`], ['Last updated', html`<${Time} at=${x.last_updated_at} />`],
      ]} />
      <div class="two">
        <div><h2>Template (version ${x.prompt_version})</h2><${JSONBlock} value=${x.string} label="The default version's template" /></div>
        <div><h2>Parameters</h2><${JSONBlock} value=${x.parameters} label="The default version's parameters, as JSON" /></div>
      </div>
      <section aria-labelledby="pv-h"><h2 id="pv-h">Versions</h2>
        <${ErrorAlert} error=${acted.error} prefix="The API refused this" />
        <p role="status" class="acted">${acted.done}</p>
        <${Result} r=${versions} what="its versions">${(vs) => html`<table class="versions-table">
          <caption class="visually-hidden">Versions of the prompt, newest first</caption>
          <thead><tr><th scope="col">Version</th><th scope="col">Description</th><th scope="col">Model</th><th scope="col">Provider</th><th scope="col">Label</th><th scope="col">Default</th><th scope="col">Created</th><th scope="col">Template</th>${!asOf() && html`<th scope="col">Actions</th>`}</tr></thead>
          <tbody>${listOf(vs).map((v) => html`<tr key=${v.id} class=${v.is_default ? 'is-default' : ''}>
            <th scope="row">${v.prompt_version}</th><td>${v.prompt_description || '—'}</td><td>${v.prompt_template.model || '—'}</td>
            <td>${v.prompt_template.virtual_key ? html`<code>@${v.prompt_template.virtual_key}</code>` : '—'}</td>
            <td>${v.label_id ? html`<${LabelTag} label=${labelOf(v.label_id) || { name: v.label_id }} />` : '—'}</td>
            <td>${v.is_default ? html`<strong>default</strong>` : 'no'}</td><td><${Time} at=${v.created_at} /></td>
            <td><details><summary>Show<span class="visually-hidden"> the template of version ${v.prompt_version}</span></summary><${JSONBlock} value=${v.prompt_template.string} label=${'The template of version ' + v.prompt_version} /></details></td>
            ${!asOf() && html`<td class="row-actions">${!v.is_default && x.status === 'active' && html`<button type="button" class="small" onClick=${() => makeDefault(v.prompt_version)}>Make default<span class="visually-hidden"> version ${v.prompt_version}</span></button>`}</td>`}
          </tr>`)}</tbody></table>`}<//>
      </section>
      <${RenderPanel} prompt=${x} versions=${versions.data} labels=${labels.data} />
      ${x.status === 'active' && html`<div class="form-pair">
        <${FormBox} title="Save a new version" submit="Save a new version" sub=${updateSub}>
          <p class="hint">Starts from the latest version (${latest ? latest.prompt_version : x.prompt_version}); a new version is served once it is made the default.</p>
          <${Field} label="Name" name="name" value=${x.name} error=${errorFor(updateSub.error, 'name')} />
          <${VersionFields} sub=${updateSub} t=${t} providers=${providers.data} idPrefix="edit-prompt" />
        <//>
        <${FormBox} title="Point a label at a version" submit="Set label" sub=${labelSub}>
          <p class="hint">A label points at one version of the prompt: naming the prompt <code>${x.slug}@label</code> serves it. Manage labels on the <${Link} to="/labels">Labels<//> page.</p>
          <${Field} label="Version" name="target_version" as="select" options=${listOf(versions.data).map((v) => ({ value: String(v.prompt_version), label: `Version ${v.prompt_version}${v.is_default ? ' (default)' : ''}` }))}
            errorNames=${['versionId']} error=${errorFor(labelSub.error, 'versionId')} />
          <${Field} label="Label" name="label_id" as="select" options=${[...usableLabels(labels.data, x.workspace_id).map((l) => ({ value: l.id, label: l.name })), { value: '', label: 'None: take the version’s label away' }]}
            error=${errorFor(labelSub.error, 'label_id')} />
        <//>
      </div>`}
      <${History} key=${x.last_updated_at} type="prompt" id=${x.id} />`;
    }}<//>
  <//>`;
}

export function Partials() {
  const list = useApi('/prompts/partials');
  const workspaces = useApi('/workspaces', { page_size: 200 });
  const wsName = (id) => {
    const w = byID(workspaces.data, id);
    return w ? w.name : id;
  };
  const sub = useSubmit(async (v, form) => {
    const body = { workspace_id: v.workspace_id, name: v.name, string: v.string };
    if (v.slug.trim()) body.slug = v.slug.trim();
    if (v.version_description.trim()) body.version_description = v.version_description.trim();
    await api('/prompts/partials', { method: 'POST', body });
    form.reset();
    list.reload();
  });
  return html`<${Page} title="Prompt partials">
    <${PromptsNav} here="/prompts/partials" />
    <p class="hint">A partial is a piece of template that prompts include as <code>{{> slug}}</code> (or <code>{{> slug@label}}</code>), in its default version.</p>
    <${Result} r=${list} what="partials">${(d) => (listOf(d).length ? html`<table>
      <caption class="visually-hidden">Prompt partials</caption>
      <thead><tr><th scope="col">Name</th><th scope="col">Slug</th><th scope="col">Workspace</th><th scope="col">Status</th><th scope="col">Last updated</th></tr></thead>
      <tbody>${listOf(d).map((x) => html`<tr key=${x.id}>
        <th scope="row"><${Link} to=${'/prompts/partials/' + x.id}>${x.name}<//></th><td><code>${x.slug}</code></td><td>${wsName(x.workspace_id)}</td>
        <td><${Status} value=${x.status} /></td><td><${Time} at=${x.last_updated_at} /></td>
      </tr>`)}</tbody></table>` : html`<${Empty}>No partials${asOf() ? ' at that time' : ''}.<//>`)}<//>
    <${FormBox} title="Create a partial" submit="Create partial" sub=${sub} wide>
      <${Field} label="Workspace" name="workspace_id" as="select" options=${workspaceOptions(workspaces.data)} error=${errorFor(sub.error, 'workspace_id')} />
      <div class="row">
        <${Field} label="Name" name="name" required error=${errorFor(sub.error, 'name')} />
        <${Field} label="Slug (optional)" name="slug" error=${errorFor(sub.error, 'slug')} />
      </div>
      <${Field} label="Template" name="string" as="textarea" rows="4" class="mono" hint="Mustache, as a prompt's: variables, sections, other partials." error=${errorFor(sub.error, 'string')} />
      <${Field} label="Version description (optional)" name="version_description" error=${errorFor(sub.error, 'version_description')} />
    <//>
  <//>`;
}

export function PartialDetail({ params }) {
  const path = '/prompts/partials/' + encodeURIComponent(params.id);
  const p = useApi(path);
  const versions = useApi(path + '/versions');
  const labels = useApi('/labels', { page_size: 1000 });
  const [acted, setActed] = useState({ error: null, done: '' });
  const reload = () => {
    p.reload();
    versions.reload();
  };
  const makeDefault = async (n) => {
    setActed({ error: null, done: '' });
    try {
      await api(path + '/makeDefault', { method: 'PUT', body: { version: Number(n) } });
      setActed({ error: null, done: `Version ${n} is now the default.` });
      reload();
    } catch (e) {
      setActed({ error: e, done: '' });
    }
  };
  const sub = useSubmit(async (v, form) => {
    const body = { name: v.name, string: v.string };
    if (v.version_description.trim()) body.version_description = v.version_description.trim();
    await api(path, { method: 'PUT', body });
    form.elements.version_description.value = '';
    reload();
    setActed({ error: null, done: 'A new version was saved; it is included once it is made the default.' });
  });
  return html`<${Page} title=${p.data ? 'Partial ' + p.data.name : 'Partial'}>
    <${PromptsNav} here="" />
    <p><${Link} to="/prompts/partials">All partials<//></p>
    <${Result} r=${p} what="the partial">${(x) => {
      const latest = listOf(versions.data)[0];
      return html`<${Facts} items=${[
        ['Name', x.name], ['Slug', html`<code>${x.slug}</code>`], ['Included as', html`<code>{{> ${x.slug}}}</code>`], ['Id', html`<code>${x.id}</code>`],
        ['Status', html`<${Status} value=${x.status} />`], ['Workspace', html`<${Link} to=${'/workspaces/' + x.workspace_id}>${x.workspace_id}<//>`],
        ['Default version', x.default_version], ['Created', html`<${Time} at=${x.created_at} />`], ['Last updated', html`<${Time} at=${x.last_updated_at} />`],
      ]} />
      <h2>Template (version ${x.version})</h2>
      <pre class="json template" tabindex="0" aria-label="The default version's template"><code>${x.string}</code></pre>
      <section aria-labelledby="ppv-h"><h2 id="ppv-h">Versions</h2>
        <${ErrorAlert} error=${acted.error} prefix="The API refused this" />
        <p role="status" class="acted">${acted.done}</p>
        <${Result} r=${versions} what="its versions">${(vs) => html`<table class="versions-table">
          <caption class="visually-hidden">Versions of the partial, newest first</caption>
          <thead><tr><th scope="col">Version</th><th scope="col">Description</th><th scope="col">Label</th><th scope="col">Default</th><th scope="col">Created</th><th scope="col">Template</th>${!asOf() && html`<th scope="col">Actions</th>`}</tr></thead>
          <tbody>${listOf(vs).map((v) => html`<tr key=${v.prompt_partial_version_id}>
            <th scope="row">${v.version}</th><td>${v.description || '—'}</td>
            <td>${v.label_id ? html`<${LabelTag} label=${byID(labels.data, v.label_id) || { name: v.label_id }} />` : '—'}</td>
            <td>${v.is_default ? html`<strong>default</strong>` : 'no'}</td><td><${Time} at=${v.created_at} /></td>
            <td><details><summary>Show<span class="visually-hidden"> the template of version ${v.version}</span></summary><pre class="json"><code>${v.string}</code></pre></details></td>
            ${!asOf() && html`<td class="row-actions">${!v.is_default && x.status === 'active' && html`<button type="button" class="small" onClick=${() => makeDefault(v.version)}>Make default<span class="visually-hidden"> version ${v.version}</span></button>`}</td>`}
          </tr>`)}</tbody></table>`}<//>
      </section>
      ${x.status === 'active' && html`<${FormBox} title="Save a new version" submit="Save a new version" sub=${sub} wide>
        <${Field} label="Name" name="name" value=${x.name} error=${errorFor(sub.error, 'name')} />
        <${Field} label="Template" name="string" as="textarea" rows="4" class="mono" value=${latest ? latest.string : x.string} error=${errorFor(sub.error, 'string')} />
        <${Field} label="Version description (optional)" name="version_description" errorNames=${['description']} error=${errorFor(sub.error, 'version_description', 'description')} />
      <//>`}
      <${History} key=${x.last_updated_at} type="prompt_partial" id=${x.id} />`;
    }}<//>
  <//>`;
}

export function Labels() {
  const list = useApi('/labels', { page_size: 1000 });
  const workspaces = useApi('/workspaces', { page_size: 200 });
  const [deleting, setDeleting] = useState(null);
  const wsName = (id) => {
    const w = byID(workspaces.data, id);
    return w ? w.name : id;
  };
  const sub = useSubmit(async (v, form) => {
    const body = { name: v.name };
    if (v.description.trim()) body.description = v.description.trim();
    if (v.color_code.trim()) body.color_code = v.color_code.trim();
    if (v.workspace_id) body.workspace_id = v.workspace_id;
    await api('/labels', { method: 'POST', body });
    form.reset();
    list.reload();
  });
  return html`<${Page} title="Prompt labels">
    <${PromptsNav} here="/labels" />
    <p class="hint">A label points at one version of each prompt or partial (production, staging…); <code>slug@label</code> names that version.</p>
    <${Result} r=${list} what="labels">${(d) => (listOf(d).length ? html`<table>
      <caption class="visually-hidden">Labels</caption>
      <thead><tr><th scope="col">Name</th><th scope="col">Description</th><th scope="col">Colour</th><th scope="col">For</th><th scope="col">Created</th>${!asOf() && html`<th scope="col">Actions</th>`}</tr></thead>
      <tbody>${listOf(d).map((l) => html`<tr key=${l.id}>
        <th scope="row"><${LabelTag} label=${l} /></th><td>${l.description || '—'}</td><td>${l.color_code ? html`<code>${l.color_code}</code>` : '—'}</td>
        <td>${l.is_universal ? 'every workspace' : html`<${Link} to=${'/workspaces/' + l.workspace_id}>${wsName(l.workspace_id)}<//>`}</td><td><${Time} at=${l.created_at} /></td>
        ${!asOf() && html`<td class="row-actions"><button type="button" class="small danger" onClick=${() => setDeleting(l)}>Delete<span class="visually-hidden"> ${l.name}</span></button></td>`}
      </tr>`)}</tbody></table>` : html`<${Empty}>No labels${asOf() ? ' at that time' : ''}.<//>`)}<//>
    <${FormBox} title="Create a label" submit="Create label" sub=${sub}>
      <${Field} label="Name" name="name" required hint="Letters, digits, _ and -; not latest, default or a number." error=${errorFor(sub.error, 'name')} />
      <${Field} label="Description (optional)" name="description" error=${errorFor(sub.error, 'description')} />
      <${Field} label="Colour (optional)" name="color_code" hint="A hex colour, such as #1f8a70." error=${errorFor(sub.error, 'color_code')} />
      <${Field} label="For" name="workspace_id" as="select" options=${workspaceOptions(workspaces.data, { any: 'Every workspace (an organisation label)' })} error=${errorFor(sub.error, 'workspace_id', 'organisation_id')} />
    <//>
    <${Confirm} open=${!!deleting} title=${deleting ? 'Delete the label “' + deleting.name + '”?' : ''} confirm="Delete label" danger onClose=${() => setDeleting(null)}
      onConfirm=${async () => { await api('/labels/' + encodeURIComponent(deleting.id), { method: 'DELETE' }); setDeleting(null); list.reload(); }}>
      <p>Versions it points at lose it, and naming a prompt <code>@${deleting && deleting.name}</code> no longer finds a version.</p>
    <//>
  <//>`;
}
