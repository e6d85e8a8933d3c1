package httpapi

import (
	"math"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/causeway/causeway/gateway/pricing"
)

// newPricingAPI is the test API with a Book over the shipped prices whose overrides come from
// the test's read model, as the gateway's do.
func newPricingAPI(t *testing.T) (*testAPI, *pricing.Book) {
	t.Helper()
	api := newTestAPI(t)
	book, err := pricing.New(pricing.Config{}, pricing.Options{Now: api.Now, Overrides: api.Read.Overrides()})
	require.NoError(t, err)
	t.Cleanup(func() { _ = book.Close() })
	api.AdminAPI.Pricing = book
	return api, book
}

func payAsYouGo(r response) map[string]any {
	p, _ := r.Body["pay_as_you_go"].(map[string]any)
	return p
}

func priceOf(r response, field string) float64 {
	f, _ := payAsYouGo(r)[field].(map[string]any)
	v, _ := f["price"].(float64)
	return v
}

func TestModelPricingDefaultPrices(t *testing.T) {
	api, _ := newPricingAPI(t)
	got := api.Admin(http.MethodGet, "/model-configs/pricing/openai/gpt-4o", nil)
	require.Equal(t, http.StatusOK, got.Status, string(got.Raw))
	assert.Equal(t, 0.00025, priceOf(got, "request_token"), "USD cents per token: $2.50 per million")
	assert.Equal(t, 0.001, priceOf(got, "response_token"))
	assert.Equal(t, 0.000125, priceOf(got, "cache_read_input_token"))
	assert.Equal(t, "USD", got.Str("currency"))
	assert.Equal(t, "default", got.Str("source"))
	assert.Equal(t, "openai", got.Str("provider"))
	assert.Equal(t, "gpt-4o", got.Str("model"))
	calc, _ := got.Body["calculate"].(map[string]any)
	assert.Contains(t, calc, "request")
	assert.Contains(t, calc, "response")

	for _, path := range []string{
		"/model-configs/pricing/together-ai/meta-llama/Llama-3.3-70B-Instruct-Turbo",
		"/model-configs/pricing/together/meta-llama%2FLlama-3.3-70B-Instruct-Turbo",
		"/model-configs/pricing/Mistral/mistral-small-latest",
		"/model-configs/pricing/anthropic/claude-sonnet-4-5-20250929",
		"/model-configs/pricing/openai/gpt-4o-2024-08-06",
	} {
		r := api.Admin(http.MethodGet, path, nil)
		assert.Equal(t, http.StatusOK, r.Status, "%s: %s", path, r.Raw)
	}
	assert.Equal(t, "mistral-ai", api.Admin(http.MethodGet, "/model-configs/pricing/mistral/mistral-small-latest", nil).Str("provider"),
		"provider names are normalised")

	missing := api.Admin(http.MethodGet, "/model-configs/pricing/openai/gpt-0", nil)
	require.Equal(t, http.StatusNotFound, missing.Status)
	assert.Contains(t, missing.ErrorMessage(), "gpt-0")
	assert.Equal(t, http.StatusNotFound, api.Admin(http.MethodGet, "/model-configs/pricing/nobody/gpt-4o", nil).Status)
	assert.Equal(t, http.StatusUnauthorized, api.Do(http.MethodGet, "/model-configs/pricing/openai/gpt-4o", "", nil).Status)
	assert.Equal(t, http.StatusUnauthorized, api.Do(http.MethodGet, "/model-configs/pricing/openai/gpt-4o", "cw-wrong", nil).Status)
}

