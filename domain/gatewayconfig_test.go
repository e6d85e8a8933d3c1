package domain

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Every code of the catalogue at its edge: the error's Detail is the code and its Param the
// path of the field, relative to the config.
func TestParseGatewayConfigErrors(t *testing.T) {
	deep := func(depth int) string {
		node := `{"provider":"@leaf"}`
		for i := 0; i < depth; i++ {
			node = `{"strategy":{"mode":"fallback"},"targets":[` + node + `]}`
		}
		return node
	}
	targets := func(n int) string {
		return `{"strategy":{"mode":"fallback"},"targets":[` + strings.TrimSuffix(strings.Repeat(`{"provider":"@a"},`, n), ",") + `]}`
	}
	cases := []struct {
		name, raw, code, param string
	}{
		{"not JSON", `{`, "AB01", ""},
		{"trailing data", `{"provider":"@a"} {}`, "AB01", ""},
		{"an array", `[]`, "AB01", ""},
		{"null", `null`, "AB01", ""},
		{"too large", `{"override_params":{"x":"` + strings.Repeat("a", MaxGatewayConfigBytes) + `"}}`, "AB01", ""},
		{"unknown field", `{"provider":"@a","guardrails":["x"]}`, "AB01", "guardrails"},
		{"unknown strategy field", `{"strategy":{"mode":"fallback","conditions":[]},"targets":[{"provider":"@a"}]}`, "AB01", "strategy.conditions"},
		{"unknown retry field", `{"retry":{"attempts":1,"use_retry_after_header":true}}`, "AB01", "retry.use_retry_after_header"},
		{"unknown cache field", `{"cache":{"mode":"simple","namespace":"x"}}`, "AB01", "cache.namespace"},
		{"provider not a string", `{"provider":5}`, "AB01", "provider"},
		{"api_key empty", `{"provider":"openai","api_key":" "}`, "AB01", "api_key"},
		{"option with a line break", `{"provider":"azure-openai","resource_name":"a\nb"}`, "AB01", "resource_name"},
		{"strict not a boolean", `{"strict_openai_compliance":1}`, "AB01", "strict_openai_compliance"},
		{"strategy not an object", `{"strategy":"fallback","targets":[{"provider":"@a"}]}`, "AB02", "strategy"},
		{"strategy without mode", `{"strategy":{},"targets":[{"provider":"@a"}]}`, "AB02", "strategy.mode"},
		{"strategy mode unknown", `{"strategy":{"mode":"round-robin"},"targets":[{"provider":"@a"}]}`, "AB02", "strategy.mode"},
		{"targets without strategy", `{"targets":[{"provider":"@a"}]}`, "AB02", "strategy"},
		{"nested targets without strategy", `{"strategy":{"mode":"single"},"targets":[{"targets":[{"provider":"@a"}]}]}`, "AB02", "targets[0].strategy"},
		{"targets not an array", `{"strategy":{"mode":"single"},"targets":{"provider":"@a"}}`, "AB03", "targets"},
		{"targets empty", `{"strategy":{"mode":"single"},"targets":[]}`, "AB03", "targets"},
		{"a target not an object", `{"strategy":{"mode":"single"},"targets":["@a"]}`, "AB03", "targets[0]"},
		{"101 targets", targets(101), "AB03", "targets"},
		{"strategy without targets", `{"strategy":{"mode":"fallback"}}`, "AB03", "targets"},
		{"weight negative", `{"strategy":{"mode":"loadbalance"},"targets":[{"provider":"@a","weight":-0.1}]}`, "AB04", "targets[0].weight"},
		{"weight a string", `{"strategy":{"mode":"loadbalance"},"targets":[{"provider":"@a","weight":"1"}]}`, "AB04", "targets[0].weight"},
		{"weights all zero", `{"strategy":{"mode":"loadbalance"},"targets":[{"provider":"@a","weight":0},{"provider":"@b","weight":0}]}`, "AB04", "targets"},
		{"weight on the root", `{"provider":"@a","weight":1}`, "AB04", "weight"},
		{"attempts 6", `{"retry":{"attempts":6}}`, "AB05", "retry.attempts"},
		{"attempts missing", `{"retry":{"on_status_codes":[429]}}`, "AB05", "retry.attempts"},
		{"attempts fractional", `{"retry":{"attempts":2.5}}`, "AB05", "retry.attempts"},
		{"retry not an object", `{"retry":true}`, "AB05", "retry"},
		{"status 99", `{"retry":{"attempts":1,"on_status_codes":[99]}}`, "AB06", "retry.on_status_codes[0]"},
		{"status 600", `{"strategy":{"mode":"fallback","on_status_codes":[500,600]},"targets":[{"provider":"@a"}]}`, "AB06", "strategy.on_status_codes[1]"},
		{"status not a list", `{"retry":{"attempts":1,"on_status_codes":"429"}}`, "AB06", "retry.on_status_codes"},
		{"101 statuses", `{"retry":{"attempts":1,"on_status_codes":[` + strings.TrimSuffix(strings.Repeat("500,", 101), ",") + `]}}`, "AB06", "retry.on_status_codes"},
		{"timeout 0", `{"request_timeout":0}`, "AB07", "request_timeout"},
		{"timeout over an hour", `{"request_timeout":3600001}`, "AB07", "request_timeout"},
		{"timeout a string", `{"request_timeout":"10s"}`, "AB07", "request_timeout"},
		{"a target with nothing to call", `{"strategy":{"mode":"fallback"},"targets":[{"provider":"@a"},{"retry":{"attempts":1}}]}`, "AB08", "targets[1]"},
		{"cache not an object", `{"cache":"simple"}`, "AB09", "cache"},
		{"cache mode", `{"cache":{"mode":"lru"}}`, "AB09", "cache.mode"},
		{"cache max age 0", `{"cache":{"mode":"simple","max_age":0}}`, "AB09", "cache.max_age"},
		{"cache max age over a year", `{"cache":{"mode":"simple","max_age":31536001}}`, "AB09", "cache.max_age"},
		{"a nested cache", `{"strategy":{"mode":"single"},"targets":[{"provider":"openai","api_key":"k","cache":{"mode":"simple"}}]}`, "AB09", "targets[0].cache"},
		{"cache threshold 0", `{"cache":{"mode":"semantic","threshold":0}}`, "AB09", "cache.threshold"},
		{"cache threshold above 1", `{"cache":{"mode":"semantic","threshold":1.01}}`, "AB09", "cache.threshold"},
		{"cache threshold a string", `{"cache":{"mode":"semantic","threshold":"0.9"}}`, "AB09", "cache.threshold"},
		{"cache threshold in simple mode", `{"cache":{"mode":"simple","threshold":0.9}}`, "AB09", "cache.threshold"},
		{"cache embedding without a model", `{"cache":{"mode":"semantic","embedding":{"provider":"@emb"}}}`, "AB09", "cache.embedding.model"},
		{"cache embedding provider a type", `{"cache":{"mode":"semantic","embedding":{"provider":"openai","model":"m"}}}`, "AB09", "cache.embedding.provider"},
		{"cache embedding unknown field", `{"cache":{"mode":"semantic","embedding":{"model":"m","dims":3}}}`, "AB01", "cache.embedding.dims"},
		{"cache embedding in simple mode", `{"cache":{"mode":"simple","embedding":{"model":"m"}}}`, "AB09", "cache.embedding"},
		{"cache flag not a boolean", `{"cache":{"mode":"simple","cache_sampled":"yes"}}`, "AB09", "cache.cache_sampled"},
		{"override params a string", `{"override_params":"gpt-4o"}`, "AB10", "override_params"},
		{"129 override params", `{"override_params":{` + func() string {
			var b strings.Builder
			for i := 0; i < 129; i++ {
				if i > 0 {
					b.WriteByte(',')
				}
				b.WriteString(`"p` + strings.Repeat("x", i) + `":1`)
			}
			return b.String()
		}() + `}}`, "AB10", "override_params"},
		{"6 deep", deep(6), "AB11", "targets[0].targets[0].targets[0].targets[0].targets[0].targets"},
		{"provider unknown", `{"provider":"gpt-4"}`, "AB13", "provider"},
		{"managed provider with capitals", `{"provider":"@Main"}`, "AB13", "provider"},
		{"virtual key with a space", `{"virtual_key":"a b"}`, "AB13", "virtual_key"},
		{"both managed spellings", `{"provider":"@a","virtual_key":"b"}`, "AB13", "virtual_key"},
		{"custom host without scheme", `{"provider":"openai","custom_host":"llm.example.com"}`, "AB14", "custom_host"},
		{"custom host with credentials", `{"provider":"openai","custom_host":"https://u:p@llm.example.com"}`, "AB14", "custom_host"},
		{"forward headers a string", `{"forward_headers":"x-a"}`, "AB15", "forward_headers"},
		{"forward header invalid", `{"forward_headers":["x-a","x b"]}`, "AB15", "forward_headers[1]"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := ParseGatewayConfig([]byte(tc.raw))
			require.Error(t, err)
			assert.Nil(t, cfg)
			var appErr *Error
			require.ErrorAs(t, err, &appErr)
			assert.Equal(t, CodeInvalid, appErr.Code)
			assert.Equal(t, tc.code, appErr.Detail, appErr.Message)
			assert.Equal(t, tc.param, appErr.Param, appErr.Message)
			assert.NotEmpty(t, appErr.Message)
		})
	}
	for _, ok := range []string{deep(5), targets(100), `{"retry":{"attempts":0}}`, `{"retry":{"attempts":5.0}}`,
		`{"request_timeout":1}`, `{"request_timeout":3600000}`,
		`{"strategy":{"mode":"loadbalance"},"targets":[{"provider":"@a","weight":0},{"provider":"@b"}]}`,
		`{"retry":{"attempts":1,"on_status_codes":[100,599]}}`, `{}`} {
		_, err := ParseGatewayConfig([]byte(ok))
		assert.NoError(t, err, ok)
	}
}

