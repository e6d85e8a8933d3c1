// Shared pieces of the console's pages: page titles that take focus, API reads, forms whose
// fields show the API's validation errors, dialogs, usage bars, JSON, dates and numbers.
import { html, useState, useEffect, useRef, useId, Fragment } from './lib.js';
import { api, asOf, fieldOf } from './api.js';
import { href, navigate } from './router.js';

// focus.next is set when the reader moves to another page (a link, sign-in): the new page's
// title takes focus, so a screen reader announces it and Tab starts from it. On the first
// load focus stays at the top, where the skip link is.
export const focus = { next: false };

export function Page({ title, children }) {
  const ref = useRef(null);
  useEffect(() => {
    if (focus.next && ref.current) ref.current.focus();
    focus.next = false;
  }, []);
  useEffect(() => {
    document.title = title + ' · Causeway console';
  }, [title]);
  return html`<h1 tabindex="-1" ref=${ref}>${title}</h1>${children}`;
}

// useApi reads path (with query) from the API, again when they change or reload is called.
export function useApi(path, query) {
  const [state, setState] = useState({ loading: !!path, data: null, error: null, headers: null });
  const [tick, setTick] = useState(0);
  const q = JSON.stringify(query || {});
  useEffect(() => {
    if (!path) {
      setState({ loading: false, data: null, error: null, headers: null });
      return undefined;
    }
    let live = true;
    setState((s) => ({ ...s, loading: true, error: null }));
    api(path, { query }).then(
      (r) => live && setState({ loading: false, data: r.data, headers: r.headers, error: null }),
      (e) => live && setState({ loading: false, data: null, headers: null, error: e }),
    );
    return () => {
      live = false;
    };
  }, [path, q, tick]);
  return { ...state, reload: () => setTick((t) => t + 1) };
}

// Loading is announced politely; an error is an alert, announced at once.
export function Loading({ what = '' }) {
  return html`<p class="loading" role="status">Loading${what ? ' ' + what : ''}…</p>`;
}

export function ErrorAlert({ error, prefix = '' }) {
  if (!error) return null;
  const where = error.param ? html` <span class="param">(field <code>${error.param}</code>)</span>` : null;
  const code = error.code ? html` <span class="code">[${error.status ? error.status + ' ' : ''}${error.code}]</span>` : null;
  return html`<div class="alert" role="alert"><strong>${prefix || 'Error'}:</strong> ${error.message}${where}${code}</div>`;
}

// Result shows what a read answered: loading, its error, or children(data).
export function Result({ r, what, children }) {
  if (r.error) return html`<${ErrorAlert} error=${r.error} prefix=${'Could not load ' + (what || 'this')} />`;
  if (r.loading && !r.data) return html`<${Loading} what=${what} />`;
  if (!r.data) return null;
  return children(r.data);
}

// useSubmit runs a form's action with its values and keeps its error, moving focus to the
// field the API named (or the alert when it named none).
export function useSubmit(action) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState(null);
  const running = useRef(false);
  const onSubmit = async (e) => {
    e.preventDefault();
    if (running.current) return; // the button stays focusable while busy: a second press waits
    running.current = true;
    const form = e.currentTarget;
    setBusy(true);
    setError(null);
    try {
      await action(formValues(form), form);
    } catch (err) {
      setError(err);
      setTimeout(() => {
        const field = fieldOf(err) && form.querySelector(`[data-field~="${fieldOf(err)}"]`);
        if (field) field.focus();
      }, 0);
    } finally {
      running.current = false;
      setBusy(false);
    }
  };
  return { busy, error, setError, onSubmit };
}

// formValues reads a form: one string per field, a list for checkbox groups.
function formValues(form) {
  const out = {};
  for (const el of form.elements) {
    if (!el.name || el.disabled) continue;
    if (el.type === 'checkbox') {
      if (el.dataset.group) {
        out[el.name] = out[el.name] || [];
        if (el.checked) out[el.name].push(el.value);
      } else out[el.name] = el.checked;
    } else if (el.type === 'radio') {
      if (el.checked) out[el.name] = el.value;
    } else out[el.name] = el.value;
  }
  return out;
}

// errorFor is the message of err when it is about one of the fields named.
export function errorFor(err, ...names) {
  return err && names.includes(fieldOf(err)) ? err.message : '';
}