func TestModelPricingOverrideLifecycle(t *testing.T) {
	api, book := newPricingAPI(t)
	path := "/model-configs/pricing/openai/gpt-4o"
	body := map[string]any{"pay_as_you_go": map[string]any{"request_token": map[string]any{"price": 0.0002},
		"response_token": map[string]any{"price": 0.0008}, "additional_units": map[string]any{"web_search": map[string]any{"price": 1}}},
		"currency": "USD"}
	u := pricing.Usage{PromptTokens: 1000, CompletionTokens: 100}
	defaultCost := book.Cost(api.OrgID, "openai", "gpt-4o", u)

	set := api.Admin(http.MethodPut, path, body, "x-gateway-trace-id", "trace-price-1")
	require.Equal(t, http.StatusOK, set.Status, string(set.Raw))
	assert.NotEmpty(t, set.Header.Get(PositionHeader))
	assert.Equal(t, "organisation_override", set.Str("source"))
	assert.Equal(t, 0.0002, priceOf(set, "request_token"))

	got := api.Admin(http.MethodGet, path, nil)
	require.Equal(t, http.StatusOK, got.Status)
	assert.Equal(t, "organisation_override", got.Str("source"), "read your write at once")
	assert.Equal(t, 0.0008, priceOf(got, "response_token"))
	assert.Contains(t, payAsYouGo(got)["additional_units"], "web_search")
	assert.InDelta(t, (1000*0.0002+100*0.0008)/100, book.Cost(api.OrgID, "openai", "gpt-4o", u), 1e-12,
		"the cost of the next request logged follows the override")

	api.Advance(time.Hour)
	body["pay_as_you_go"].(map[string]any)["request_token"] = map[string]any{"price": 0.0001}
	require.Equal(t, http.StatusOK, api.Admin(http.MethodPut, path, body).Status)
	assert.Equal(t, 0.0001, priceOf(api.Admin(http.MethodGet, path, nil), "request_token"))
	again := api.Admin(http.MethodPut, path, body)
	require.Equal(t, http.StatusOK, again.Status)
	assert.Empty(t, again.Header.Get(PositionHeader), "the same price again writes nothing")

	// The audit log holds every change, with the prices before and after.
	audit := func(action string) []map[string]any {
		t.Helper()
		r := api.Admin(http.MethodGet, "/audit-logs?"+url.Values{"action": {action}}.Encode(), nil)
		require.Equal(t, http.StatusOK, r.Status, string(r.Raw))
		return r.Data()
	}
	sets := audit("ModelPricingOverrideSet")
	require.Len(t, sets, 2)
	var first, second map[string]any
	for _, rec := range sets {
		if rec["before"] == nil {
			first = rec
		} else {
			second = rec
		}
	}
	require.NotNil(t, first)
	require.NotNil(t, second)
	assert.Equal(t, "model_pricing", first["resource_type"])
	assert.Equal(t, "trace-price-1", first["request_id"])
	assert.Equal(t, "PUT", first["method"])
	assert.Equal(t, "/v1"+path, first["uri"])
	priceIn := func(state any) float64 {
		p := state.(map[string]any)["pay_as_you_go"].(map[string]any)["request_token"].(map[string]any)
		return p["price"].(float64)
	}
	assert.Equal(t, 0.0002, priceIn(second["before"]), "the price before the change")
	assert.Equal(t, 0.0001, priceIn(second["after"]), "and after it")

	del := api.Admin(http.MethodDelete, path, nil)
	require.Equal(t, http.StatusOK, del.Status, string(del.Raw))
	assert.Equal(t, "removed", del.Str("status"))
	back := api.Admin(http.MethodGet, path, nil)
	require.Equal(t, http.StatusOK, back.Status)
	assert.Equal(t, "default", back.Str("source"), "back to the default price")
	assert.Equal(t, 0.00025, priceOf(back, "request_token"))
	assert.InDelta(t, defaultCost, book.Cost(api.OrgID, "openai", "gpt-4o", u), 1e-12)
	assert.Len(t, audit("ModelPricingOverrideRemoved"), 1)
	assert.Equal(t, http.StatusNotFound, api.Admin(http.MethodDelete, path, nil).Status, "nothing left to remove")

	// A model no source knows gets a price by override, and loses it on removal.
	custom := "/model-configs/pricing/vllm/my-finetune"
	require.Equal(t, http.StatusNotFound, api.Admin(http.MethodGet, custom, nil).Status)
	require.Equal(t, http.StatusOK, api.Admin(http.MethodPut, custom, body).Status)
	assert.Equal(t, http.StatusOK, api.Admin(http.MethodGet, custom, nil).Status)
	require.Equal(t, http.StatusOK, api.Admin(http.MethodDelete, custom, nil).Status)
	assert.Equal(t, http.StatusNotFound, api.Admin(http.MethodGet, custom, nil).Status)
}