func TestParseGatewayConfigReadsEveryField(t *testing.T) {
	cfg, err := ParseGatewayConfig([]byte(`{
		"strategy": {"mode": "fallback", "on_status_codes": [429, 503]},
		"retry": {"attempts": 3, "on_status_codes": [429]},
		"request_timeout": 30000,
		"override_params": {"temperature": 0.2, "max_tokens": 100},
		"forward_headers": ["x-team"],
		"strict_openai_compliance": false,
		"targets": [
			{"provider": "@openai-main", "override_params": {"model": "gpt-4o"}},
			{"strategy": {"mode": "loadbalance"}, "targets": [
				{"provider": "azure-openai", "virtual_key": "azure-eu", "weight": 0.7, "resource_name": "r", "api_version": "2024-06-01", "azure_entra_scope": "scope"},
				{"provider": "anthropic", "api_key": "sk-inline", "weight": 0.3, "anthropic_beta": "tools-2024", "custom_host": "https://llm.example.com/v1"}
			]}
		]}`))
	require.NoError(t, err)
	assert.Equal(t, &Strategy{Mode: StrategyFallback, OnStatusCodes: []int{429, 503}}, cfg.Strategy)
	assert.Equal(t, &Retry{Attempts: 3, OnStatusCodes: []int{429}}, cfg.Retry)
	assert.Equal(t, 30000, cfg.RequestTimeout)
	assert.Nil(t, cfg.Cache)
	assert.Equal(t, map[string]any{"temperature": 0.2, "max_tokens": int64(100)}, cfg.OverrideParams)
	assert.Equal(t, []string{"x-team"}, cfg.ForwardHeaders)
	require.NotNil(t, cfg.StrictOpenAICompliance)
	assert.False(t, *cfg.StrictOpenAICompliance)
	require.Len(t, cfg.Targets, 2)
	assert.Equal(t, "openai-main", cfg.Targets[0].ManagedProvider())
	lb := cfg.Targets[1]
	assert.Equal(t, StrategyLoadBalance, lb.Strategy.Mode)
	require.Len(t, lb.Targets, 2)
	azure, claude := lb.Targets[0], lb.Targets[1]
	assert.Equal(t, "azure-eu", azure.ManagedProvider())
	assert.Equal(t, 0.7, *azure.Weight)
	assert.Equal(t, map[string]string{"resource_name": "r", "api_version": "2024-06-01"}, azure.Options)
	assert.Equal(t, "scope", azure.AzureEntraScope)
	assert.Equal(t, "", claude.ManagedProvider())
	assert.Equal(t, "sk-inline", claude.APIKey, "inline configs may carry a credential")
	assert.Equal(t, "tools-2024", claude.AnthropicBeta)
	assert.Equal(t, []ConfigHost{{Param: "targets[1].targets[1].custom_host", URL: "https://llm.example.com/v1"}}, cfg.CustomHosts())

	err = cfg.ValidateSaved()
	var appErr *Error
	require.ErrorAs(t, err, &appErr)
	assert.Equal(t, "AB12", appErr.Detail)
	assert.Equal(t, "targets[1].targets[1].api_key", appErr.Param)
	assert.NotContains(t, appErr.Message, "sk-inline", "an error never shows a credential")
}

