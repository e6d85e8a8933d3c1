// The overview: the last seven days of traffic in figures, and where to go from here.
import { html } from '../lib.js';
import { Link } from '../router.js';
import { Page, useApi, Result, fmtNumber, fmtAmount } from '../ui.js';

export function Overview() {
  const summary = useApi('/analytics/summary');
  return html`<${Page} title="Overview">
    <p>The console works through the admin API with the key you signed in with: it can see and change exactly what that key may.
      Choose a page above, or “View as of” to see any page as it was at an earlier time.</p>
    <section aria-labelledby="traffic">
      <h2 id="traffic">Traffic, last 7 days</h2>
      <${Result} r=${summary} what="the traffic summary">${(d) => {
        const s = d.summary || {};
        return html`<ul class="cards">
          <li><span class="card-label">Requests</span> <span class="card-value">${fmtNumber(s.requests, 0)}</span></li>
          <li><span class="card-label">Tokens</span> <span class="card-value">${fmtNumber(s.total_tokens, 0)}</span></li>
          <li><span class="card-label">Cost</span> <span class="card-value">${fmtAmount(s.cost, 'cost')}</span></li>
          <li><span class="card-label">Average latency</span> <span class="card-value">${fmtNumber(s.avg_latency, 1)} ms</span></li>
          <li><span class="card-label">Errors</span> <span class="card-value">${fmtNumber(s.errors, 0)}</span></li>
        </ul>
        <p><${Link} to="/analytics">Graphs and groups<//> · <${Link} to="/logs">Request logs<//> · <${Link} to="/audit">Audit log<//></p>`;
      }}<//>
    </section>
  <//>`;
}