func TestModelPricingWorkspaceOverridesAndAccess(t *testing.T) {
	api, book := newPricingAPI(t)
	wsA := api.seedWorkspace("team-a", nil)
	wsB := api.seedWorkspace("team-b", nil)
	path := "/model-configs/pricing/anthropic/claude-haiku-4-5"
	prices := func(in float64) map[string]any {
		return map[string]any{"pay_as_you_go": map[string]any{"request_token": map[string]any{"price": in}}}
	}
	withWS := func(in float64, ws string) map[string]any { b := prices(in); b["workspace_id"] = ws; return b }
	require.Equal(t, http.StatusOK, api.Admin(http.MethodPut, path, prices(0.5)).Status)
	set := api.Admin(http.MethodPut, path, withWS(0.25, wsA))
	require.Equal(t, http.StatusOK, set.Status, string(set.Raw))
	assert.Equal(t, "workspace_override", set.Str("source"))
	assert.Equal(t, wsA, set.Str("workspace_id"))

	key := func(p string, b map[string]any) string {
		r := api.Admin(http.MethodPost, p, b)
		require.Equal(t, http.StatusOK, r.Status, string(r.Raw))
		return r.Str("key")
	}
	keyA := key("/api-keys/workspace/service", map[string]any{"name": "a", "workspace_id": wsA, "scopes": []string{"logs.view"}})
	keyB := key("/api-keys/workspace/service", map[string]any{"name": "b", "workspace_id": wsB, "scopes": []string{"logs.view"}})
	weakAdmin := key("/api-keys/organisation/service", map[string]any{"name": "weak", "scopes": []string{"logs.view"}})

	asA := api.Do(http.MethodGet, path, keyA, nil)
	require.Equal(t, http.StatusOK, asA.Status, string(asA.Raw))
	assert.Equal(t, "workspace_override", asA.Str("source"), "a workspace key reads its workspace's price")
	assert.Equal(t, 0.25, priceOf(asA, "request_token"))
	asB := api.Do(http.MethodGet, path, keyB, nil)
	assert.Equal(t, "organisation_override", asB.Str("source"))
	assert.Equal(t, 0.5, priceOf(asB, "request_token"))
	assert.Equal(t, http.StatusForbidden, api.Do(http.MethodGet, path+"?workspace_id="+wsA, keyB, nil).Status,
		"a workspace key reads no other workspace's price")
	assert.Equal(t, 0.25, priceOf(api.Admin(http.MethodGet, path+"?workspace_id="+wsA, nil), "request_token"))
	assert.Equal(t, 0.5, priceOf(api.Admin(http.MethodGet, path, nil), "request_token"))
	assert.InDelta(t, 1000*0.25/100, book.CostIn(api.OrgID, wsA, "anthropic", "claude-haiku-4-5", pricing.Usage{PromptTokens: 1000}), 1e-12)

	// Only organisation admins, through organisation keys with organisations.update, change prices.
	for name, k := range map[string]string{"workspace key": keyA, "admin key without the scope": weakAdmin} {
		assert.Equal(t, http.StatusForbidden, api.Do(http.MethodPut, path, k, prices(0.1)).Status, name)
		assert.Equal(t, http.StatusForbidden, api.Do(http.MethodPut, path, k, withWS(0.1, wsA)).Status, name)
		assert.Equal(t, http.StatusForbidden, api.Do(http.MethodDelete, path, k, nil).Status, name)
	}
	assert.Equal(t, http.StatusUnauthorized, api.Do(http.MethodPut, path, "", prices(0.1)).Status)
	assert.Equal(t, http.StatusUnauthorized, api.Do(http.MethodDelete, path, "", nil).Status)

	require.Equal(t, http.StatusOK, api.Admin(http.MethodDelete, path+"?workspace_id="+wsA, nil).Status)
	assert.Equal(t, "organisation_override", api.Do(http.MethodGet, path, keyA, nil).Str("source"))
}