func TestParseGatewayConfigReadsTheCache(t *testing.T) {
	cfg, err := ParseGatewayConfig([]byte(`{"provider":"@main","cache":{"mode":"semantic","max_age":600,"threshold":0.9,
		"embedding":{"provider":"@emb","model":"text-embedding-3-small"},"cache_tool_calls":false,"cache_sampled":true,
		"semantic_tools_and_turns":true}}`))
	require.NoError(t, err)
	no := false
	assert.Equal(t, &Cache{Mode: CacheSemantic, MaxAge: 600, Threshold: 0.9, Embedding: &CacheEmbedding{Provider: "@emb", Model: "text-embedding-3-small"},
		ToolCalls: &no, Sampled: true, SemanticToolsAndTurns: true}, cfg.Cache)
	assert.False(t, cfg.Cache.CachesToolCalls())

	cfg, err = ParseGatewayConfig([]byte(`{"provider":"@main","cache":{"mode":"simple"}}`))
	require.NoError(t, err)
	assert.Equal(t, &Cache{Mode: CacheSimple}, cfg.Cache, "max_age 0 is the gateway's default")
	assert.True(t, cfg.Cache.CachesToolCalls(), "tool-call answers are cached unless a config says not")
}

func TestParseSavedConfig(t *testing.T) {
	cfg, compact, err := ParseSavedConfig([]byte("{\n  \"provider\": \"@main\",\n  \"retry\": {\"attempts\": 2}\n}"))
	require.NoError(t, err)
	assert.Equal(t, `{"provider":"@main","retry":{"attempts":2}}`, compact, "stored compact, in the order given")
	assert.Equal(t, "main", cfg.ManagedProvider())
	for _, c := range []struct{ raw, code, param string }{
		{``, "AB01", "config"},
		{`null`, "AB01", "config"},
		{`[1]`, "AB01", "config"},
		{`{"retry":{"attempts":9}}`, "AB05", "config.retry.attempts"},
		{`{"provider":"bedrock","aws_access_key_id":"AKIA"}`, "AB12", "config.aws_access_key_id"},
	} {
		_, _, err := ParseSavedConfig([]byte(c.raw))
		var appErr *Error
		require.True(t, errors.As(err, &appErr), c.raw)
		assert.Equal(t, c.code, appErr.Detail, c.raw)
		assert.Equal(t, c.param, appErr.Param, c.raw)
	}
}

