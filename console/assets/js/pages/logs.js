// Request logs under the filters, and one log with its request and answer bodies as JSON.
import { html, useMemo, useState } from '../lib.js';
import { href, navigate, Link } from '../router.js';
import { Page, useApi, Result, Facts, Time, Empty, Pager, JSONBlock, fmtNumber, fmtAmount } from '../ui.js';
import { TrafficFilters, trafficQuery } from '../traffic.js';

export function Logs({ loc }) {
  const q = new URLSearchParams(loc.search);
  const page = Number(q.get('page') || 0);
  const [tick, setTick] = useState(0);
  const query = useMemo(() => trafficQuery(loc.search), [loc.search, tick]); // a preset range ends when applied or refreshed
  const list = useApi('/logs', { ...query, page_size: 50, current_page: page });
  const setPage = (n) => navigate(href('/logs', { ...Object.fromEntries(q), page: n || null }));
  return html`<${Page} title="Request logs">
    <${TrafficFilters} loc=${loc} path="/logs" onRefresh=${() => setTick((n) => n + 1)} />
    <${Result} r=${list} what="request logs">${(d) => html`${d.data.length ? html`<table>
      <caption class="visually-hidden">Request logs, newest first</caption>
      <thead><tr><th scope="col">When</th><th scope="col">Status</th><th scope="col">Model</th><th scope="col">Provider</th><th scope="col">Endpoint</th><th scope="col">Tokens</th><th scope="col">Cost</th><th scope="col">Latency</th><th scope="col">Trace id</th></tr></thead>
      <tbody>${d.data.map((l) => {
        const m = l.metrics || {};
        return html`<tr key=${l._id}>
          <th scope="row"><${Link} to=${'/logs/' + l._id}><${Time} at=${l.created_at} /><span class="visually-hidden">, open this log</span><//></th>
          <td><span class=${'code-' + String(m.response_status_code).charAt(0)}>${m.response_status_code}</span></td><td>${m.ai_model || '—'}</td>
          <td>${m.provider || m.ai_org || '—'}</td><td>${m.endpoint}</td><td>${fmtNumber(m.total_units, 0)}</td><td>${fmtAmount(m.cost, 'cost')}</td>
          <td>${fmtNumber(m.response_time, 1)} ms</td><td><code class="id">${m.trace_id}</code></td>
        </tr>`;
      })}</tbody></table>` : html`<${Empty}>No requests in this range.<//>`}<${Pager} list=${d} page=${page} onPage=${setPage} />`}<//>
  <//>`;
}

export function LogDetail({ params }) {
  const log = useApi('/logs/' + encodeURIComponent(params.id));
  return html`<${Page} title="Request log">
    <p><${Link} to="/logs">All request logs<//></p>
    <${Result} r=${log} what="the log">${(l) => {
      const m = l.metrics || {};
      const req = l.request || {};
      const res = l.response || {};
      return html`<${Facts} items=${[
        ['Id', html`<code>${l._id}</code>`], ['When', html`<${Time} at=${l.created_at} />`], ['Status', m.response_status_code ?? res.status],
        ['Request', html`${req.method} <code>${req.url}</code>`], ['Model', m.ai_model], ['Provider', m.provider || m.ai_org], ['Endpoint', m.endpoint],
        ['Tokens', `${fmtNumber(m.req_units, 0)} in, ${fmtNumber(m.res_units, 0)} out, ${fmtNumber(m.total_units, 0)} in all`],
        ['Cost', fmtAmount(m.cost, 'cost')], ['Latency', fmtNumber(m.response_time, 1) + ' ms'], ['Cache', m.cache_status],
        ['Retries', m.retry_count], ['Trace id', html`<code>${m.trace_id}</code>`],
        ['API key', m.api_key_id ? html`<${Link} to=${'/api-keys/' + m.api_key_id}><code>${m.api_key_id}</code><//>` : ''],
        ['Workspace', m.workspace_id ? html`<${Link} to=${'/workspaces/' + m.workspace_id}>${m.workspace_slug || m.workspace_id}<//>` : ''], ['Config', m.config_id], ['Metadata', m.metadata && Object.keys(m.metadata).length ? JSON.stringify(m.metadata) : ''],
      ]} />
      <div class="two">
        <section aria-labelledby="req-h"><h2 id="req-h">Request body</h2>${req.body !== undefined ? html`<${JSONBlock} value=${req.body} label="Request body, as JSON" />` : html`<${Empty}>No body kept.<//>`}</section>
        <section aria-labelledby="res-h"><h2 id="res-h">Response body</h2>${res.body !== undefined ? html`<${JSONBlock} value=${res.body} label="Response body, as JSON" />` : html`<${Empty}>No body kept.<//>`}</section>
      </div>
      ${req.gatewayHeaders && html`<section aria-labelledby="hdr-h"><h2 id="hdr-h">Gateway headers</h2><${JSONBlock} value=${req.gatewayHeaders} label="Gateway headers, as JSON" /></section>`}`;
    }}<//>
  <//>`;
}
