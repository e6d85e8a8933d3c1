// The difference between two JSON values (an audit record's before and after), field by
// field: each leaf is named by its path (limits[0].value) and is added, removed or changed.
import { html, useState } from './lib.js';

// flatten maps each leaf of v to its path; empty objects and arrays are leaves.
export function flatten(v, path = '', out = new Map()) {
  if (v !== null && typeof v === 'object' && Object.keys(v).length > 0) {
    if (Array.isArray(v)) v.forEach((x, i) => flatten(x, `${path}[${i}]`, out));
    else for (const k of Object.keys(v)) flatten(v[k], path ? `${path}.${k}` : k, out);
  } else {
    out.set(path || '(value)', v);
  }
  return out;
}

// diff lists every path of before and after, in the order they first appear, with its change.
export function diff(before, after) {
  const a = before === null || before === undefined ? new Map() : flatten(before);
  const b = after === null || after === undefined ? new Map() : flatten(after);
  const paths = [...a.keys()];
  for (const k of b.keys()) if (!a.has(k)) paths.push(k);
  return paths.map((p) => {
    const was = a.has(p);
    const is = b.has(p);
    let kind = 'same';
    if (!was) kind = 'added';
    else if (!is) kind = 'removed';
    else if (JSON.stringify(a.get(p)) !== JSON.stringify(b.get(p))) kind = 'changed';
    return { path: p, kind, before: a.get(p), after: b.get(p), was, is };
  });
}

function show(v, present) {
  if (!present) return html`<span class="absent">(absent)</span>`;
  return html`<code>${JSON.stringify(v)}</code>`;
}

const words = { added: 'added', removed: 'removed', changed: 'changed', same: 'unchanged' };

// Diff shows the changed fields of before → after; the unchanged ones on request.
export function Diff({ before, after }) {
  const [all, setAll] = useState(false);
  const rows = diff(before, after);
  const changed = rows.filter((r) => r.kind !== 'same');
  const shown = all ? rows : changed;
  return html`<div class="diff">
    <p class="diff-summary">${changed.length} field${changed.length === 1 ? '' : 's'} changed${before == null ? ' (created: nothing before)' : ''}${after == null ? ' (deleted: nothing after)' : ''}.</p>
    <label class="inline"><input type="checkbox" checked=${all} onChange=${(e) => setAll(e.currentTarget.checked)} /> Show unchanged fields too</label>
    <table class="diff-table">
      <caption class="visually-hidden">Changes, field by field</caption>
      <thead><tr><th scope="col">Field</th><th scope="col">Change</th><th scope="col">Before</th><th scope="col">After</th></tr></thead>
      <tbody>
        ${shown.map((r) => html`<tr key=${r.path} class=${'d-' + r.kind}>
          <th scope="row"><code>${r.path}</code></th>
          <td><span class=${'badge d-' + r.kind}>${words[r.kind]}</span></td>
          <td class="before">${r.kind === 'added' ? html`<span class="absent">(absent)</span>` : show(r.before, r.was)}</td>
          <td class="after">${r.kind === 'removed' ? html`<span class="absent">(absent)</span>` : show(r.after, r.is)}</td>
        </tr>`)}
      </tbody>
    </table>
  </div>`;
}