func TestSavedConfigDecisions(t *testing.T) {
	created := ConfigCreated{ConfigID: "c-1", OrganisationID: "org", WorkspaceID: "ws-1", Slug: "main", Name: "Main",
		VersionID: "v-1", Config: `{"provider":"@a"}`, By: "u-1", At: t0}
	create := func(mod func(*CreateSavedConfig)) func(*SavedConfig) ([]Event, error) {
		return func(c *SavedConfig) ([]Event, error) {
			in := CreateSavedConfig{ConfigID: "c-1", OrganisationID: "org", WorkspaceID: "ws-1", Slug: "main", Name: "Main",
				VersionID: "v-1", Config: []byte(`{ "provider": "@a" }`), By: "u-1"}
			if mod != nil {
				mod(&in)
			}
			return c.Create(in, t0)
		}
	}
	later := t0.Add(time.Hour)
	update := func(in UpdateSavedConfig) func(*SavedConfig) ([]Event, error) {
		return func(c *SavedConfig) ([]Event, error) { return c.Update(in, later) }
	}
	archived := ConfigArchived{ConfigID: "c-1", By: "u-2", At: later}
	runScenarios(t, func() *SavedConfig { return &SavedConfig{} }, []scenario[*SavedConfig]{
		{name: "create", when: create(nil), then: []Event{created}},
		{name: "create twice", given: []Event{created}, when: create(nil), wantCode: CodeConflict},
		{name: "name of 256", when: create(func(c *CreateSavedConfig) { c.Name = strings.Repeat("n", 256) }), wantCode: CodeInvalid, wantParam: "name"},
		{name: "slug of 256", when: create(func(c *CreateSavedConfig) { c.Slug = strings.Repeat("s", 256) }), wantCode: CodeInvalid, wantParam: "slug"},
		{name: "no config", when: create(func(c *CreateSavedConfig) { c.Config = nil }), wantCode: CodeInvalid, wantParam: "config"},
		{name: "a bad config", when: create(func(c *CreateSavedConfig) { c.Config = []byte(`{"cache":{"mode":"x"}}`) }), wantCode: CodeInvalid, wantParam: "config.cache.mode"},
		{name: "a credential", when: create(func(c *CreateSavedConfig) { c.Config = []byte(`{"provider":"openai","api_key":"sk"}`) }), wantCode: CodeInvalid, wantParam: "config.api_key"},
		{name: "a new version", given: []Event{created}, when: update(UpdateSavedConfig{Config: []byte(`{"provider":"@b"}`), VersionID: "v-2", By: "u-2"}),
			then: []Event{ConfigUpdated{ConfigID: "c-1", VersionID: "v-2", Config: `{"provider":"@b"}`, By: "u-2", At: later}}},
		{name: "a rename", given: []Event{created}, when: update(UpdateSavedConfig{Name: ptr("New"), By: "u-2"}),
			then: []Event{ConfigUpdated{ConfigID: "c-1", Name: ptr("New"), By: "u-2", At: later}}},
		{name: "nothing", given: []Event{created}, when: update(UpdateSavedConfig{By: "u-2"}), wantCode: CodeInvalid},
		{name: "a bad new version", given: []Event{created}, when: update(UpdateSavedConfig{Config: []byte(`{"request_timeout":-1}`)}),
			wantCode: CodeInvalid, wantParam: "config.request_timeout"},
		{name: "update a deleted one", given: []Event{created, archived}, when: update(UpdateSavedConfig{Name: ptr("x")}), wantCode: CodeNotFound},
		{name: "archive", given: []Event{created}, when: func(c *SavedConfig) ([]Event, error) { return c.Archive("u-2", later) }, then: []Event{archived}},
		{name: "archive twice", given: []Event{created, archived}, when: func(c *SavedConfig) ([]Event, error) { return c.Archive("u-2", later) }, wantCode: CodeNotFound},
	})

	c := &SavedConfig{}
	c.Apply(created)
	copied := *c
	c.Apply(ConfigUpdated{ConfigID: "c-1", Name: ptr("New"), VersionID: "v-2", Config: `{"provider":"@b"}`, By: "u-2", At: later})
	assert.Len(t, copied.Versions, 1, "an earlier copy is not changed by later events")
	require.Len(t, c.Versions, 2)
	assert.Equal(t, ConfigVersion{ID: "v-2", Config: `{"provider":"@b"}`, Name: "New", CreatedBy: "u-2", CreatedAt: later}, c.Latest())
	assert.Equal(t, "u-1", c.OwnerID)
	assert.Equal(t, "u-2", c.UpdatedBy)
	assert.Equal(t, ConfigVersion{}, (&SavedConfig{}).Latest())
}

