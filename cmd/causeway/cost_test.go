package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/causeway/causeway/analytics"
	"github.com/causeway/causeway/gateway/providers/providertest"
	"github.com/causeway/causeway/migrations/migrationstest"
)

// Anthropic's cache reads and writes, through the gateway, reach the stored row and its cost:
// reads at the cache read price, writes at the cache write price (1.25× the input price for
// Claude), the rest of the prompt at the request price, whole answers and streams alike.
func TestGatewayBillsAnthropicCacheReadsAndWrites(t *testing.T) {
	t.Run("sqlite", func(t *testing.T) { testAnthropicCacheCost(t, startGateway(t)) })
	t.Run("clickhouse", func(t *testing.T) {
		m := startMain(t, map[string]string{"CAUSEWAY_BOOTSTRAP_ADMIN_KEY": gatewayKey, "CAUSEWAY_ALLOWED_HOSTS": "127.0.0.1",
			"CLICKHOUSE_URL": migrationstest.ClickHouseURL(t)})
		testAnthropicCacheCost(t, m)
	})
}

// clientUsage is the OpenAI-shaped usage the gateway answers.
type clientUsage struct {
	PromptTokens        int `json:"prompt_tokens"`
	CompletionTokens    int `json:"completion_tokens"`
	TotalTokens         int `json:"total_tokens"`
	PromptTokensDetails struct {
		CachedTokens int `json:"cached_tokens"`
	} `json:"prompt_tokens_details"`
}

// anthropicChat sends one chat completion for model to the Anthropic stand-in at host, tagged
// with metadata case=name, and returns the usage the client was answered.
func anthropicChat(t *testing.T, m *Main, host, model, name string, stream bool) clientUsage {
	t.Helper()
	body := fmt.Sprintf(`{"model":%q,"max_tokens":256,"messages":[{"role":"user","content":"summarise the long cached document please"}]}`, model)
	if stream {
		body = strings.TrimSuffix(body, "}") + `,"stream":true,"stream_options":{"include_usage":true}}`
	}
	req, err := http.NewRequest(http.MethodPost, m.URL()+"/chat/completions", strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("x-gateway-api-key", gatewayKey)
	req.Header.Set("x-gateway-provider", "anthropic")
	req.Header.Set("x-gateway-custom-host", host)
	req.Header.Set("x-gateway-metadata", `{"case":"`+name+`"}`)
	req.Header.Set("Authorization", "Bearer sk-ant-provider-key")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	var u *clientUsage
	if !stream {
		var out struct {
			Usage *clientUsage `json:"usage"`
		}
		require.NoError(t, json.NewDecoder(resp.Body).Decode(&out))
		u = out.Usage
	} else {
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			data, ok := strings.CutPrefix(sc.Text(), "data: ")
			if !ok || data == "[DONE]" {
				continue
			}
			var chunk struct {
				Usage *clientUsage `json:"usage"`
			}
			require.NoError(t, json.Unmarshal([]byte(data), &chunk), data)
			if chunk.Usage != nil {
				u = chunk.Usage
			}
		}
		require.NoError(t, sc.Err())
	}
	require.NotNil(t, u, "%s: the usage is answered", name)
	return *u
}

func testAnthropicCacheCost(t *testing.T, m *Main) {
	const model = "claude-sonnet-4-5" // priced by the shipped data, cache reads and writes included
	an := providertest.NewAnthropic(t)

	var p struct {
		PayAsYouGo map[string]struct {
			Price float64 `json:"price"`
		} `json:"pay_as_you_go"`
	}
	getJSON(t, m.URL()+"/model-configs/pricing/anthropic/"+model, &p)
	in, out := p.PayAsYouGo["request_token"].Price, p.PayAsYouGo["response_token"].Price
	read, write := p.PayAsYouGo["cache_read_input_token"].Price, p.PayAsYouGo["cache_write_input_token"].Price
	require.Positive(t, in)
	require.Positive(t, read)
	require.InDelta(t, 1.25*in, write, 1e-12, "Anthropic's cache writes cost 1.25× the input price")

	type want struct {
		reads, writes int
		usage         clientUsage
		cost          float64 // USD; prices are cents per token
	}
	cases := map[string]*want{
		"whole":          {reads: 1200, writes: 3400},
		"stream":         {reads: 500, writes: 2500},
		"writes only":    {reads: 0, writes: 900},
		"no cache usage": {},
	}
	for _, name := range []string{"whole", "stream", "writes only", "no cache usage"} {
		w := cases[name]
		an.SetCacheUsage(w.reads, w.writes)
		w.usage = anthropicChat(t, m, an.BaseURL(), model, name, name == "stream")
		u := w.usage
		require.Equal(t, w.reads, u.PromptTokensDetails.CachedTokens, name)
		require.Greater(t, u.PromptTokens, w.reads+w.writes, "%s: cache reads and writes are part of the prompt", name)
		w.cost = (float64(u.PromptTokens-w.reads-w.writes)*in + float64(w.reads)*read + float64(w.writes)*write +
			float64(u.CompletionTokens)*out) / 100
	}
	require.Eventually(t, func() bool { return m.Pipeline.Stats().Inserted == int64(len(cases)) },
		10*time.Second, 20*time.Millisecond, "every request is stored")

	page, err := m.Analytics.Logs(context.Background(), analytics.LogsQuery{
		Filter: analytics.Filter{OrganisationID: m.Bootstrap.OrganisationID}, PageSize: analytics.MaxPageSize})
	require.NoError(t, err)
	require.Len(t, page.Rows, len(cases))
	byCase := map[string]analytics.LogRecord{}
	for _, r := range page.Rows {
		byCase[r.Metadata["case"]] = r
	}
	for name, w := range cases {
		r, ok := byCase[name]
		require.True(t, ok, name)
		assert.Equal(t, "anthropic", r.AIService, name)
		assert.Equal(t, model, r.Model, name)
		assert.Equal(t, name == "stream", r.Stream, name)
		assert.Equal(t, w.usage.PromptTokens, r.PromptTokens, name)
		assert.Equal(t, w.usage.CompletionTokens, r.CompletionTokens, name)
		assert.Equal(t, w.usage.TotalTokens, r.TotalTokens, name)
		assert.Equal(t, w.reads, r.CachedTokens, name)
		assert.Equal(t, w.writes, r.CacheWriteTokens, name)
		assert.InDelta(t, w.cost, r.Cost, 1e-12, name)
	}
	// Billed as plain input, as they were before the row carried them, the writes would cost a
	// quarter of the input price less per token.
	whole := cases["whole"]
	asInput := (float64(whole.usage.PromptTokens-whole.reads)*in + float64(whole.reads)*read +
		float64(whole.usage.CompletionTokens)*out) / 100
	assert.InDelta(t, float64(whole.writes)*0.25*in/100, byCase["whole"].Cost-asInput, 1e-12)

	// The log API shows the writes beside the reads.
	var got struct {
		Metrics struct {
			CachedUnits     int     `json:"cached_units"`
			CacheWriteUnits int     `json:"cache_write_units"`
			Cost            float64 `json:"cost"`
		} `json:"metrics"`
	}
	getJSON(t, m.URL()+"/logs/"+byCase["whole"].ID, &got)
	assert.Equal(t, whole.reads, got.Metrics.CachedUnits)
	assert.Equal(t, whole.writes, got.Metrics.CacheWriteUnits)
	assert.InDelta(t, whole.cost, got.Metrics.Cost, 1e-12)
}
