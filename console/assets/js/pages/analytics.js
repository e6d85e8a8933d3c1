// Analytics: graphs over time and groups (by model, provider, status...), under the filters.
import { html, useMemo, useState } from '../lib.js';
import { href, navigate } from '../router.js';
import { Page, useApi, Result, Field, fmtNumber, fmtAmount, Empty } from '../ui.js';
import { Chart } from '../chart.js';
import { TrafficFilters, trafficQuery } from '../traffic.js';

const graphs = [
  { path: 'requests', title: 'Requests', series: [{ key: 'total', name: 'requests' }], format: (v) => fmtNumber(v, 0) },
  { path: 'tokens', title: 'Tokens', series: [{ key: 'total', name: 'tokens' }], format: (v) => fmtNumber(v, 0) },
  { path: 'cost', title: 'Cost (USD)', series: [{ key: 'total', name: 'cost' }], format: (v) => fmtAmount(v, 'cost') },
  { path: 'latency', title: 'Latency (ms)', series: [{ key: 'avg', name: 'average' }, { key: 'p50', name: 'median' }, { key: 'p99', name: '99th percentile' }], format: (v) => fmtNumber(v, 1) },
  { path: 'errors', title: 'Errors', series: [{ key: 'total', name: 'errors' }], format: (v) => fmtNumber(v, 0) },
];

const groupings = ['model', 'ai_service', 'provider', 'status_code', 'api_key', 'workspace', 'config'];
const columns = ['total_tokens', 'cost', 'avg_latency', 'p95_latency', 'success_rate', 'error_count', 'last_seen'];

function Graph({ g, query }) {
  const r = useApi('/analytics/graphs/' + g.path, query);
  return html`<${Result} r=${r} what=${g.title.toLowerCase()}>${(d) => {
    const series = g.series.map((s, i) => (i === 0 ? { ...s, total: d.summary && d.summary.total !== undefined ? g.format(d.summary.total) : undefined } : s));
    return html`<${Chart} title=${g.title} points=${d.data_points} series=${series} format=${g.format} />`;
  }}<//>`;
}

function cell(col, v) {
  if (col === 'cost') return fmtAmount(v, 'cost');
  if (col === 'success_rate') return v === undefined ? '—' : fmtNumber(v * 100, 1) + '%';
  if (col.endsWith('latency')) return fmtNumber(v, 1) + ' ms';
  if (col === 'last_seen') return v ? new Date(v).toLocaleString() : '—';
  return fmtNumber(v, 2);
}

export function Analytics({ loc }) {
  // A preset range ends at the time the filters were applied, not at each render.
  const [tick, setTick] = useState(0);
  const query = useMemo(() => trafficQuery(loc.search), [loc.search, tick]);
  const q = new URLSearchParams(loc.search);
  const by = q.get('group_by') || 'model';
  const summary = useApi('/analytics/summary', query);
  const groups = useApi('/analytics/groups/' + by, { ...query, columns: columns.join(','), page_size: 50 });
  return html`<${Page} title="Analytics">
    <${TrafficFilters} loc=${loc} path="/analytics" onRefresh=${() => setTick((n) => n + 1)} />
    <${Result} r=${summary} what="the summary">${(d) => {
      const s = d.summary || {};
      return html`<ul class="cards" aria-label="Summary">
        <li><span class="card-label">Requests</span> <span class="card-value" id="sum-requests">${fmtNumber(s.requests, 0)}</span></li>
        <li><span class="card-label">Tokens</span> <span class="card-value">${fmtNumber(s.total_tokens, 0)}</span></li>
        <li><span class="card-label">Cost</span> <span class="card-value">${fmtAmount(s.cost, 'cost')}</span></li>
        <li><span class="card-label">Average latency</span> <span class="card-value">${fmtNumber(s.avg_latency, 1)} ms</span></li>
        <li><span class="card-label">Success rate</span> <span class="card-value">${s.success_rate === undefined ? '—' : fmtNumber(s.success_rate * 100, 1) + '%'}</span></li>
      </ul>`;
    }}<//>
    <section aria-labelledby="graphs-h"><h2 id="graphs-h">Over time</h2>
      <div class="charts">${graphs.map((g) => html`<${Graph} key=${g.path} g=${g} query=${query} />`)}</div>
    </section>
    <section aria-labelledby="groups-h"><h2 id="groups-h">Groups</h2>
      <form class="filters" onSubmit=${(e) => e.preventDefault()}>
        <${Field} label="Group by" name="group_by" as="select" value=${by} options=${groupings.map((g) => ({ value: g, label: g }))}
          onChange=${(e) => navigate(href('/analytics', { ...Object.fromEntries(q), group_by: e.currentTarget.value }), { replace: true })} />
      </form>
      <${Result} r=${groups} what="the groups">${(d) => (d.data.length ? html`<table>
        <caption class="visually-hidden">Traffic grouped by ${by}</caption>
        <thead><tr><th scope="col">${by}</th><th scope="col">Requests</th>${columns.map((c) => html`<th scope="col" key=${c}>${c.replace(/_/g, ' ')}</th>`)}</tr></thead>
        <tbody>${d.data.map((row, i) => html`<tr key=${i}>
          <th scope="row">${String(row[by] ?? row[Object.keys(row).find((k) => !['object', 'requests', ...columns].includes(k))] ?? '—') || '(none)'}</th>
          <td>${fmtNumber(row.requests, 0)}</td>${columns.map((c) => html`<td key=${c}>${cell(c, row[c])}</td>`)}
        </tr>`)}</tbody></table>` : html`<${Empty}>No traffic in this range.<//>`)}<//>
    </section>
  <//>`;
}