func TestConfigDefaultDecisions(t *testing.T) {
	set := ConfigDefaultSet{WorkspaceID: "ws-1", ConfigID: "c-1", At: t0}
	decide := func(configID string, isDefault bool) func(*ConfigDefault) ([]Event, error) {
		return func(d *ConfigDefault) ([]Event, error) { return d.Set("ws-1", configID, isDefault, t0) }
	}
	runScenarios(t, func() *ConfigDefault { return &ConfigDefault{} }, []scenario[*ConfigDefault]{
		{name: "make the first default", when: decide("c-1", true), then: []Event{set}},
		{name: "make it again", given: []Event{set}, when: decide("c-1", true), then: nil},
		{name: "another takes over", given: []Event{set}, when: decide("c-2", true),
			then: []Event{ConfigDefaultSet{WorkspaceID: "ws-1", ConfigID: "c-2", At: t0}}},
		{name: "unset the default", given: []Event{set}, when: decide("c-1", false), then: []Event{ConfigDefaultSet{WorkspaceID: "ws-1", At: t0}}},
		{name: "unset one that is not", given: []Event{set}, when: decide("c-2", false), then: nil},
		{name: "unset with no default", when: decide("c-1", false), then: nil},
	})
}

// FuzzParseGatewayConfig: whatever arrives in x-gateway-config, the parser answers a config or
// an AB-coded invalid error, and never panics.
func FuzzParseGatewayConfig(f *testing.F) {
	for _, seed := range []string{`{}`, `{"provider":"@a"}`, `{"strategy":{"mode":"fallback"},"targets":[{"provider":"openai","api_key":"k"}]}`,
		`{"strategy":{"mode":"loadbalance"},"targets":[{"virtual_key":"a","weight":0.5},{"targets":[]}]}`, `{"retry":{"attempts":1e400}}`,
		`{"cache":{"mode":"simple","max_age":-0}}`, `[`, `{"override_params":{"a":[1,{"b":null}]}}`, `{"request_timeout":9007199254740993}`} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		cfg, err := ParseGatewayConfig(raw)
		if err == nil {
			require.NotNil(t, cfg)
			_ = cfg.ValidateSaved()
			_ = cfg.CustomHosts()
			return
		}
		var appErr *Error
		require.ErrorAs(t, err, &appErr)
		require.Equal(t, CodeInvalid, appErr.Code)
		require.True(t, strings.HasPrefix(appErr.Detail, "AB"), appErr.Detail)
	})
}
