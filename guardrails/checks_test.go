package guardrails

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type P = map[string]any

func build(t testing.TB, id string, params P) Check {
	t.Helper()
	c, err := NewRegistry().Build(id, params, Deps{})
	require.NoError(t, err, "building %s %v", id, params)
	return c
}

// decoded turns a Go literal into what the registry receives from JSON (float64 numbers).
func decoded(t testing.TB, v P) P {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	var out P
	require.NoError(t, json.Unmarshal(b, &out))
	return out
}

func text(s string) Input { return Input{Hook: AfterRequest, Text: s, Final: true} }

func chatRequest(model string, msgs ...string) json.RawMessage {
	var ms []map[string]any
	for i, m := range msgs {
		role := "user"
		if i%2 == 1 {
			role = "assistant"
		}
		ms = append(ms, map[string]any{"role": role, "content": m})
	}
	b, _ := json.Marshal(map[string]any{"model": model, "messages": ms})
	return b
}

func before(req json.RawMessage) Input {
	return Input{Hook: BeforeRequest, Endpoint: "chatComplete", Request: req, Final: true}
}

func TestChecks(t *testing.T) {
	schema := P{"type": "object", "properties": P{"result": P{"type": "string"}}, "required": []any{"result"}}
	cases := []struct {
		name   string
		id     string
		params P
		in     Input
		pass   bool
	}{
		{"regex matches", "default.regexMatch", P{"rule": `\bbanned\b`}, text("a banned word"), true},
		{"regex does not match", "default.regexMatch", P{"rule": `\bbanned\b`}, text("all fine"), false},
		{"regex not: match fails", "default.regexMatch", P{"rule": `\bbanned\b`, "not": true}, text("a banned word"), false},
		{"regex not: no match passes", "default.regexMatch", P{"rule": `\bbanned\b`, "not": true}, text("fine"), true},
		{"regex reads the last message", "default.regexMatch", P{"rule": `secret`}, before(chatRequest("m", "secret", "ok", "hello")), false},

		{"sentences in range", "default.sentenceCount", P{"minSentences": 1, "maxSentences": 2}, text("One. Two!"), true},
		{"sentences above", "default.sentenceCount", P{"minSentences": 1, "maxSentences": 2}, text("One. Two! Three?"), false},
		{"sentences not", "default.sentenceCount", P{"minSentences": 1, "maxSentences": 2, "not": true}, text("One. Two! Three?"), true},
		{"sentences default range", "default.sentenceCount", P{}, text("no terminator"), true},

		{"words in range", "default.wordCount", P{"minWords": 2, "maxWords": 3}, text("three little  words"), true},
		{"words below", "default.wordCount", P{"minWords": 2, "maxWords": 3}, text("one"), false},
		{"words empty counts zero", "default.wordCount", P{"minWords": 1}, text("   "), false},
		{"words not", "default.wordCount", P{"minWords": 2, "maxWords": 3, "not": true}, text("one"), true},

		{"characters are code points", "default.characterCount", P{"maxCharacters": 3}, text("héé"), true},
		{"characters above", "default.characterCount", P{"maxCharacters": 3}, text("four"), false},
		{"characters not", "default.characterCount", P{"maxCharacters": 3, "not": true}, text("four"), true},

		{"schema valid in a fence", "default.jsonSchema", P{"schema": schema}, text("Here:\n```json\n{\"result\": \"ok\"}\n```"), true},
		{"schema valid nested in prose", "default.jsonSchema", P{"schema": schema}, text(`The answer is {"result": "ok", "meta": {"a": 1}} as asked.`), true},
		{"schema invalid", "default.jsonSchema", P{"schema": schema}, text(`{"result": 3}`), false},
		{"schema not", "default.jsonSchema", P{"schema": schema, "not": true}, text(`{"result": 3}`), true},
		{"schema without JSON fails", "default.jsonSchema", P{"schema": schema}, text("no json here"), false},

		{"keys all present", "default.jsonKeys", P{"keys": []any{"a", "b"}, "operator": "all"}, text(`{"a":1,"b":2}`), true},
		{"keys all missing one", "default.jsonKeys", P{"keys": []any{"a", "b"}, "operator": "all"}, text(`{"a":1}`), false},
		{"keys any", "default.jsonKeys", P{"keys": []any{"a", "z"}}, text(`{"a":1}`), true},
		{"keys none", "default.jsonKeys", P{"keys": []any{"a"}, "operator": "none"}, text(`{"a":1}`), false},
		{"keys no object", "default.jsonKeys", P{"keys": []any{"a"}}, text(`[1,2]`), false},

		{"contains any", "default.contains", P{"words": []any{"please", "thanks"}, "operator": "any"}, text("thanks!"), true},
		{"contains all missing", "default.contains", P{"words": []any{"please", "thanks"}, "operator": "all"}, text("thanks!"), false},
		{"contains none found", "default.contains", P{"words": []any{"darn"}, "operator": "none"}, text("oh darn"), false},
		{"contains none clean", "default.contains", P{"words": []any{"darn"}, "operator": "none"}, text("oh well"), true},
		{"contains is case-sensitive", "default.contains", P{"words": []any{"Darn"}}, text("oh darn"), false},

		{"urls valid", "default.validUrls", P{}, text("see https://example.com/a?b=c and http://10.0.0.1:8080/x."), true},
		{"urls invalid host", "default.validUrls", P{}, text("see https://exa_mple..com/"), false},
		{"urls bad port", "default.validUrls", P{}, text("see https://example.com:99999/"), false},
		{"urls none found", "default.validUrls", P{}, text("no links"), false},
		{"urls not", "default.validUrls", P{"not": true}, text("see https://-bad-.com"), true},
		{"urls onlyDNS host only", "default.validUrls", P{"onlyDNS": true}, text("(https://example.org/a|b)"), true},
		{"urls full syntax refuses the pipe", "default.validUrls", P{}, text("https://example.org/a|b"), false},

		{"code found", "default.containsCode", P{"format": "Python"}, text("```py\nprint(1)\n```"), true},
		{"code other language", "default.containsCode", P{"format": "SQL"}, text("```py\nprint(1)\n```"), false},
		{"code not", "default.containsCode", P{"format": "SQL", "not": true}, text("```py\nprint(1)\n```"), true},
		{"code none", "default.containsCode", P{"format": "SQL"}, text("select 1"), false},

		{"ends with", "default.endsWith", P{"suffix": "Done"}, text("All good. Done\n"), true},
		{"ends with and a period", "default.endsWith", P{"suffix": "Done"}, text("All good. Done."), true},
		{"does not end with", "default.endsWith", P{"suffix": "Done"}, text("Done? no"), false},
		{"ends with not", "default.endsWith", P{"suffix": "Done", "not": true}, text("Done? no"), true},

		{"upper", "default.alluppercase", P{}, text("HELLO, WORLD 42 ÉTÉ"), true},
		{"upper fails", "default.alluppercase", P{}, text("HELLO, World"), false},
		{"upper not", "default.alluppercase", P{"not": true}, text("HELLO, World"), true},
		{"lower", "default.alllowercase", P{}, text("hello, world"), true},
		{"lower fails", "default.alllowercase", P{}, text("hello, World"), false},
		{"lower alias", "default.isAllLowerCase", P{}, text("hello"), true},

		{"not null", "default.notNull", P{}, text("x"), true},
		{"null", "default.notNull", P{}, text("  \n"), false},
		{"null not", "default.notNull", P{"not": true}, text(""), true},

		{"model allowed", "default.modelWhitelist", P{"models": []any{"gpt-4o"}}, before(chatRequest("gpt-4o", "hi")), true},
		{"model refused", "default.modelWhitelist", P{"models": []any{"gpt-4o"}}, before(chatRequest("o1", "hi")), false},
		{"model not", "default.modelWhitelist", P{"models": []any{"o1"}, "not": true}, before(chatRequest("gpt-4o", "hi")), true},

		{"rules by metadata", "default.modelRules", P{"rules": P{"defaults": []any{"small"}, "metadata": P{"tier": P{"pro": []any{"big"}}}}},
			Input{Hook: BeforeRequest, Model: "big", Metadata: map[string]string{"tier": "pro"}}, true},
		{"rules defaults", "default.modelRules", P{"rules": P{"defaults": []any{"small"}, "metadata": P{"tier": P{"pro": []any{"big"}}}}},
			Input{Hook: BeforeRequest, Model: "big", Metadata: map[string]string{"tier": "free"}}, false},

		{"metadata keys all", "default.requiredMetadataKeys", P{"metadataKeys": []any{"user", "team"}},
			Input{Hook: BeforeRequest, Metadata: map[string]string{"user": "u", "team": "t"}}, true},
		{"metadata keys all missing", "default.requiredMetadataKeys", P{"metadataKeys": []any{"user", "team"}},
			Input{Hook: BeforeRequest, Metadata: map[string]string{"user": "u"}}, false},
		{"metadata keys none", "default.requiredMetadataKeys", P{"metadataKeys": []any{"debug"}, "operator": "none"},
			Input{Hook: BeforeRequest, Metadata: map[string]string{"user": "u"}}, true},
		{"metadata pairs all", "default.requiredMetadataKeyPairs", P{"metadataPairs": P{"env": "prod", "team": "ml"}},
			Input{Hook: BeforeRequest, Metadata: map[string]string{"env": "prod", "team": "ml"}}, true},
		{"metadata pairs wrong value", "default.requiredMetadataKeyPairs", P{"metadataPairs": P{"env": "prod"}},
			Input{Hook: BeforeRequest, Metadata: map[string]string{"env": "dev"}}, false},
		{"metadata pairs any", "default.requiredMetadataKeyPairs", P{"metadataPairs": P{"env": "prod", "team": "ml"}, "operator": "any"},
			Input{Hook: BeforeRequest, Metadata: map[string]string{"team": "ml"}}, true},
		{"metadata pairs none", "default.requiredMetadataKeyPairs", P{"metadataPairs": P{"env": "prod"}, "operator": "none"},
			Input{Hook: BeforeRequest, Metadata: map[string]string{"env": "prod"}}, false},

		{"request type allowed", "default.allowedRequestTypes", P{"allowedTypes": []any{"chatComplete", "embed"}}, Input{Hook: BeforeRequest, Endpoint: "embed"}, true},
		{"request type not allowed", "default.allowedRequestTypes", P{"allowedTypes": []any{"chatComplete"}}, Input{Hook: BeforeRequest, Endpoint: "embed"}, false},
		{"request type blocked", "default.allowedRequestTypes", P{"blockedTypes": "embed, rerank"}, Input{Hook: BeforeRequest, Endpoint: "rerank"}, false},
		{"request type stream blocked", "default.allowedRequestTypes", P{"blockedTypes": []any{"stream-chatComplete"}},
			Input{Hook: BeforeRequest, Endpoint: "chatComplete", Request: json.RawMessage(`{"stream":true}`)}, false},
		{"request type from metadata", "default.allowedRequestTypes", P{}, Input{Hook: BeforeRequest, Endpoint: "embed", Metadata: map[string]string{"supported_endpoints": "chatComplete"}}, false},
		{"request type unrestricted", "default.allowedRequestTypes", P{}, Input{Hook: BeforeRequest, Endpoint: "embed"}, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := build(t, tc.id, decoded(t, tc.params))
			v, err := c.Run(context.Background(), tc.in)
			require.NoError(t, err)
			assert.Equal(t, tc.pass, v.Pass, "explanation: %s data: %v", v.Explanation, v.Data)
			assert.NotEmpty(t, v.Explanation)
		})
	}
}