// Field is a labelled input, select or textarea; its error and hint are tied to it
// (aria-describedby) and it is marked invalid. errorNames lists the API params it answers for.
// value is where an input starts (defaultValue), and is set again only when it changes (the
// address or the data it came from did): Preact sets a value prop on every render, which
// would wipe what the reader typed when a refusal re-renders the form.
export function Field({ label, name, error, hint, as = 'input', type = 'text', options = [], value, errorNames, ...rest }) {
  const id = 'f' + useId().replace(/[^a-zA-Z0-9_-]/g, '');
  const ids = [hint ? id + '-hint' : '', error ? id + '-error' : ''].filter(Boolean).join(' ') || undefined;
  const common = { id, name, 'aria-invalid': error ? 'true' : undefined, 'aria-describedby': ids, 'data-field': [name, ...(errorNames || [])].join(' ') };
  const input = useRef(null);
  useEffect(() => {
    const el = input.current;
    if (el && value !== undefined && el.value !== String(value ?? '')) el.value = value ?? '';
  }, [value]);
  let control;
  if (as === 'select') {
    control = html`<select ...${common} ...${rest}>
      ${options.map((o) => html`<option value=${o.value} selected=${o.value === value}>${o.label}</option>`)}
    </select>`;
  } else if (as === 'textarea') {
    control = html`<textarea ...${common} spellcheck=${false} ...${rest}>${value ?? ''}</textarea>`;
  } else {
    control = html`<input type=${type} ...${common} defaultValue=${value} ref=${input} ...${rest} />`;
  }
  return html`<div class=${'field' + (error ? ' invalid' : '')}>
    <label for=${id}>${label}</label>
    ${control}
    ${hint && html`<p class="hint" id=${id + '-hint'}>${hint}</p>`}
    ${error && html`<p class="field-error" id=${id + '-error'}><span aria-hidden="true">⚠ </span>${error}</p>`}
  </div>`;
}

// Checkboxes is a group of checkboxes read as one list; checked are those ticked at first
// (defaultChecked, as Field's value).
export function Checkboxes({ legend, name, options, checked = [], hint, error }) {
  return html`<fieldset class=${'checks' + (error ? ' invalid' : '')}>
    <legend>${legend}</legend>
    ${hint && html`<p class="hint">${hint}</p>`}
    <div class="check-grid">
      ${options.map((o, i) => html`<label key=${o}>
        <input type="checkbox" name=${name} value=${o} data-group="1" data-field=${i === 0 ? name : ''} defaultChecked=${checked.includes(o)} /> <code>${o}</code>
      </label>`)}
    </div>
    ${error && html`<p class="field-error"><span aria-hidden="true">⚠ </span>${error}</p>`}
  </fieldset>`;
}

// FormBox is a form with its title, its submit button and its error. In a historical view
// writes are off: the form is replaced by a note saying so.
export function FormBox({ title, submit, sub, children, wide }) {
  if (asOf()) {
    return html`<section class="form-box" aria-label=${title}>
      <h2>${title}</h2><p class="note">Writes are off in a historical view. <a href=${href(location.pathname.replace(/^\/console/, '') || '/', { as_of: null })} onClick=${(e) => { e.preventDefault(); navigate(href(location.pathname.replace(/^\/console/, '') || '/', { as_of: null })); }}>Return to the present</a> to change anything.</p>
    </section>`;
  }
  return html`<section class=${'form-box' + (wide ? ' wide' : '')} aria-label=${title}>
    <h2>${title}</h2>
    <form onSubmit=${sub.onSubmit} novalidate>
      ${children}
      <${ErrorAlert} error=${sub.error} prefix=${sub.error && sub.error.status !== undefined ? 'The API refused this' : 'Check the form'} />
      <div class="actions"><button type="submit" class="primary" aria-disabled=${sub.busy ? 'true' : undefined}>${sub.busy ? 'Working…' : submit}</button></div>
    </form>
  </section>`;
}

const focusable = 'a[href], button:not([disabled]), input:not([disabled]), select:not([disabled]), textarea:not([disabled]), [tabindex]:not([tabindex="-1"])';

