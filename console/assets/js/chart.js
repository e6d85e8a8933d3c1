// Charts drawn as inline SVG by this file: bars for one series, lines for several. Each chart
// is an image with a summary for assistive tools, and its numbers are one click away as a
// table.
import { html } from './lib.js';

const W = 640;
const H = 220;
const pad = { l: 56, r: 12, t: 12, b: 34 };
const dashes = ['', '6 4', '2 3', '10 3 2 3'];

function niceMax(v) {
  if (v <= 0) return 1;
  const p = Math.pow(10, Math.floor(Math.log10(v)));
  for (const m of [1, 2, 2.5, 5, 10]) if (m * p >= v) return m * p;
  return 10 * p;
}

function label(ts, hourly) {
  const d = new Date(ts);
  return hourly ? d.toLocaleTimeString(undefined, { hour: '2-digit', minute: '2-digit' }) : d.toLocaleDateString(undefined, { month: 'short', day: 'numeric' });
}

// Chart draws points (the API's data_points) for the series named: [{key, name}].
export function Chart({ title, points, series, format = (v) => String(v) }) {
  points = points || [];
  const n = points.length;
  const hourly = n > 1 && new Date(points[1].timestamp) - new Date(points[0].timestamp) < 86400000;
  const values = series.map((s) => points.map((p) => Number(p[s.key]) || 0));
  const max = niceMax(Math.max(0, ...values.flat()));
  const iw = W - pad.l - pad.r;
  const ih = H - pad.t - pad.b;
  const x = (i) => pad.l + (n <= 1 ? iw / 2 : (i * iw) / (n - 1));
  const y = (v) => pad.t + ih - (v / max) * ih;
  const slot = n ? iw / n : iw;
  const total = values[0].reduce((a, b) => a + b, 0);
  const peak = Math.max(0, ...values[0]);
  const peakAt = values[0].indexOf(peak);
  const summary = n
    ? `${title}, ${n} points from ${label(points[0].timestamp, hourly)} to ${label(points[n - 1].timestamp, hourly)}; ` +
      `${series[0].name} peaks at ${format(peak)}${peakAt >= 0 && peak > 0 ? ' on ' + label(points[peakAt].timestamp, hourly) : ''}`
    : `${title}: no data`;
  // Ticks whose labels would repeat (0.5 of a count of 1) are left out.
  const ticks = [0, 0.5, 1].map((f) => f * max).filter((t, i, a) => a.findIndex((u) => format(u) === format(t)) === i);
  const xl = n ? [0, Math.floor((n - 1) / 2), n - 1].filter((v, i, a) => a.indexOf(v) === i) : [];
  return html`<figure class="chart">
    <figcaption>${title}${series.length === 1 ? html` <span class="chart-total">${series[0].total !== undefined ? series[0].total : ''}</span>` : ''}</figcaption>
    <svg viewBox=${`0 0 ${W} ${H}`} role="img" aria-label=${summary} preserveAspectRatio="xMidYMid meet">
      ${ticks.map((t) => html`<g key=${t}><line class="grid" x1=${pad.l} x2=${W - pad.r} y1=${y(t)} y2=${y(t)} /><text class="axis" x=${pad.l - 6} y=${y(t) + 4} text-anchor="end">${format(t)}</text></g>`)}
      ${series.length === 1
        ? values[0].map((v, i) => html`<rect key=${i} class="b0" x=${pad.l + i * slot + slot * 0.15} width=${Math.max(1, slot * 0.7)} y=${y(v)} height=${Math.max(0, pad.t + ih - y(v))}><title>${label(points[i].timestamp, hourly)}: ${format(v)}</title></rect>`)
        : values.map((vals, s) => html`<polyline key=${s} class=${'l' + s} fill="none" stroke-dasharray=${dashes[s % dashes.length]} points=${vals.map((v, i) => `${x(i)},${y(v)}`).join(' ')} />`)}
      ${xl.map((i) => html`<text key=${'x' + i} class="axis" x=${series.length === 1 ? pad.l + i * slot + slot / 2 : x(i)} y=${H - 10}
        text-anchor=${series.length > 1 && n > 1 && i === 0 ? 'start' : series.length > 1 && n > 1 && i === n - 1 ? 'end' : 'middle'}>${label(points[i].timestamp, hourly)}</text>`)}
    </svg>
    ${series.length > 1 && html`<ul class="legend">${series.map((s, i) => html`<li key=${s.key}><svg width="28" height="10" aria-hidden="true"><line class=${'l' + i} x1="0" x2="28" y1="5" y2="5" stroke-dasharray=${dashes[i % dashes.length]} /></svg> ${s.name}</li>`)}</ul>`}
    <details>
      <summary>Data of “${title}”</summary>
      <table class="data">
        <thead><tr><th scope="col">Time</th>${series.map((s) => html`<th scope="col" key=${s.key}>${s.name}</th>`)}</tr></thead>
        <tbody>${points.map((p, i) => html`<tr key=${i}><th scope="row"><time datetime=${p.timestamp}>${new Date(p.timestamp).toLocaleString()}</time></th>${series.map((s, j) => html`<td key=${s.key}>${format(values[j][i])}</td>`)}</tr>`)}</tbody>
      </table>
    </details>
    <p class="visually-hidden">Total of ${series[0].name}: ${format(total)}</p>
  </figure>`;
}