func TestRequestParametersCheck(t *testing.T) {
	body := `{"model":"m","messages":[],"temperature":0.7,"stop":["a","b"],"tools":[
		{"type":"function","function":{"name":"get_weather"}},{"type":"web_search"},{"name":"calc","input_schema":{}}]}`
	in := Input{Hook: BeforeRequest, Endpoint: "chatComplete", Request: json.RawMessage(body)}
	cases := []struct {
		name   string
		params P
		pass   bool
	}{
		{"no rules", P{}, true},
		{"blocked tool type", P{"tools": P{"blockedTypes": []any{"web_search"}}}, false},
		{"allowed tool types", P{"tools": P{"allowedTypes": []any{"function", "web_search"}}}, true},
		{"tool type not allowed", P{"tools": P{"allowedTypes": []any{"function"}}}, false},
		{"blocked function", P{"tools": P{"blockedFunctionNames": []any{"calc"}}}, false},
		{"allowed functions", P{"tools": P{"allowedFunctionNames": []any{"get_weather", "calc"}}}, true},
		{"function not allowed", P{"tools": P{"allowedFunctionNames": []any{"get_weather"}}}, false},
		{"blocked key", P{"params": P{"blockedKeys": []any{"temperature"}}}, false},
		{"allowed keys (content keys always)", P{"params": P{"allowedKeys": []any{"temperature", "stop", "tools"}}}, true},
		{"key not allowed", P{"params": P{"allowedKeys": []any{"temperature"}}}, false},
		{"blocked value", P{"params": P{"values": P{"temperature": P{"blockedValues": []any{0.7}}}}}, false},
		{"allowed values", P{"params": P{"values": P{"temperature": P{"allowedValues": []any{0, 0.7}}}}}, true},
		{"value not allowed", P{"params": P{"values": P{"temperature": P{"allowedValues": []any{0}}}}}, false},
		{"array values item by item", P{"params": P{"values": P{"stop": P{"blockedValues": []any{"b"}}}}}, false},
		{"rule on an absent key", P{"params": P{"values": P{"top_p": P{"allowedValues": []any{1}}}}}, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			v, err := build(t, "default.requestParametersCheck", decoded(t, tc.params)).Run(context.Background(), in)
			require.NoError(t, err)
			assert.Equal(t, tc.pass, v.Pass, v.Explanation)
		})
	}
}

