// Sign in with an API key (until SSO exists). The key is checked with one read any valid key
// may make (its notifications), then kept in this tab's sessionStorage; the field is a
// password field and the form is gone once signed in, so the key never shows on a page.
import { html, useState, useEffect, useRef } from '../lib.js';
import { api, signIn, signOutReason } from '../api.js';
import { ErrorAlert, focus } from '../ui.js';

export function SignIn() {
  const [error, setError] = useState(null);
  const [busy, setBusy] = useState(false);
  const reason = signOutReason();
  const input = useRef(null);
  useEffect(() => {
    document.title = 'Sign in · Causeway console';
  }, []);
  const submit = async (e) => {
    e.preventDefault();
    const key = input.current.value.trim();
    setError(null);
    if (!key) {
      setError({ message: 'Write an API key to sign in.', param: 'api_key' });
      input.current.focus();
      return;
    }
    setBusy(true);
    try {
      await api('/notifications', { query: { page_size: 1 }, key });
      input.current.value = '';
      focus.next = true;
      signIn(key);
    } catch (err) {
      setBusy(false);
      setError(err.status === 401 ? { message: 'Causeway refused this API key: ' + err.message + '.', code: err.code, status: 401 } : err);
      input.current.focus();
    }
  };
  return html`<div class="signin">
    <h1>Sign in to the Causeway console</h1>
    ${reason && html`<div class="alert" role="alert">${reason}</div>`}
    <form onSubmit=${submit} novalidate aria-describedby="signin-about">
      <div class=${'field' + (error ? ' invalid' : '')}>
        <label for="api-key">API key</label>
        <input id="api-key" ref=${input} type="password" name="api_key" autocomplete="off" autocapitalize="off" spellcheck=${false}
          aria-invalid=${error ? 'true' : undefined} aria-describedby=${'signin-about' + (error ? ' signin-error' : '')} required />
      </div>
      <p class="hint" id="signin-about">An organisation admin key sees the whole organisation; a workspace key, its workspace. The console
        can do exactly what the key may do through the API. The key is kept in this browser tab only (session storage) and forgotten
        when you sign out or close the tab.</p>
      <div id="signin-error"><${ErrorAlert} error=${error} prefix="Not signed in" /></div>
      <div class="actions"><button type="submit" class="primary" disabled=${busy}>${busy ? 'Checking…' : 'Sign in'}</button></div>
    </form>
  </div>`;
}
