// Rate-limit and usage-limit policies. Usage-limit policies show each entity's usage in the
// current period against the limit (the API counts it; rate-limit windows are not read back
// by the API, so their policies show their limits only).
import { html } from '../lib.js';
import { api, asOf } from '../api.js';
import { Link } from '../router.js';
import { Page, useApi, Result, FormBox, Field, useSubmit, errorFor, Facts, Time, Status, Empty, UsageBar, workspaceOptions } from '../ui.js';
import { History } from './audit.js';

const units = [{ value: 'rpm', label: 'per minute (rpm)' }, { value: 'rph', label: 'per hour (rph)' }, { value: 'rpd', label: 'per day (rpd)' }, { value: 'rpw', label: 'per week (rpw)' }];
const unitWords = { rpm: 'minute', rph: 'hour', rpd: 'day', rpw: 'week' };

// parseConditions reads "key=value" lines; parseGroupBy, keys separated by commas or spaces.
function parseConditions(text) {
  return String(text || '').split('\n').map((l) => l.trim()).filter(Boolean).map((l) => {
    const i = l.indexOf('=');
    return i < 0 ? { key: l, value: '' } : { key: l.slice(0, i).trim(), value: l.slice(i + 1).trim() };
  });
}

function parseGroupBy(text) {
  return String(text || '').split(/[\s,]+/).filter(Boolean).map((key) => ({ key }));
}

function conditionsText(p) {
  return (p.conditions || []).map((c) => `${c.key} = ${c.value}`).join('; ') || '—';
}

function number(v) {
  return v === '' || v === undefined ? undefined : Number(v);
}

// entityLabel names an entity's value key for a reader: an API key by its name when the
// signed-in key may list keys ("api_key:<id>,metadata._user:ann" reads "key “app”, _user ann").
function entityLabel(valueKey, keys) {
  if (!valueKey) return 'all traffic';
  return valueKey.split(',').map((part) => {
    const [k, v] = [part.slice(0, part.indexOf(':')), part.slice(part.indexOf(':') + 1)];
    if (k === 'api_key') {
      const found = keys && keys.data && keys.data.find((x) => x.id === v);
      return found ? `key “${found.name}”` : `key ${v.slice(0, 8)}`;
    }
    return `${k.replace(/^metadata\./, '')} ${v}`;
  }).join(', ');
}

// PolicyUsage lists a usage-limit policy's entities with their usage against its limit.
export function PolicyUsage({ policy, keys }) {
  const entities = useApi(asOf() ? null : `/policies/usage-limits/${policy.id}/entities`, { page_size: 100 });
  if (asOf()) return html`<span class="muted">Usage is shown for the present only.</span>`;
  return html`<${Result} r=${entities} what="usage">${(d) => (d.data.length
    ? d.data.map((en) => html`<${UsageBar} key=${en.id} label=${entityLabel(en.value_key, keys)} used=${en.current_usage} limit=${policy.credit_limit} unit=${policy.type} />`)
    : html`<span class="muted">No usage in this period yet.</span>`)}<//>`;
}

const conditionsHint = 'One per line, key=value: api_key, organisation_id, workspace_id, endpoint_type or metadata.<field>.';
const groupHint = 'Keys separated by commas: api_key, organisation_id, workspace_id or metadata.<field>. Each value is counted apart.';

