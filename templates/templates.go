// Package templates renders prompt templates into the chat messages a prompt sends. A
// template is Mustache (github.com/cbroglie/mustache: variables, sections, inverted sections,
// comments and partials, {{> name}}), either as one text (sent as one user message) or as a
// JSON array of chat messages whose contents (strings, or the text of text parts) are each
// Mustache. Partials are found by name through Partials, which the caller resolves (a
// partial's default, numbered or labelled version).
//
// Before anything is rendered, the template and every partial it reaches are walked: a
// partial that includes itself, directly or not, is refused naming the cycle, and so is a
// variable the template needs that the request does not give (one used outside any section,
// in the template or in a partial it includes outside a section: inside a section a name may
// be the section's own). A prompt is not HTML: values are inserted as they are, never
// escaped.
//
// It imports the standard library, domain (whose errors it answers) and the Mustache library;
// nothing else of Causeway.
package templates

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/cbroglie/mustache"

	"github.com/causeway/causeway/domain"
)

// Bounds of a render.
const (
	// MaxPartials bounds the distinct partials one render includes.
	MaxPartials = 64
	// MaxPartialDepth bounds how deep partials include partials.
	MaxPartialDepth = 10
	// MaxRenderedBytes bounds the text one render produces (sections repeat).
	MaxRenderedBytes = 4 << 20
)

// Roles a message of a template may have.
var roles = []string{"system", "developer", "user", "assistant", "tool", "function"}

// Template is a prompt's template, checked: one text, or chat messages.
type Template struct {
	text     string
	messages []map[string]any // nil for a text template
}

// Partials finds a partial by the name a template includes it by. An error is the answer to
// give (a *domain.Error naming what is wrong: not found, of another workspace).
type Partials interface {
	Partial(name string) (*Partial, error)
}

// NoPartials is the Partials of a template that may include none.
type NoPartials struct{}

// Partial refuses every name.
func (NoPartials) Partial(name string) (*Partial, error) {
	return nil, domain.Invalid("partials", "partial %q not found", name)
}

// Partial is a partial's text made ready to include: checked (CheckPartial), its variables
// made raw, and its tags read for the walk. It does not change once made, so a version of a
// partial is prepared once (the gateway's index prepares each as it is saved).
type Partial struct {
	text string
	tags []mustache.Tag
}

// PreparePartial checks a partial's text (param names it in errors) and makes it ready to
// include.
func PreparePartial(param, text string) (*Partial, error) {
	if err := check(param, text); err != nil {
		return nil, err
	}
	raw := rawVariables(text)
	tmpl, err := mustache.ParseStringPartials(raw, &mustache.StaticProvider{})
	if err != nil {
		return nil, domain.Invalid(param, "%s is not a valid Mustache template: %v", param, err)
	}
	return &Partial{text: raw, tags: tmpl.Tags()}, nil
}

// Parse checks a prompt's template (param names it in errors, with the message and field
// within: string[1].content): a JSON array of message objects {role, content, ...} is chat
// messages, anything else one text; every text must be Mustache that parses, without
// set-delimiter tags.
func Parse(param, text string) (*Template, error) {
	if msgs, ok := messageArray(text); ok {
		for i, m := range msgs {
			p := fmt.Sprintf("%s[%d]", param, i)
			role, _ := m["role"].(string)
			if !slices.Contains(roles, role) {
				return nil, domain.Invalid(p+".role", "%s.role must be one of %s (got %v)", p, strings.Join(roles, ", "), m["role"])
			}
			if err := eachText(m, p, func(path, s string) error { return check(path, s) }); err != nil {
				return nil, err
			}
		}
		return &Template{text: text, messages: msgs}, nil
	}
	if err := check(param, text); err != nil {
		return nil, err
	}
	return &Template{text: text}, nil
}

// CheckPartial checks a partial's text: Mustache that parses, without set-delimiter tags.
func CheckPartial(param, text string) error {
	_, err := PreparePartial(param, text)
	return err
}

// messageArray reads text as a JSON array of objects, if it is one.
func messageArray(text string) ([]map[string]any, bool) {
	trimmed := strings.TrimSpace(text)
	if !strings.HasPrefix(trimmed, "[") {
		return nil, false
	}
	var raw []any
	dec := json.NewDecoder(strings.NewReader(trimmed))
	dec.UseNumber()
	if err := dec.Decode(&raw); err != nil || dec.More() || len(raw) == 0 {
		return nil, false
	}
	out := make([]map[string]any, len(raw))
	for i, el := range raw {
		m, ok := el.(map[string]any)
		if !ok {
			return nil, false
		}
		out[i] = m
	}
	return out, true
}

