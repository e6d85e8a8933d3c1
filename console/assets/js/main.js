// The console: a client of the admin API under /v1, in the browser, signed in with an API key.
// It can do exactly what that key may do through the API; this file is its frame: the skip
// link, the navigation, the "as of" control that turns every read into a read of the past,
// and the page the address names.
import { html, render, useState, useEffect, useRef } from './lib.js';
import { signedIn, signOut, onSessionChange } from './api.js';
import { Link, href, match, navigate, useLocation } from './router.js';
import { focus, Page } from './ui.js';
import { SignIn } from './pages/signin.js';
import { Overview } from './pages/overview.js';
import { Workspaces, WorkspaceDetail } from './pages/workspaces.js';
import { APIKeys, APIKeyDetail } from './pages/apikeys.js';
import { Policies, RateLimitPolicyDetail, UsageLimitPolicyDetail } from './pages/policies.js';
import { Providers, ProviderDetail, IntegrationDetail } from './pages/providers.js';
import { Configs, ConfigDetail } from './pages/configs.js';
import { Guardrails, GuardrailDetail } from './pages/guardrails.js';
import { Analytics } from './pages/analytics.js';
import { Logs, LogDetail } from './pages/logs.js';
import { Audit, AuditDetail } from './pages/audit.js';
import { Notifications, NotificationDetail } from './pages/notifications.js';
import { Webhooks, WebhookDetail } from './pages/webhooks.js';
import { Prompts, PromptDetail, Partials, PartialDetail, Labels } from './pages/prompts.js';

const nav = [
  ['/workspaces', 'Workspaces'],
  ['/api-keys', 'API keys'],
  ['/policies', 'Policies'],
  ['/providers', 'Providers'],
  ['/configs', 'Configs'],
  ['/guardrails', 'Guardrails'],
  ['/prompts', 'Prompts'],
  ['/analytics', 'Analytics'],
  ['/logs', 'Logs'],
  ['/notifications', 'Notifications'],
  ['/webhooks', 'Webhooks'],
  ['/audit', 'Audit log'],
];

// also lists the pages a navigation entry stands for besides its own path and those under it.
const also = { '/providers': ['/integrations'], '/prompts': ['/labels'] };

const routes = [
  ['/', Overview],
  ['/workspaces', Workspaces],
  ['/workspaces/:id', WorkspaceDetail],
  ['/api-keys', APIKeys],
  ['/api-keys/:id', APIKeyDetail],
  ['/policies', Policies],
  ['/policies/rate-limits/:id', RateLimitPolicyDetail],
  ['/policies/usage-limits/:id', UsageLimitPolicyDetail],
  ['/providers', Providers],
  ['/providers/:slug', ProviderDetail],
  ['/integrations/:slug', IntegrationDetail],
  ['/configs', Configs],
  ['/configs/:slug', ConfigDetail],
  ['/guardrails', Guardrails],
  ['/guardrails/:id', GuardrailDetail],
  ['/prompts', Prompts],
  ['/prompts/partials', Partials], // before /prompts/:id, as the API has it: partials is no prompt's id
  ['/prompts/partials/:id', PartialDetail],
  ['/prompts/:id', PromptDetail],
  ['/labels', Labels],
  ['/notifications', Notifications],
  ['/notifications/:id', NotificationDetail],
  ['/webhooks', Webhooks],
  ['/webhooks/:id', WebhookDetail],
  ['/analytics', Analytics],
  ['/logs', Logs],
  ['/logs/:id', LogDetail],
  ['/audit', Audit],
  ['/audit/:id', AuditDetail],
];

function NotFound() {
  return html`<${Page} title="No such page"><p>The console has no page at this address. <${Link} to="/">Go to the overview</${Link}>.</p><//>`;
}

// toLocalInput writes an instant as a datetime-local value, in the browser's time zone.
function toLocalInput(iso) {
  const d = new Date(iso);
  if (isNaN(d)) return '';
  const p = (n) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())}T${p(d.getHours())}:${p(d.getMinutes())}:${p(d.getSeconds())}`;
}

// AsOf picks the instant every read shows: the page reloads its reads with as_of, and writes
// are off until the present is chosen again.
function AsOf({ loc }) {
  const input = useRef(null);
  const [error, setError] = useState('');
  const go = (e) => {
    e.preventDefault();
    const v = input.current.value;
    const d = new Date(v);
    if (!v || isNaN(d)) {
      setError('Choose a date and time.');
      input.current.focus();
      return;
    }
    if (d > new Date()) {
      setError('Choose a time in the past.');
      input.current.focus();
      return;
    }
    setError('');
    focus.next = true;
    navigate(href(loc.path, { as_of: d.toISOString() }));
  };
  return html`<form class="asof" onSubmit=${go} novalidate>
    <label for="as-of">View as of</label>
    <input id="as-of" ref=${input} type="datetime-local" step="1" key=${loc.asOf || 'now'} defaultValue=${loc.asOf ? toLocalInput(loc.asOf) : ''}
      aria-describedby=${error ? 'as-of-error' : undefined} aria-invalid=${error ? 'true' : undefined} />
    <button type="submit">Show</button>
    ${error && html`<span id="as-of-error" class="field-error" role="alert">${error}</span>`}
  </form>`;
}

function Historical({ loc }) {
  if (!loc.asOf) return null;
  const d = new Date(loc.asOf);
  return html`<div class="historical" role="status">
    <strong>Historical view.</strong> Everything on this page is as it was at
    <time datetime=${loc.asOf}>${isNaN(d) ? loc.asOf : d.toLocaleString()}</time> (read with <code>as_of</code>); writes are off.
    <button type="button" onClick=${() => { focus.next = true; navigate(href(loc.path, { as_of: null })); }}>Return to the present</button>
  </div>`;
}

function skip(e) {
  e.preventDefault();
  const main = document.getElementById('main');
  const h1 = main.querySelector('h1');
  (h1 || main).focus();
}

function Shell() {
  const loc = useLocation();
  const [, setSession] = useState(0);
  useEffect(() => onSessionChange(() => setSession((n) => n + 1)), []);
  const authed = signedIn();
  const found = match(routes, loc.path);
  const Current = found ? found.page : NotFound;
  return html`<a class="skip" href="#main" onClick=${skip}>Skip to content</a>
    <header class=${'top' + (loc.asOf ? ' past' : '')}>
      <${Link} to="/" class="brand">Causeway <span>console</span><//>
      ${authed && html`<nav aria-label="Console">
        <ul>${nav.map(([to, name]) => {
          const here = [to, ...(also[to] || [])].some((p) => loc.path === p || loc.path.startsWith(p + '/'));
          return html`<li key=${to}><${Link} to=${to} aria-current=${here ? 'page' : undefined}>${name}<//></li>`;
        })}</ul>
      </nav>`}
      ${authed && html`<div class="tools"><${AsOf} loc=${loc} />
        <button type="button" class="signout" onClick=${() => { signOut(); navigate(href('/', { as_of: null }), { replace: true }); }}>Sign out</button></div>`}
    </header>
    ${authed && html`<${Historical} loc=${loc} />`}
    <main id="main" tabindex="-1">
      ${authed ? html`<${Current} key=${loc.path + '|' + (loc.asOf || '')} params=${found ? found.params : {}} loc=${loc} />` : html`<${SignIn} />`}
    </main>`;
}

const root = document.getElementById('app');
root.textContent = ''; // the loading note
render(html`<${Shell} />`, root);