export function Policies() {
  const rate = useApi('/policies/rate-limits', { page_size: 200 });
  const usage = useApi('/policies/usage-limits', { page_size: 200 });
  const workspaces = useApi('/workspaces', { page_size: 200 });
  const keys = useApi(asOf() ? null : '/api-keys', { page_size: 200 }); // names for the usage bars, when the key may list keys
  const rateSub = useSubmit(async (v, form) => {
    await api('/policies/rate-limits', { method: 'POST', body: { name: v.name || undefined, workspace_id: v.workspace_id, type: v.type, unit: v.unit,
      value: number(v.value), conditions: parseConditions(v.conditions), group_by: parseGroupBy(v.group_by) } });
    form.reset();
    rate.reload();
  });
  const usageSub = useSubmit(async (v, form) => {
    await api('/policies/usage-limits', { method: 'POST', body: { name: v.name || undefined, workspace_id: v.workspace_id, type: v.type,
      credit_limit: number(v.credit_limit), alert_threshold: number(v.alert_threshold), periodic_reset: v.periodic_reset || undefined,
      conditions: parseConditions(v.conditions), group_by: parseGroupBy(v.group_by) } });
    form.reset();
    usage.reload();
  });
  const wsOpts = workspaceOptions(workspaces.data);
  return html`<${Page} title="Policies">
    <section aria-labelledby="rate-h">
      <h2 id="rate-h">Rate-limit policies</h2>
      <${Result} r=${rate} what="rate-limit policies">${(d) => (d.data && d.data.length ? html`<table>
        <caption class="visually-hidden">Rate-limit policies</caption>
        <thead><tr><th scope="col">Policy</th><th scope="col">Limit</th><th scope="col">Applies to</th><th scope="col">Counted by</th><th scope="col">Status</th><th scope="col">Last updated</th></tr></thead>
        <tbody>${d.data.map((p) => html`<tr key=${p.id}>
          <th scope="row"><${Link} to=${'/policies/rate-limits/' + p.id}>${p.name || 'Policy ' + p.id.slice(0, 8)}<//></th>
          <td>${p.value} ${p.type} per ${unitWords[p.unit] || p.unit}</td><td>${conditionsText(p)}</td>
          <td>${(p.group_by || []).map((g) => g.key).join(', ') || '—'}</td><td><${Status} value=${p.status} /></td><td><${Time} at=${p.last_updated_at} /></td>
        </tr>`)}</tbody></table>` : html`<${Empty}>No rate-limit policies${asOf() ? ' at that time' : ''}.<//>`)}<//>
    </section>
    <section aria-labelledby="usage-h">
      <h2 id="usage-h">Usage-limit policies</h2>
      <${Result} r=${usage} what="usage-limit policies">${(d) => (d.data && d.data.length ? html`<table>
        <caption class="visually-hidden">Usage-limit policies</caption>
        <thead><tr><th scope="col">Policy</th><th scope="col">Limit</th><th scope="col">Applies to</th><th scope="col">Usage this period</th><th scope="col">Status</th></tr></thead>
        <tbody>${d.data.map((p) => html`<tr key=${p.id}>
          <th scope="row"><${Link} to=${'/policies/usage-limits/' + p.id}>${p.name || 'Policy ' + p.id.slice(0, 8)}<//></th>
          <td>${p.credit_limit} ${p.type}${p.periodic_reset ? ', reset ' + p.periodic_reset : ''}</td><td>${conditionsText(p)}</td>
          <td class="usage-cell"><${PolicyUsage} policy=${p} keys=${keys.data} /></td><td><${Status} value=${p.status} /></td>
        </tr>`)}</tbody></table>` : html`<${Empty}>No usage-limit policies${asOf() ? ' at that time' : ''}.<//>`)}<//>
    </section>
    <div class="form-pair">
      <${FormBox} title="Create a rate-limit policy" submit="Create rate-limit policy" sub=${rateSub}>
        <${Field} label="Name (optional)" name="name" error=${errorFor(rateSub.error, 'name')} />
        <${Field} label="Workspace" name="workspace_id" as="select" options=${wsOpts} error=${errorFor(rateSub.error, 'workspace_id')} />
        <div class="row">
          <${Field} label="Counts" name="type" as="select" options=${[{ value: 'requests', label: 'Requests' }, { value: 'tokens', label: 'Tokens' }]} error=${errorFor(rateSub.error, 'type')} />
          <${Field} label="Limit" name="value" type="number" min="1" step="1" error=${errorFor(rateSub.error, 'value')} />
          <${Field} label="Window" name="unit" as="select" options=${units} error=${errorFor(rateSub.error, 'unit')} />
        </div>
        <${Field} label="Conditions" name="conditions" as="textarea" rows="3" hint=${conditionsHint} error=${errorFor(rateSub.error, 'conditions')} />
        <${Field} label="Group by" name="group_by" value="api_key" hint=${groupHint} error=${errorFor(rateSub.error, 'group_by')} />
      <//>
      <${FormBox} title="Create a usage-limit policy" submit="Create usage-limit policy" sub=${usageSub}>
        <${Field} label="Name (optional)" name="name" error=${errorFor(usageSub.error, 'name')} />
        <${Field} label="Workspace" name="workspace_id" as="select" options=${wsOpts} error=${errorFor(usageSub.error, 'workspace_id')} />
        <div class="row">
          <${Field} label="Counts" name="type" as="select" options=${[{ value: 'tokens', label: 'Tokens' }, { value: 'cost', label: 'Cost (USD)' }]} error=${errorFor(usageSub.error, 'type')} />
          <${Field} label="Credit limit" name="credit_limit" type="number" min="1" step="any" error=${errorFor(usageSub.error, 'credit_limit')} />
          <${Field} label="Alert at (optional)" name="alert_threshold" type="number" min="1" step="any" error=${errorFor(usageSub.error, 'alert_threshold')} />
        </div>
        <${Field} label="Reset" name="periodic_reset" as="select" options=${[{ value: '', label: 'Never' }, { value: 'weekly', label: 'Weekly' }, { value: 'monthly', label: 'Monthly' }]}
          error=${errorFor(usageSub.error, 'periodic_reset', 'periodic_reset_days')} />
        <${Field} label="Conditions" name="conditions" as="textarea" rows="3" hint=${conditionsHint} error=${errorFor(usageSub.error, 'conditions')} />
        <${Field} label="Group by" name="group_by" value="api_key" hint=${groupHint} error=${errorFor(usageSub.error, 'group_by')} />
      <//>
    </div>
  <//>`;
}