// eachText calls fn with every Mustache text of a message: its content when a string, the
// text of each text part when an array. A content of another kind is refused.
func eachText(m map[string]any, p string, fn func(path, s string) error) error {
	switch c := m["content"].(type) {
	case nil:
		return nil
	case string:
		return fn(p+".content", c)
	case []any:
		for j, part := range c {
			pp := fmt.Sprintf("%s.content[%d]", p, j)
			obj, ok := part.(map[string]any)
			if !ok {
				return domain.Invalid(pp, "%s must be an object {type, text}", pp)
			}
			if s, ok := obj["text"].(string); ok {
				if err := fn(pp+".text", s); err != nil {
					return err
				}
			}
		}
		return nil
	}
	return domain.Invalid(p+".content", "%s.content must be a string or an array of parts", p)
}

var setDelimiter = regexp.MustCompile(`\{\{\s*=`)

// check parses one Mustache text, param naming it in errors.
func check(param, text string) error {
	if setDelimiter.MatchString(text) {
		return domain.Invalid(param, "%s: set-delimiter tags ({{=<%% %%>=}}) are not supported in prompt templates", param)
	}
	if _, err := mustache.ParseStringPartialsRaw(text, &mustache.StaticProvider{}, true); err != nil {
		return domain.Invalid(param, "%s is not a valid Mustache template: %v", param, err)
	}
	return nil
}

// Render renders the template with vars (a JSON object as decoded, numbers as json.Number or
// float64), finding partials through partials, into chat messages: the template's messages
// with their texts rendered, or one user message of the rendered text.
func (t *Template) Render(vars map[string]any, partials Partials) ([]any, error) {
	vars = withoutNulls(vars)
	r := &render{partials: partials, found: map[string]*Partial{}, explored: map[string]bool{}, out: &limitedBuffer{max: MaxRenderedBytes}}
	if t.messages == nil {
		s, err := r.text("string", t.text, vars)
		if err != nil {
			return nil, err
		}
		return []any{map[string]any{"role": "user", "content": s}}, nil
	}
	// Walk every text first, so that one answer names every variable missing.
	var parsed []*mustache.Template
	for i, m := range t.messages {
		err := eachText(m, fmt.Sprintf("string[%d]", i), func(path, s string) error {
			tmpl, err := r.walk(path, s)
			parsed = append(parsed, tmpl)
			return err
		})
		if err != nil {
			return nil, err
		}
	}
	if err := r.requireVariables(vars); err != nil {
		return nil, err
	}
	out := make([]any, len(t.messages))
	n := 0
	for i, m := range t.messages {
		msg := cloneJSON(m).(map[string]any)
		rendered := func(s string) (string, error) {
			tmpl := parsed[n]
			n++
			return r.execute(tmpl, vars)
		}
		switch c := msg["content"].(type) {
		case string:
			s, err := rendered(c)
			if err != nil {
				return nil, err
			}
			msg["content"] = s
		case []any:
			for _, part := range c {
				obj := part.(map[string]any)
				if s, ok := obj["text"].(string); ok {
					text, err := rendered(s)
					if err != nil {
						return nil, err
					}
					obj["text"] = text
				}
			}
		}
		out[i] = msg
	}
	return out, nil
}

// render is one render in progress: the partials reached, by name (their texts made raw, as
// the library parses a partial anew each time it includes it), and the variables needed.
type render struct {
	partials Partials
	found    map[string]*Partial
	explored map[string]bool // partial name (+ "\x00top" when walked outside a section)
	stack    []string
	required map[string]bool
	out      *limitedBuffer
}

// text renders one text template.
func (r *render) text(param, s string, vars map[string]any) (string, error) {
	tmpl, err := r.walk(param, s)
	if err != nil {
		return "", err
	}
	if err := r.requireVariables(vars); err != nil {
		return "", err
	}
	return r.execute(tmpl, vars)
}

// walk parses a text of the template and walks it and the partials it reaches.
func (r *render) walk(param, s string) (*mustache.Template, error) {
	tmpl, err := mustache.ParseStringPartialsRaw(s, r, true)
	if err != nil {
		return nil, domain.Invalid(param, "%s is not a valid Mustache template: %v", param, err)
	}
	return tmpl, r.walkTags(tmpl.Tags(), true)
}

func (r *render) walkTags(tags []mustache.Tag, top bool) error {
	for _, tag := range tags {
		switch tag.Type() {
		case mustache.Variable:
			if top && tag.Name() != "." {
				if r.required == nil {
					r.required = map[string]bool{}
				}
				r.required[tag.Name()] = true
			}
		case mustache.Section, mustache.InvertedSection:
			if err := r.walkTags(tag.Tags(), false); err != nil {
				return err
			}
		case mustache.Partial:
			if err := r.include(tag.Name(), top); err != nil {
				return err
			}
		}
	}
	return nil
}

