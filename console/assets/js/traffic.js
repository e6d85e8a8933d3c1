// The filters that analytics and request logs share (time range, workspace, model, status
// code...), kept in the page's address so that a filtered view can be reloaded and shared.
import { html } from './lib.js';
import { href, navigate } from './router.js';
import { Field, useApi, workspaceOptions } from './ui.js';

export const ranges = [
  { value: '1h', label: 'Last hour', ms: 3600e3 },
  { value: '24h', label: 'Last 24 hours', ms: 86400e3 },
  { value: '7d', label: 'Last 7 days', ms: 7 * 86400e3 },
  { value: '30d', label: 'Last 30 days', ms: 30 * 86400e3 },
  { value: 'custom', label: 'From and to below' },
];

const textFilters = ['workspace_slug', 'models', 'status_code', 'providers', 'trace_id', 'api_key_ids', 'metadata'];

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

// trafficQuery turns the address's filters into the API's query: a preset range ends now, or
// at the as_of instant of a historical view (the API bounds the end by as_of too).
export function trafficQuery(search, defaultRange = '7d') {
  const q = new URLSearchParams(search);
  const out = {};
  const range = q.get('range') || defaultRange;
  if (range === 'custom') {
    out.time_of_generation_min = q.get('from') || '';
    out.time_of_generation_max = q.get('to') || '';
  } else {
    const r = ranges.find((x) => x.value === range) || ranges[2];
    const end = q.get('as_of') ? new Date(q.get('as_of')) : new Date();
    out.time_of_generation_min = new Date(end.getTime() - r.ms).toISOString();
  }
  for (const n of textFilters) out[n] = (q.get(n) || '').trim();
  return out;
}

// TrafficFilters is the filter form; applying it rewrites the address (page 1 again).
export function TrafficFilters({ loc, path, defaultRange = '7d', onRefresh }) {
  const q = new URLSearchParams(loc.search);
  const workspaces = useApi('/workspaces', { page_size: 200 });
  const apply = (e) => {
    e.preventDefault();
    const f = e.currentTarget.elements;
    const params = { range: f.range.value, page: null };
    params.from = f.range.value === 'custom' ? localToISO(f.from.value) : null;
    params.to = f.range.value === 'custom' ? localToISO(f.to.value) : null;
    for (const n of textFilters) if (f[n]) params[n] = f[n].value.trim() || null;
    for (const [k, v] of q) if (!(k in params) && k !== 'as_of') params[k] = v;
    navigate(href(path, params));
  };
  return html`<form class="filters" onSubmit=${apply} aria-label="Filters">
    <${Field} label="Time range" name="range" as="select" value=${q.get('range') || defaultRange} options=${ranges} />
    <${Field} label="From" name="from" type="datetime-local" value=${isoToLocal(q.get('from'))} hint="With “From and to below”" />
    <${Field} label="To" name="to" type="datetime-local" value=${isoToLocal(q.get('to'))} />
    <${Field} label="Workspace" name="workspace_slug" as="select" value=${q.get('workspace_slug') || ''}
      options=${workspaceOptions(workspaces.data, { by: 'slug', any: 'Every workspace' })} />
    <${Field} label="Models" name="models" value=${q.get('models') || ''} hint="Comma-separated" />
    <${Field} label="Status codes" name="status_code" value=${q.get('status_code') || ''} hint="e.g. 200,429" />
    <${Field} label="Providers" name="providers" value=${q.get('providers') || ''} hint="e.g. openai or @slug" />
    <${Field} label="Trace id" name="trace_id" value=${q.get('trace_id') || ''} />
    <div class="actions"><button type="submit" class="primary">Apply filters</button>
      ${onRefresh && html`<button type="button" onClick=${onRefresh}>Refresh</button>`}</div>
  </form>`;
}
