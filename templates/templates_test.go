package templates

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/causeway/causeway/domain"
)

// partials is a fixed set of partials by name, prepared as they are asked for.
type partials map[string]string

func (p partials) Partial(name string) (*Partial, error) {
	s, ok := p[name]
	if !ok {
		return nil, domain.Invalid("partials", "partial %q not found", name)
	}
	return PreparePartial("partial "+name, s)
}

// prepared is a fixed set of partials prepared once, as the gateway's index keeps them.
type prepared map[string]*Partial

func (p prepared) Partial(name string) (*Partial, error) {
	if pp, ok := p[name]; ok {
		return pp, nil
	}
	return nil, domain.Invalid("partials", "partial %q not found", name)
}

func vars(t *testing.T, raw string) map[string]any {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(raw))
	dec.UseNumber()
	var v map[string]any
	require.NoError(t, dec.Decode(&v))
	return v
}

func mustParse(t *testing.T, text string) *Template {
	t.Helper()
	tmpl, err := Parse("string", text)
	require.NoError(t, err)
	return tmpl
}

func messagesJSON(t *testing.T, msgs []any) string {
	t.Helper()
	b, err := json.Marshal(msgs)
	require.NoError(t, err)
	return string(b)
}

func appErr(t *testing.T, err error) *domain.Error {
	t.Helper()
	require.Error(t, err)
	var e *domain.Error
	require.ErrorAs(t, err, &e)
	assert.Equal(t, domain.CodeInvalid, e.Code)
	return e
}

// A text template is one user message; values go in as they are (a prompt is not HTML);
// sections repeat and hide, inverted sections show what is absent; numbers keep their form.
func TestRenderText(t *testing.T) {
	tmpl := mustParse(t, "Dear {{name}} & co,{{#items}} [{{.}}]{{/items}}{{^vip}} (standard){{/vip}} total {{total}}")
	got, err := tmpl.Render(vars(t, `{"name":"O'Brien <Ltd>","items":["a","b"],"total":1000000}`), NoPartials{})
	require.NoError(t, err)
	assert.JSONEq(t, `[{"role":"user","content":"Dear O'Brien <Ltd> & co, [a] [b] (standard) total 1000000"}]`, messagesJSON(t, got))
}

// Chat messages: each content is rendered, text parts too; the other fields stay.
func TestRenderMessages(t *testing.T) {
	tmpl := mustParse(t, `[{"role":"system","content":"You are {{persona}}."},
		{"role":"user","content":[{"type":"text","text":"Tell me about {{topic}}"},{"type":"image_url","image_url":{"url":"https://x/{{topic}}"}}],"name":"ann"}]`)
	got, err := tmpl.Render(vars(t, `{"persona":"a \"careful\" guide","topic":"tides"}`), NoPartials{})
	require.NoError(t, err)
	assert.JSONEq(t, `[{"role":"system","content":"You are a \"careful\" guide."},
		{"role":"user","content":[{"type":"text","text":"Tell me about tides"},{"type":"image_url","image_url":{"url":"https://x/{{topic}}"}}],"name":"ann"}]`,
		messagesJSON(t, got))
}

// Partials nest; their variables are raw too, and needed when they are included outside a
// section; a partial inside a section sees the section's item.
func TestRenderNestedPartials(t *testing.T) {
	p := partials{
		"header": "Hello {{name}}. {{> tone}}",
		"tone":   "Be {{tone}} & brief.",
		"item":   "- {{title}}\n",
	}
	tmpl := mustParse(t, "{{> header}}\n{{#docs}}{{> item}}{{/docs}}")
	got, err := tmpl.Render(vars(t, `{"name":"<Ann>","tone":"warm","docs":[{"title":"A&B"},{"title":"C"}]}`), p)
	require.NoError(t, err)
	// A partial tag alone on its line takes the line's end with it (Mustache's standalone rule).
	assert.JSONEq(t, `[{"role":"user","content":"Hello <Ann>. Be warm & brief.- A&B\n- C\n"}]`, messagesJSON(t, got))

	_, err = tmpl.Render(vars(t, `{"docs":[]}`), p)
	e := appErr(t, err)
	assert.Equal(t, "variables", e.Param)
	assert.Contains(t, e.Message, "name, tone", "every missing variable is named, the partials' too")
	assert.NotContains(t, e.Message, "title", "a variable inside a section may be the section's own")
}

// Missing variables are named, dotted ones too; null counts as missing; a variable used only
// inside a section is not required.
func TestRenderRefusesMissingVariables(t *testing.T) {
	tmpl := mustParse(t, `[{"role":"system","content":"{{a}} {{user.name}}"},{"role":"user","content":"{{b}}{{#opt}}{{c}}{{/opt}}"}]`)
	_, err := tmpl.Render(vars(t, `{"a":"x","user":{"id":1},"b":null}`), NoPartials{})
	e := appErr(t, err)
	assert.Equal(t, "variables", e.Param)
	assert.Equal(t, "the prompt needs variables the request does not give: b, user.name", e.Message)
	got, err := tmpl.Render(vars(t, `{"a":"x","user":{"name":"Ann"},"b":false}`), NoPartials{})
	require.NoError(t, err)
	assert.JSONEq(t, `[{"role":"system","content":"x Ann"},{"role":"user","content":"false"}]`, messagesJSON(t, got))
}