// include walks a partial, refusing a cycle (naming it) and going too deep or too wide.
func (r *render) include(name string, top bool) error {
	if i := slices.Index(r.stack, name); i >= 0 {
		cycle := append(slices.Clone(r.stack[i:]), name)
		return domain.Invalid("partials", "the partials include each other in a cycle: %s", strings.Join(cycle, " → "))
	}
	key := name
	if top {
		key += "\x00top"
	}
	if r.explored[key] || (!top && r.explored[name+"\x00top"]) {
		return nil
	}
	if len(r.stack) >= MaxPartialDepth {
		return domain.Invalid("partials", "partials include partials more than %d deep (%s → %s)", MaxPartialDepth, strings.Join(r.stack, " → "), name)
	}
	p, seen := r.found[name]
	if !seen {
		if len(r.found) >= MaxPartials {
			return domain.Invalid("partials", "a prompt may include at most %d partials", MaxPartials)
		}
		var err error
		if p, err = r.partials.Partial(name); err != nil {
			return err
		}
		r.found[name] = p
	}
	r.stack = append(r.stack, name)
	err := r.walkTags(p.tags, top)
	r.stack = r.stack[:len(r.stack)-1]
	r.explored[key] = true
	return err
}

// Get gives the library a partial's text, as the walk found it (mustache.PartialProvider).
func (r *render) Get(name string) (string, error) {
	if p := r.found[name]; p != nil {
		return p.text, nil
	}
	return "", nil
}

// requireVariables refuses a render that lacks variables the template needs, naming every one.
func (r *render) requireVariables(vars map[string]any) error {
	var missing []string
	for name := range r.required {
		if !present(vars, name) {
			missing = append(missing, name)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	sort.Strings(missing)
	return domain.Invalid("variables", "the prompt needs variables the request does not give: %s", strings.Join(missing, ", "))
}

// present reports whether a variable (a dotted path into objects) has a value.
func present(vars map[string]any, name string) bool {
	var cur any = vars
	for _, part := range strings.Split(name, ".") {
		m, ok := cur.(map[string]any)
		if !ok {
			return false
		}
		if cur, ok = m[part]; !ok || cur == nil {
			return false
		}
	}
	return true
}

// execute renders a walked template, bounded by MaxRenderedBytes.
func (r *render) execute(tmpl *mustache.Template, vars map[string]any) (string, error) {
	r.out.Reset()
	if err := tmpl.FRender(r.out, vars); err != nil {
		if errors.Is(err, errTooLarge) {
			return "", domain.Invalid("variables", "the rendered prompt is larger than %d bytes", MaxRenderedBytes)
		}
		return "", domain.Invalid("string", "the template could not be rendered: %v", err)
	}
	if r.out.over {
		return "", domain.Invalid("variables", "the rendered prompt is larger than %d bytes", MaxRenderedBytes)
	}
	return r.out.String(), nil
}

// variableTag is a variable tag in the default delimiters, and a triple mustache, which is
// matched whole so that its inner braces are not taken for a tag.
var variableTag = regexp.MustCompile(`\{\{\{[^}]*\}\}\}|\{\{(\s*)([^{#^/!>&=<\s}][^}]*)\}\}`)

// rawVariables makes a partial's variable tags raw ({{name}} → {{&name}}): the library parses
// a partial anew whenever it includes one, escaping its variables for HTML, which a prompt is
// not. Set-delimiter tags are refused (check), so the default delimiters are the only ones.
func rawVariables(text string) string {
	if !strings.Contains(text, "{{") {
		return text
	}
	return variableTag.ReplaceAllStringFunc(text, func(tag string) string {
		if strings.HasPrefix(tag, "{{{") {
			return tag
		}
		return "{{&" + tag[2:]
	})
}

// withoutNulls drops null values from objects, so that a variable sent as null is missing
// rather than rendered as "<nil>".
func withoutNulls(v map[string]any) map[string]any {
	out := make(map[string]any, len(v))
	for k, val := range v {
		if val == nil {
			continue
		}
		out[k] = dropNulls(val)
	}
	return out
}

func dropNulls(v any) any {
	switch x := v.(type) {
	case map[string]any:
		return withoutNulls(x)
	case []any:
		out := make([]any, 0, len(x))
		for _, el := range x {
			if el != nil {
				out = append(out, dropNulls(el))
			}
		}
		return out
	}
	return v
}

// cloneJSON copies a decoded JSON value.
func cloneJSON(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, val := range x {
			out[k] = cloneJSON(val)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, val := range x {
			out[i] = cloneJSON(val)
		}
		return out
	}
	return v
}

var errTooLarge = errors.New("templates: the rendered text is too large")

// limitedBuffer is a buffer that refuses writes beyond max bytes (the library ignores the
// errors of some writes, so over records that one was refused).
type limitedBuffer struct {
	bytes.Buffer
	max  int
	over bool
}

func (b *limitedBuffer) Write(p []byte) (int, error) {
	if b.Len()+len(p) > b.max {
		b.over = true
		return 0, errTooLarge
	}
	return b.Buffer.Write(p)
}

func (b *limitedBuffer) Reset() {
	b.Buffer.Reset()
	b.over = false
}
