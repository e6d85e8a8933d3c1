// The console's pages are paths under /console/ (real links, the back button works); the
// server answers the page shell for every one of them. The "as of" instant rides along in
// the query (?as_of=), so a historical view survives a reload and can be shared.
import { html, useState, useEffect } from './lib.js';

export const base = '/console';

// href is the address of a console path, keeping the as_of of the current view unless
// params says otherwise (null removes it).
export function href(path, params = {}) {
  const q = new URLSearchParams();
  const current = new URLSearchParams(location.search).get('as_of');
  if (current && !('as_of' in params)) q.set('as_of', current);
  for (const [k, v] of Object.entries(params)) {
    if (v !== null && v !== undefined && v !== '') q.set(k, v);
  }
  const s = q.toString();
  return base + (path === '/' ? '/' : path) + (s ? '?' + s : '');
}

export function navigate(to, { replace = false } = {}) {
  if (replace) history.replaceState(null, '', to);
  else history.pushState(null, '', to);
  dispatchEvent(new Event('console:navigate'));
}

function snapshot() {
  let path = location.pathname.startsWith(base) ? location.pathname.slice(base.length) : '/';
  if (path === '') path = '/';
  if (path.length > 1 && path.endsWith('/')) path = path.slice(0, -1);
  return { path, search: location.search, asOf: new URLSearchParams(location.search).get('as_of') };
}

export function useLocation() {
  const [loc, setLoc] = useState(snapshot);
  useEffect(() => {
    const on = () => setLoc(snapshot());
    addEventListener('popstate', on);
    addEventListener('console:navigate', on);
    return () => {
      removeEventListener('popstate', on);
      removeEventListener('console:navigate', on);
    };
  }, []);
  return loc;
}

// match finds the route whose pattern (":name" segments are parameters) fits path.
export function match(routes, path) {
  const parts = path.split('/').filter(Boolean);
  for (const [pattern, page] of routes) {
    const want = pattern.split('/').filter(Boolean);
    if (want.length !== parts.length) continue;
    const params = {};
    let ok = true;
    for (let i = 0; i < want.length && ok; i++) {
      if (want[i].startsWith(':')) params[want[i].slice(1)] = decodeURIComponent(parts[i]);
      else ok = want[i] === parts[i];
    }
    if (ok) return { page, params };
  }
  return null;
}

// Link is a real link that the console follows without reloading the page.
export function Link({ to, params, children, ...rest }) {
  const target = href(to, params);
  const onClick = (e) => {
    if (e.defaultPrevented || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
    e.preventDefault();
    navigate(target);
  };
  return html`<a href=${target} onClick=${onClick} ...${rest}>${children}</a>`;
}