export function RateLimitPolicyDetail({ params }) {
  const p = useApi('/policies/rate-limits/' + encodeURIComponent(params.id), { status: 'active,archived' });
  const since = p.headers && p.headers.get('x-gateway-as-of');
  const sub = useSubmit(async (v) => {
    await api('/policies/rate-limits/' + encodeURIComponent(params.id), { method: 'PUT', body: { name: v.name || undefined, unit: v.unit, value: number(v.value) } });
    p.reload();
  });
  return html`<${Page} title=${p.data ? 'Rate-limit policy ' + (p.data.name || p.data.id.slice(0, 8)) : 'Rate-limit policy'}>
    <p><${Link} to="/policies">All policies<//></p>
    ${since && html`<p class="note">This state has held since <${Time} at=${since} />.</p>`}
    <${Result} r=${p} what="the policy">${(d) => html`<${Facts} items=${[
      ['Id', html`<code>${d.id}</code>`], ['Name', d.name], ['Limit', html`<strong class="limit">${d.value} ${d.type} per ${unitWords[d.unit] || d.unit}</strong>`],
      ['Applies to', conditionsText(d)], ['Counted by', (d.group_by || []).map((g) => g.key).join(', ')], ['Status', html`<${Status} value=${d.status} />`],
      ['Workspace', html`<${Link} to=${'/workspaces/' + d.workspace_id}>${d.workspace_id}<//>`],
      ['Created', html`<${Time} at=${d.created_at} />`], ['Last updated', html`<${Time} at=${d.last_updated_at} />`],
    ]} />
    <${FormBox} title="Change the policy" submit="Save changes" sub=${sub}>
      <${Field} label="Name" name="name" value=${d.name || ''} error=${errorFor(sub.error, 'name')} />
      <div class="row">
        <${Field} label="Limit" name="value" type="number" min="1" step="1" value=${d.value} error=${errorFor(sub.error, 'value')} />
        <${Field} label="Window" name="unit" as="select" options=${units} value=${d.unit} error=${errorFor(sub.error, 'unit')} />
      </div>
    <//>`}<//>
    <${History} type="rate_limit_policy" id=${params.id} />
  <//>`;
}

export function UsageLimitPolicyDetail({ params }) {
  const p = useApi('/policies/usage-limits/' + encodeURIComponent(params.id), { status: 'active,archived' });
  const keys = useApi(asOf() ? null : '/api-keys', { page_size: 200 });
  const since = p.headers && p.headers.get('x-gateway-as-of');
  const sub = useSubmit(async (v) => {
    await api('/policies/usage-limits/' + encodeURIComponent(params.id), { method: 'PUT', body: { name: v.name || undefined,
      credit_limit: number(v.credit_limit), alert_threshold: v.alert_threshold === '' ? null : number(v.alert_threshold) } });
    p.reload();
  });
  return html`<${Page} title=${p.data ? 'Usage-limit policy ' + (p.data.name || p.data.id.slice(0, 8)) : 'Usage-limit policy'}>
    <p><${Link} to="/policies">All policies<//></p>
    ${since && html`<p class="note">This state has held since <${Time} at=${since} />.</p>`}
    <${Result} r=${p} what="the policy">${(d) => html`<${Facts} items=${[
      ['Id', html`<code>${d.id}</code>`], ['Name', d.name], ['Limit', html`<strong class="limit">${d.credit_limit} ${d.type}</strong>`],
      ['Alert at', d.alert_threshold], ['Reset', d.periodic_reset || (d.periodic_reset_days ? `every ${d.periodic_reset_days} days` : 'never')],
      ['Next reset', html`<${Time} at=${d.next_usage_reset_at} />`], ['Applies to', conditionsText(d)],
      ['Counted by', (d.group_by || []).map((g) => g.key).join(', ')], ['Status', html`<${Status} value=${d.status} />`],
      ['Created', html`<${Time} at=${d.created_at} />`], ['Last updated', html`<${Time} at=${d.last_updated_at} />`],
    ]} />
    <section aria-labelledby="usage-now"><h2 id="usage-now">Usage this period</h2><${PolicyUsage} policy=${d} keys=${keys.data} /></section>
    <${FormBox} title="Change the policy" submit="Save changes" sub=${sub}>
      <${Field} label="Name" name="name" value=${d.name || ''} error=${errorFor(sub.error, 'name')} />
      <div class="row">
        <${Field} label="Credit limit" name="credit_limit" type="number" min="1" step="any" value=${d.credit_limit} error=${errorFor(sub.error, 'credit_limit')} />
        <${Field} label="Alert at" name="alert_threshold" type="number" min="1" step="any" value=${d.alert_threshold ?? ''} error=${errorFor(sub.error, 'alert_threshold')} />
      </div>
    <//>`}<//>
    <${History} type="usage_limit_policy" id=${params.id} />
  <//>`;
}