func TestAddPrefix(t *testing.T) {
	chat := `{"model":"m","temperature":0.25,"messages":[{"role":"system","content":"be nice"},{"role":"user","content":"hi"}]}`
	parts := `{"messages":[{"role":"user","content":[{"type":"text","text":"hi"},{"type":"image_url","image_url":{"url":"x"}}]}]}`
	cases := []struct {
		name   string
		params P
		body   string
		want   string // the messages (or prompt) after, as JSON; "" when unchanged
	}{
		{"user message", P{"prefix": "P: "}, chat, `[{"content":"be nice","role":"system"},{"content":"P: hi","role":"user"}]`},
		{"text part", P{"prefix": "P: "}, parts, `[{"content":[{"text":"P: hi","type":"text"},{"image_url":{"url":"x"},"type":"image_url"}],"role":"user"}]`},
		{"system message", P{"prefix": "S. ", "applyToRole": "system"}, chat, `[{"content":"S. be nice","role":"system"},{"content":"hi","role":"user"}]`},
		{"new message before", P{"prefix": "P", "addToExisting": false}, chat, `[{"content":"be nice","role":"system"},{"content":"P","role":"user"},{"content":"hi","role":"user"}]`},
		{"only if empty: not empty", P{"prefix": "S", "applyToRole": "system", "onlyIfEmpty": true}, chat, ""},
		{"missing system added first", P{"prefix": "S", "applyToRole": "system"}, parts, `[{"content":"S","role":"system"},{"content":[{"text":"hi","type":"text"},{"image_url":{"url":"x"},"type":"image_url"}],"role":"user"}]`},
		{"completion prompt", P{"prefix": "P: "}, `{"prompt":"hi"}`, `"P: hi"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			v, err := build(t, "default.addPrefix", decoded(t, tc.params)).Run(context.Background(), Input{Hook: BeforeRequest, Request: json.RawMessage(tc.body)})
			require.NoError(t, err)
			assert.True(t, v.Pass)
			if tc.want == "" {
				assert.Nil(t, v.Transformed)
				return
			}
			var got map[string]json.RawMessage
			require.NoError(t, json.Unmarshal(v.Transformed, &got))
			key := "messages"
			if _, ok := got["prompt"]; ok {
				key = "prompt"
			}
			assert.JSONEq(t, tc.want, string(got[key]))
			if _, ok := got["temperature"]; ok {
				assert.Equal(t, "0.25", string(got["temperature"]), "numbers are kept as sent")
			}
		})
	}
}

func TestRegexReplace(t *testing.T) {
	in := before(chatRequest("m", "call 555-0100 or 555-0199"))
	v, err := build(t, "default.regexReplace", P{"rule": `/\d{3}-\d{4}/g`, "redactText": "[PHONE]"}).Run(context.Background(), in)
	require.NoError(t, err)
	assert.True(t, v.Pass)
	assert.Equal(t, "call [PHONE] or [PHONE]", ExtractText(BeforeRequest, v.Transformed))

	v, err = build(t, "default.regexReplace", P{"rule": `\d{3}-\d{4}`, "failOnDetection": true}).Run(context.Background(), in)
	require.NoError(t, err)
	assert.False(t, v.Pass)
	assert.Equal(t, "call [REDACTED] or 555-0199", ExtractText(BeforeRequest, v.Transformed), "without g only the first")
}

func TestParamErrors(t *testing.T) {
	cases := []struct {
		id     string
		params P
		param  string // the parameter the first error names
		msg    string // a part of its message
	}{
		{"default.nope", P{}, "id", "not a known check"},
		{"default.regexMatch", P{}, "rule", "required"},
		{"default.regexMatch", P{"rule": "(?<=a)b"}, "rule", "RE2"},
		{"default.regexMatch", P{"rule": 3}, "rule", "must be a string, got number"},
		{"default.regexMatch", P{"rule": "a", "not": "yes"}, "not", "boolean"},
		{"default.regexMatch", P{"rule": "a", "nott": true}, "nott", "not a parameter"},
		{"default.regexMatch", P{"rule": "a", "timeout": 120000}, "timeout", "between 1 and 60000"},
		{"default.sentenceCount", P{"minSentences": -1}, "minSentences", "between 0 and"},
		{"default.sentenceCount", P{"minSentences": 5, "maxSentences": 2}, "minSentences", "must not exceed maxSentences (2)"},
		{"default.wordCount", P{"minWords": 1.5}, "minWords", "whole number"},
		{"default.characterCount", P{"maxCharacters": "10"}, "maxCharacters", "must be a number"},
		{"default.jsonSchema", P{}, "schema", "required"},
		{"default.jsonSchema", P{"schema": P{"type": "nonsense"}}, "schema", "not a valid JSON Schema"},
		{"default.jsonSchema", P{"schema": P{"$ref": "file:///etc/passwd"}}, "schema", "not a valid JSON Schema"},
		{"default.jsonKeys", P{"keys": []any{}}, "keys", "at least one"},
		{"default.jsonKeys", P{"keys": []any{"a"}, "operator": "some"}, "operator", "any, all, none"},
		{"default.contains", P{"words": []any{"a", 2}}, "words[1]", "must be a string"},
		{"default.containsCode", P{"format": "Cobol"}, "format", "must be one of"},
		{"default.endsWith", P{"suffix": ""}, "suffix", "must not be empty"},
		{"default.validUrls", P{"onlyDNS": 1}, "onlyDNS", "boolean"},
		{"default.modelWhitelist", P{}, "models", "required"},
		{"default.modelRules", P{}, "rules", "required"},
		{"default.modelRules", P{"rules": P{"metadata": P{"tier": P{"pro": "big"}}}}, "rules.metadata.tier.pro", "array of strings"},
		{"default.requiredMetadataKeys", P{"metadataKeys": []any{"a"}, "operator": "most"}, "operator", "all, any, none"},
		{"default.requiredMetadataKeyPairs", P{}, "metadataPairs", "required"},
		{"default.requiredMetadataKeyPairs", P{"metadataPairs": P{"env": 1}}, "metadataPairs.env", "must be a string"},
		{"default.requiredMetadataKeyPairs", P{"metadataPairs": P{}}, "metadataPairs", "at least one"},
		{"default.requestParametersCheck", P{"tools": P{"blockedTypes": "function"}}, "tools.blockedTypes", "array of strings"},
		{"default.requestParametersCheck", P{"tools": P{"allowed": []any{"x"}}}, "tools.allowed", "not a parameter"},
		{"default.requestParametersCheck", P{"params": P{"values": P{"temperature": P{"allowedValues": 1}}}}, "params.values.temperature.allowedValues", "must be an array"},
		{"default.requestParametersCheck", P{"params": P{"blockedKeys": []any{"a"}, "allowedKeys": []any{"a"}}}, "params.blockedKeys", "allowed list too"},
		{"default.allowedRequestTypes", P{"allowedTypes": []any{"chat"}}, "allowedTypes[0]", "must be one of"},
		{"default.allowedRequestTypes", P{"allowedTypes": []any{"embed"}, "blockedTypes": []any{"embed"}}, "blockedTypes", "allowedTypes too"},
		{"default.addPrefix", P{}, "prefix", "required"},
		{"default.addPrefix", P{"prefix": "x", "applyToRole": "tool"}, "applyToRole", "user, system, assistant"},
		{"default.regexReplace", P{"rule": "/a/x"}, "rule", "flag"},
		{"default.pii", P{"categories": []any{"email", "passport"}}, "categories[1]", "must be one of"},
		{"default.pii", P{"redact": "true"}, "redact", "boolean"},
	}
	reg := NewRegistry()
	for _, tc := range cases {
		t.Run(tc.id+"/"+tc.param, func(t *testing.T) {
			_, err := reg.Build(tc.id, decoded(t, tc.params), Deps{})
			require.Error(t, err)
			var pe *ParamError
			require.True(t, errors.As(err, &pe), "a *ParamError: %v", err)
			assert.Equal(t, tc.param, pe.Param, err.Error())
			assert.Contains(t, pe.Message, tc.msg)
		})
	}
}

func TestParamErrorsAreAllReported(t *testing.T) {
	_, err := NewRegistry().Build("default.wordCount", P{"minWords": -1, "maxWords": "x", "extra": 1}, Deps{})
	require.Error(t, err)
	for _, p := range []string{"minWords:", "maxWords:", "extra:"} {
		assert.Contains(t, err.Error(), p)
	}
}

func TestRegistry(t *testing.T) {
	r := NewRegistry()
	for _, id := range []string{"default.regexMatch", "default.pii", "default.requestParametersCheck", "default.requiredMetadataKeyPairs"} {
		assert.True(t, r.Known(id), id)
	}
	assert.False(t, r.Known("default.webhook"), "network checks are added by AddNetworkChecks")
	ids := r.IDs()
	assert.IsIncreasing(t, ids)
	for _, id := range ids {
		assert.True(t, strings.HasPrefix(id, "default."), id)
	}

	r.Add("acme.check", func(map[string]any, Deps) (Check, error) { return passCheck{}, nil })
	assert.True(t, r.Known("acme.check"))
	assert.Panics(t, func() { r.Add("acme.check", func(map[string]any, Deps) (Check, error) { return nil, nil }) })

	cfg, err := r.Configure("default.contains", "no swearing", decoded(t, P{"words": []any{"x"}, "failOnError": true, "timeout": 1500}), Deps{})
	require.NoError(t, err)
	assert.Equal(t, "default.contains", cfg.ID)
	assert.Equal(t, "no swearing", cfg.Name)
	assert.True(t, cfg.FailOnError)
	assert.Equal(t, 1500*1e6, float64(cfg.Timeout))
}

type passCheck struct{}

func (passCheck) Run(context.Context, Input) (Verdict, error) { return Verdict{Pass: true}, nil }

func TestExtractText(t *testing.T) {
	cases := []struct {
		name string
		hook Hook
		body string
		want string
	}{
		{"chat: the last message", BeforeRequest, `{"messages":[{"role":"user","content":"a"},{"role":"user","content":"b"}]}`, "b"},
		{"chat: text parts", BeforeRequest, `{"messages":[{"role":"user","content":[{"type":"text","text":"a"},{"type":"image_url"},{"type":"text","text":"b"}]}]}`, "a\nb"},
		{"completion", BeforeRequest, `{"prompt":"p"}`, "p"},
		{"embeddings", BeforeRequest, `{"input":["x","y"]}`, "x\ny"},
		{"chat answer", AfterRequest, `{"choices":[{"message":{"content":"A"}},{"message":{"content":"B"}}]}`, "A"},
		{"completion answer", AfterRequest, `{"choices":[{"text":"T"}]}`, "T"},
		{"messages answer", AfterRequest, `{"content":[{"type":"text","text":"M"}]}`, "M"},
		{"not JSON", AfterRequest, `nope`, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, ExtractText(tc.hook, json.RawMessage(tc.body)))
		})
	}
}