func TestModelPricingBounds(t *testing.T) {
	api, _ := newPricingAPI(t)
	ws := api.seedWorkspace("team-a", nil)
	valid := func() map[string]any {
		return map[string]any{"pay_as_you_go": map[string]any{"request_token": map[string]any{"price": 0.0003},
			"response_token": map[string]any{"price": 0.0015}}}
	}
	withPrice := func(field string, v any) map[string]any {
		b := valid()
		b["pay_as_you_go"].(map[string]any)[field] = map[string]any{"price": v}
		return b
	}
	units := func(n int) map[string]any {
		b := valid()
		u := map[string]any{}
		for i := range n {
			u["unit_"+strconv.Itoa(i)] = map[string]any{"price": 1}
		}
		b["pay_as_you_go"].(map[string]any)["additional_units"] = u
		return b
	}
	with := func(k string, v any) map[string]any { b := valid(); b[k] = v; return b }
	past := strconv.FormatFloat(math.Nextafter(100_000, math.Inf(1)), 'f', -1, 64)
	cases := []struct {
		name   string
		path   string
		body   any
		status int
		param  string
	}{
		{"valid", "openai/gpt-4o", valid(), 200, ""},
		{"price 0", "openai/gpt-4o", withPrice("response_token", 0), 200, ""},
		{"price at 1000 USD", "openai/gpt-4o", withPrice("request_token", 100_000), 200, ""},
		{"price past 1000 USD", "openai/gpt-4o", `{"pay_as_you_go":{"request_token":{"price":` + past + `}}}`, 400, "pay_as_you_go.request_token.price"},
		{"negative price", "openai/gpt-4o", withPrice("cache_read_input_token", -0.000001), 400, "pay_as_you_go.cache_read_input_token.price"},
		{"cache write past the bound", "openai/gpt-4o", withPrice("cache_write_input_token", 100_001), 400, "pay_as_you_go.cache_write_input_token.price"},
		{"price out of float range", "openai/gpt-4o", `{"pay_as_you_go":{"request_token":{"price":1e400}}}`, 400, "pay_as_you_go.request_token.price"},
		{"price not a number", "openai/gpt-4o", withPrice("request_token", "cheap"), 400, "pay_as_you_go.request_token.price"},
		{"64 additional units", "openai/gpt-4o", units(64), 200, ""},
		{"65 additional units", "openai/gpt-4o", units(65), 400, "pay_as_you_go.additional_units"},
		{"additional unit past the bound", "openai/gpt-4o", func() map[string]any {
			b := valid()
			b["pay_as_you_go"].(map[string]any)["additional_units"] = map[string]any{"web_search": map[string]any{"price": 100_001}}
			return b
		}(), 400, "pay_as_you_go.additional_units.web_search.price"},
		{"no pay_as_you_go", "openai/gpt-4o", map[string]any{"currency": "USD"}, 400, "pay_as_you_go"},
		{"no token price", "openai/gpt-4o", map[string]any{"pay_as_you_go": map[string]any{}}, 400, "pay_as_you_go"},
		{"currency EUR", "openai/gpt-4o", with("currency", "EUR"), 400, "currency"},
		{"unknown field", "openai/gpt-4o", with("calculate", map[string]any{}), 400, "calculate"},
		{"unknown price field", "openai/gpt-4o", withPrice("request_audio_token", 1), 400, "request_audio_token"},
		{"provider of 255", strings.Repeat("p", 255) + "/gpt-4o", valid(), 200, ""},
		{"provider of 256", strings.Repeat("p", 256) + "/gpt-4o", valid(), 400, "provider"},
		{"model of 255", "openai/" + strings.Repeat("m", 255), valid(), 200, ""},
		{"model of 256", "openai/" + strings.Repeat("m", 256), valid(), 400, "model"},
		{"workspace price", "openai/gpt-4o", with("workspace_id", ws), 200, ""},
		{"unknown workspace", "openai/gpt-4o", with("workspace_id", "7b0d0e9e-0000-4000-8000-000000000000"), 404, "workspace_id"},
		{"not JSON", "openai/gpt-4o", "{", 400, ""},
		{"empty body", "openai/gpt-4o", "", 400, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := api.Admin(http.MethodPut, "/model-configs/pricing/"+tc.path, tc.body)
			require.Equal(t, tc.status, r.Status, string(r.Raw))
			if tc.status >= 400 {
				assert.Equal(t, tc.param, r.ErrorParam(), r.ErrorMessage())
				assert.NotEmpty(t, r.ErrorMessage())
			}
		})
	}
	r := api.Admin(http.MethodPut, "/model-configs/pricing/openai/gpt-4o", withPrice("request_token", 100_001))
	assert.Contains(t, r.ErrorMessage(), "100000", "the message names the bound")
	assert.Equal(t, http.StatusBadRequest, api.Admin(http.MethodGet, "/model-configs/pricing/openai/"+strings.Repeat("m", 256), nil).Status)
	assert.Equal(t, "provider", api.Admin(http.MethodDelete, "/model-configs/pricing/"+strings.Repeat("p", 256)+"/x", nil).ErrorParam())
	assert.Equal(t, http.StatusMethodNotAllowed, api.Admin(http.MethodPost, "/model-configs/pricing/openai/gpt-4o", valid()).Status)
}

// Without a Book the admin API still answers overrides, and nothing else.
func TestModelPricingWithoutABook(t *testing.T) {
	api := newTestAPI(t)
	path := "/model-configs/pricing/openai/gpt-4o"
	assert.Equal(t, http.StatusNotFound, api.Admin(http.MethodGet, path, nil).Status)
	require.Equal(t, http.StatusOK, api.Admin(http.MethodPut, path, map[string]any{"pay_as_you_go": map[string]any{
		"request_token": map[string]any{"price": 0.1}}}).Status)
	got := api.Admin(http.MethodGet, path, nil)
	require.Equal(t, http.StatusOK, got.Status)
	assert.Equal(t, "organisation_override", got.Str("source"))
}