// Dialog is a modal dialog: the page behind it is inert, Tab cycles within it, Escape closes
// it, and focus goes back to what opened it.
export function Dialog({ open, title, onClose, children, labelId }) {
  const ref = useRef(null);
  const opener = useRef(null);
  const id = labelId || 'dlg' + useId().replace(/[^a-zA-Z0-9_-]/g, '');
  useEffect(() => {
    const d = ref.current;
    if (!d) return;
    if (open && !d.open) {
      opener.current = document.activeElement;
      d.showModal();
      const first = d.querySelector('[autofocus]') || d.querySelector(focusable);
      if (first) first.focus();
    } else if (!open && d.open) {
      d.close();
    }
  }, [open]);
  useEffect(() => {
    const d = ref.current;
    const closed = () => {
      const back = opener.current;
      opener.current = null;
      if (back && back.isConnected && back !== document.body) back.focus();
      else {
        const h1 = document.querySelector('main h1');
        if (h1) h1.focus();
      }
      if (onClose) onClose();
    };
    d.addEventListener('close', closed);
    return () => d.removeEventListener('close', closed);
  }, [onClose]);
  const trap = (e) => {
    if (e.key !== 'Tab') return;
    const items = [...ref.current.querySelectorAll(focusable)].filter((el) => el.offsetParent !== null || el === document.activeElement);
    if (!items.length) return;
    const first = items[0];
    const last = items[items.length - 1];
    if (e.shiftKey && document.activeElement === first) {
      e.preventDefault();
      last.focus();
    } else if (!e.shiftKey && document.activeElement === last) {
      e.preventDefault();
      first.focus();
    }
  };
  return html`<dialog ref=${ref} aria-labelledby=${id} onKeyDown=${trap}>
    <h2 id=${id}>${title}</h2>
    ${open && children}
  </dialog>`;
}

// Confirm asks before an action that cannot be undone, and shows the API's refusal.
export function Confirm({ open, title, children, confirm, onConfirm, onClose, danger }) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState(null);
  useEffect(() => {
    if (open) setError(null);
  }, [open]);
  const go = async () => {
    setBusy(true);
    setError(null);
    try {
      await onConfirm();
    } catch (e) {
      setError(e);
    } finally {
      setBusy(false);
    }
  };
  return html`<${Dialog} open=${open} title=${title} onClose=${onClose}>
    ${children}
    <${ErrorAlert} error=${error} prefix="The API refused this" />
    <div class="actions">
      <button type="button" class=${danger ? 'danger' : 'primary'} aria-disabled=${busy ? 'true' : undefined} onClick=${busy ? undefined : go}>${busy ? 'Working…' : confirm}</button>
      <button type="button" onClick=${() => onClose()} autofocus>Cancel</button>
    </div>
  <//>`;
}

// SecretOnce shows a secret the API hands out once (an API key created or rotated, a webhook's
// signing secret): with a copy button, and plainly said, never again. Closing it drops the
// secret from the page. label names the secret, kept says how Causeway keeps it.
export function SecretOnce({ secret, title, children, onClose, label = 'API key', noun = 'key',
  kept = 'Causeway keeps only its hash; neither the console nor the API can show it later.' }) {
  const [copied, setCopied] = useState('');
  const input = useRef(null);
  useEffect(() => setCopied(''), [secret]);
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(secret);
      setCopied('Copied to the clipboard.');
    } catch {
      input.current.select();
      setCopied(`The browser did not allow copying: the ${noun} is selected, press Ctrl+C (⌘C) to copy it.`);
    }
  };
  return html`<${Dialog} open=${!!secret} title=${title} onClose=${onClose}>
    <p class="once"><strong>Copy this ${noun} now: you will not see it again.</strong> ${kept}</p>
    <div class="field">
      <label for="secret-value">${label}</label>
      <div class="secret-row">
        <input id="secret-value" class="mono" readonly value=${secret || ''} ref=${input} onFocus=${(e) => e.currentTarget.select()} />
        <button type="button" onClick=${copy}>Copy</button>
      </div>
    </div>
    <p role="status" class="copied">${copied}</p>
    ${children}
    <div class="actions"><button type="button" class="primary" autofocus onClick=${() => onClose()}>I have copied it: close</button></div>
  <//>`;
}

