// The admin API as the console calls it: the signed-in key, sent as x-gateway-api-key on every
// call; the "as of" instant, added to every read; and errors in the API's shape, which name
// the field they are about (param).
//
// The key is kept in sessionStorage: this tab only, gone when it closes, never in a cookie
// (so no request carries it unless this code adds it) and never in localStorage.

const storageKey = 'causeway.console.apiKey';
const listeners = new Set();
let farewell = '';

export function signedIn() {
  return !!sessionStorage.getItem(storageKey);
}

export function signIn(key) {
  sessionStorage.setItem(storageKey, key);
  farewell = '';
  listeners.forEach((fn) => fn());
}

// signOut forgets the key; why, when the API refused it, is shown on the sign-in page.
export function signOut(why = '') {
  sessionStorage.removeItem(storageKey);
  farewell = why;
  listeners.forEach((fn) => fn());
}

export function signOutReason() {
  return farewell;
}

export function onSessionChange(fn) {
  listeners.add(fn);
  return () => listeners.delete(fn);
}

// ApiError is an answer of the API that is not a success, or no answer at all (status 0).
export class ApiError extends Error {
  constructor(status, body) {
    const e = (body && body.error) || {};
    super(e.message || (status ? `the API answered ${status}` : 'Causeway could not be reached'));
    this.status = status;
    this.param = e.param || null;
    this.code = e.code || null;
  }
}

// asOf is the instant the console shows, from the page's address (?as_of=), or null for now.
export function asOf() {
  return new URLSearchParams(location.search).get('as_of');
}

// api calls the admin API under /v1. Reads (GET) carry as_of when the console shows the past;
// writes never do. key signs one call with another key (the sign-in form checks the key
// before keeping it).
export async function api(path, { method = 'GET', query, body, key } = {}) {
  const url = new URL('/v1' + path, location.origin);
  for (const [k, v] of Object.entries(query || {})) {
    if (v === undefined || v === null || v === '') continue;
    url.searchParams.set(k, Array.isArray(v) ? v.join(',') : String(v));
  }
  const past = asOf();
  if (method === 'GET' && past && !key) url.searchParams.set('as_of', past);
  const headers = { 'x-gateway-api-key': key || sessionStorage.getItem(storageKey) || '', accept: 'application/json' };
  const init = { method, headers, credentials: 'omit', cache: 'no-store', referrerPolicy: 'no-referrer' };
  if (body !== undefined) {
    headers['content-type'] = 'application/json';
    init.body = JSON.stringify(body);
  }
  if (method !== 'GET' && globalThis.crypto && crypto.randomUUID) {
    headers['idempotency-key'] = crypto.randomUUID(); // a retried submit is answered once
  }
  let res;
  try {
    res = await fetch(url, init);
  } catch (e) {
    throw new ApiError(0, { error: { message: 'Causeway could not be reached (' + e.message + ')' } });
  }
  const text = await res.text();
  let data = null;
  if (text) {
    try {
      data = JSON.parse(text);
    } catch {
      data = null;
    }
  }
  if (!res.ok) {
    const err = new ApiError(res.status, data);
    if (res.status === 401 && !key) signOut('The API refused the key you signed in with (' + err.message + '). Sign in again.');
    throw err;
  }
  return { data, headers: res.headers };
}

// fieldOf is the form field an error is about: the first part of its param
// ("config.strategy.mode" is about "config", "scopes[1]" about "scopes").
export function fieldOf(err) {
  if (!err || !err.param) return '';
  return String(err.param).split(/[.[]/)[0];
}