// A cycle between partials is refused before anything is rendered, naming its partials;
// a partial that includes itself too.
func TestRenderRefusesPartialCycles(t *testing.T) {
	p := partials{"a": "A {{> b}}", "b": "B {{#x}}{{> c}}{{/x}}", "c": "C {{> a}}", "self": "{{> self}}"}
	for template, cycle := range map[string]string{
		"start {{> a}}": "a → b → c → a",
		"{{> self}}":    "self → self",
	} {
		_, err := mustParse(t, template).Render(map[string]any{"x": true}, p)
		e := appErr(t, err)
		assert.Equal(t, "partials", e.Param)
		assert.Contains(t, e.Message, cycle)
	}
	// A partial included twice, not in a cycle, is fine.
	got, err := mustParse(t, "{{> b2}}{{> b2}}").Render(nil, partials{"b2": "x"})
	require.NoError(t, err)
	assert.JSONEq(t, `[{"role":"user","content":"xx"}]`, messagesJSON(t, got))
}

func TestRenderRefusesUnknownAndBrokenPartials(t *testing.T) {
	_, err := mustParse(t, "{{> nope}}").Render(nil, partials{})
	assert.Equal(t, "partials", appErr(t, err).Param)
	_, err = mustParse(t, "{{> broken}}").Render(nil, partials{"broken": "{{#open}} never closed"})
	e := appErr(t, err)
	assert.Equal(t, "partial broken", e.Param)
	chain := partials{}
	for i := 0; i < MaxPartialDepth+2; i++ {
		chain[string(rune('a'+i))] = "{{> " + string(rune('a'+i+1)) + "}}"
	}
	chain[string(rune('a'+MaxPartialDepth+2))] = "end"
	_, err = mustParse(t, "{{> a}}").Render(nil, chain)
	assert.Contains(t, appErr(t, err).Message, "deep")
}

func TestParseRefusesBadTemplates(t *testing.T) {
	for _, tc := range []struct{ text, param string }{
		{"{{#open}} never closed", "string"},
		{"{{=<% %>=}} <%x%>", "string"},
		{`[{"role":"robot","content":"x"}]`, "string[0].role"},
		{`[{"role":"user","content":"{{/x}}"}]`, "string[0].content"},
		{`[{"role":"user","content":[{"type":"text","text":"{{#a}}"}]}]`, "string[0].content[0].text"},
		{`[{"role":"user","content":42}]`, "string[0].content"},
	} {
		_, err := Parse("string", tc.text)
		assert.Equal(t, tc.param, appErr(t, err).Param, tc.text)
	}
	// Text that only looks like JSON is text.
	for _, text := range []string{"[Instructions] answer {{q}}", "[1, 2] and {{q}}"} {
		got, err := mustParse(t, text).Render(map[string]any{"q": "why"}, NoPartials{})
		require.NoError(t, err)
		assert.Len(t, got, 1)
	}
	assert.Equal(t, "string", appErr(t, CheckPartial("string", "{{^x}}")).Param)
	assert.NoError(t, CheckPartial("string", "Be {{tone}}."))
}

// Sections cannot repeat a template into an answer without bound.
func TestRenderIsBounded(t *testing.T) {
	items := make([]any, 1000)
	for i := range items {
		items[i] = i
	}
	_, err := mustParse(t, "{{#items}}"+strings.Repeat("x", 5000)+"{{/items}}").Render(map[string]any{"items": items}, NoPartials{})
	assert.Contains(t, appErr(t, err).Message, "larger than")
}

func TestRawVariables(t *testing.T) {
	assert.Equal(t, "{{&a}} {{& b }} {{{c}}} {{#s}}{{&.}}{{/s}} {{!note}} {{> p}} {{^n}}x{{/n}}",
		rawVariables("{{a}} {{ b }} {{{c}}} {{#s}}{{.}}{{/s}} {{!note}} {{> p}} {{^n}}x{{/n}}"))
}

// The cost of rendering a prompt with a partial on the gateway's path: parse, walk, check,
// render.
func BenchmarkRender(b *testing.B) {
	tmpl, err := Parse("string", `[{"role":"system","content":"You are {{persona}}. {{> tone}}"},{"role":"user","content":"{{question}}"}]`)
	require.NoError(b, err)
	tone, err := PreparePartial("tone", "Answer in a {{tone}} tone, in {{language}}.")
	require.NoError(b, err)
	p := prepared{"tone": tone}
	v := map[string]any{"persona": "a support agent", "tone": "warm", "language": "English", "question": "Where is my order?"}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := tmpl.Render(v, p); err != nil {
			b.Fatal(err)
		}
	}
}