// UsageBar shows usage against a limit, in words and as a bar (a meter to assistive tools).
export function UsageBar({ label, used, limit, unit }) {
  const u = Number(used) || 0;
  const l = Number(limit) || 0;
  const pct = l > 0 ? Math.min(100, (u / l) * 100) : 0;
  const level = pct >= 100 ? ' full' : pct >= 80 ? ' high' : '';
  const text = `${fmtAmount(u, unit)} of ${fmtAmount(l, unit)} (${pct < 1 && u > 0 ? '<1' : Math.round(pct)}%)`;
  return html`<div class="usage">
    <div class="usage-text"><span class="usage-label">${label}</span> <span>${text}</span></div>
    <div class=${'bar' + level} role="meter" aria-label=${label} aria-valuemin="0" aria-valuemax=${l} aria-valuenow=${Math.min(u, l)} aria-valuetext=${text}>
      <span style=${{ width: pct + '%' }}></span>
    </div>
  </div>`;
}

// JSONBlock shows JSON formatted; it can be focused so that the keyboard can scroll it.
export function JSONBlock({ value, label }) {
  const text = typeof value === 'string' ? tryFormat(value) : JSON.stringify(value, null, 2);
  return html`<pre class="json" tabindex="0" aria-label=${label}><code>${text}</code></pre>`;
}

function tryFormat(s) {
  try {
    return JSON.stringify(JSON.parse(s), null, 2);
  } catch {
    return s;
  }
}

// Facts is a list of terms and their values.
export function Facts({ items }) {
  return html`<dl class="facts">${items.filter(Boolean).map(([k, v]) => html`<${Fragment} key=${k}><dt>${k}</dt><dd>${v === null || v === undefined || v === '' ? '—' : v}</dd><//>`)}</dl>`;
}

export function Time({ at }) {
  if (!at) return '—';
  const d = new Date(at);
  if (isNaN(d)) return at;
  return html`<time datetime=${d.toISOString()} title=${d.toISOString()}>${d.toLocaleString()}</time>`;
}

export function Status({ value }) {
  return value ? html`<span class=${'status s-' + String(value).replace(/[^a-z_]/gi, '')}>${value}</span>` : '—';
}

export function fmtNumber(n, digits = 2) {
  if (n === null || n === undefined || n === '') return '—';
  return Number(n).toLocaleString(undefined, { maximumFractionDigits: digits });
}

export function fmtAmount(n, unit) {
  if (unit === 'cost' || unit === 'USD') return '$' + Number(n || 0).toLocaleString(undefined, { minimumFractionDigits: 2, maximumFractionDigits: 4 });
  return fmtNumber(n, 2) + (unit ? ' ' + unit : '');
}

// Pager moves through the pages of a list the API answered (current_page from 0).
export function Pager({ list, page, onPage }) {
  if (!list || list.total === undefined) return null;
  const size = list.page_size || 50;
  const pages = Math.max(1, Math.ceil(list.total / size));
  return html`<nav class="pager" aria-label="Pages">
    <button type="button" disabled=${page <= 0} onClick=${() => onPage(page - 1)}>Previous page</button>
    <span>Page ${page + 1} of ${pages} (${list.total} in all)</span>
    <button type="button" disabled=${page + 1 >= pages} onClick=${() => onPage(page + 1)}>Next page</button>
  </nav>`;
}

// Empty is what a list shows when it has nothing.
export function Empty({ children }) {
  return html`<p class="empty">${children}</p>`;
}

// workspaceOptions turns the workspace list into select options (by id, or by slug).
export function workspaceOptions(list, { by = 'id', any = '' } = {}) {
  const opts = any ? [{ value: '', label: any }] : [];
  for (const w of (list && list.data) || []) opts.push({ value: w[by], label: `${w.name} (${w.slug})` });
  return opts;
}

// parseJSONField parses a JSON field of a form, refusing it as the API would (param = name).
export function parseJSONField(name, text, { optional = false } = {}) {
  if (!text || !text.trim()) {
    if (optional) return undefined;
    const e = new Error(name + ' is required: write a JSON value');
    e.param = name;
    throw e;
  }
  try {
    return JSON.parse(text);
  } catch (err) {
    const e = new Error(name + ' is not valid JSON: ' + err.message);
    e.param = name;
    throw e;
  }
}
