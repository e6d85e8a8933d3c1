package guardrails

import (
	"context"
	"encoding/json"
	"errors"
	"regexp"
	"strconv"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
)

// The JSON checks look for JSON in the text as the reference does: fenced ```json blocks
// first, else every object or array the text holds (decoded whole from each '{' or '[', so
// nested objects count, where the reference's pattern stops at the first '}').

var jsonFence = regexp.MustCompile("(?s)```+(?:json)?\\s*(.*?)```+")

// maxJSONCandidates bounds the values tried in one text, so a text of many braces costs little.
const maxJSONCandidates = 64

// extractJSON returns the JSON values found in text, decoded with json.Number numbers.
func extractJSON(text string) []any {
	var out []any
	for _, m := range jsonFence.FindAllStringSubmatch(text, -1) {
		if v, ok := decodeOne(strings.TrimSpace(m[1]), true); ok {
			out = append(out, v)
		}
	}
	if len(out) > 0 {
		return out
	}
	tries := 0
	for i := 0; i < len(text) && tries < maxJSONCandidates; i++ {
		if text[i] != '{' && text[i] != '[' {
			continue
		}
		tries++
		dec := json.NewDecoder(strings.NewReader(text[i:]))
		dec.UseNumber()
		var v any
		if err := dec.Decode(&v); err != nil {
			continue
		}
		out = append(out, v)
		i += int(dec.InputOffset()) - 1
	}
	return out
}

// decodeOne decodes s as one JSON value; whole requires nothing after it.
func decodeOne(s string, whole bool) (any, bool) {
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, false
	}
	if whole && dec.More() {
		return nil, false
	}
	return v, true
}

// --- default.jsonSchema ---------------------------------------------------------------------

type jsonSchemaCheck struct {
	schema *jsonschema.Resolved
	not    bool
}

// newJSONSchema: schema (required, an object; JSON Schema draft 2020-12; $ref only within
// itself: the library resolves no remote reference without a loader, and none is given, so a
// guardrail's schema never reaches the file system nor the network), not. Passes when some JSON value in the text
// validates (with not: when none does; a text without JSON fails, or passes with not).
func newJSONSchema(params map[string]any, _ Deps) (Check, error) {
	p := readParams(params)
	raw := p.object("schema", true)
	not := p.boolean("not", false)
	p.runner()
	var sch *jsonschema.Resolved
	if len(raw) > 0 || p.has("schema") {
		var err error
		if sch, err = compileSchema(raw); err != nil {
			p.fail("schema", "is not a valid JSON Schema: %v", err)
		}
	}
	if err := p.done(); err != nil {
		return nil, err
	}
	return &jsonSchemaCheck{schema: sch, not: not}, nil
}

// compileSchema resolves a schema with github.com/google/jsonschema-go, the library the MCP
// SDK uses too (its package init allocates little, which a gateway's resident memory notices).
func compileSchema(raw map[string]any) (*jsonschema.Resolved, error) {
	b, err := json.Marshal(raw)
	if err != nil {
		return nil, err
	}
	var s jsonschema.Schema
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, err
	}
	if err := knownTypes(raw); err != nil {
		return nil, err
	}
	return s.Resolve(nil)
}

// jsonTypes are the types a schema's "type" may name.
var jsonTypes = map[string]bool{"null": true, "boolean": true, "object": true, "array": true, "number": true,
	"string": true, "integer": true}

// knownTypes refuses a "type" the specification does not know, anywhere in the schema (the
// library resolves such a schema, which then validates nothing).
func knownTypes(v any) error {
	switch v := v.(type) {
	case map[string]any:
		for k, e := range v {
			if k == "type" {
				names, _ := e.([]any)
				if t, ok := e.(string); ok {
					names = []any{t}
				}
				for _, n := range names {
					if t, ok := n.(string); ok && !jsonTypes[t] {
						return errors.New(`"type" ` + strconv.Quote(t) + ` is not a JSON Schema type`)
					}
				}
				continue
			}
			if err := knownTypes(e); err != nil {
				return err
			}
		}
	case []any:
		for _, e := range v {
			if err := knownTypes(e); err != nil {
				return err
			}
		}
	}
	return nil
}

// plainJSON turns the json.Numbers of a decoded value into float64, as the validator reads
// numbers.
func plainJSON(v any) any {
	switch v := v.(type) {
	case json.Number:
		f, _ := v.Float64()
		return f
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, e := range v {
			out[k] = plainJSON(e)
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = plainJSON(e)
		}
		return out
	}
	return v
}

func (c *jsonSchemaCheck) Run(_ context.Context, in Input) (Verdict, error) {
	values := extractJSON(textOf(in))
	if len(values) == 0 {
		return Verdict{Pass: c.not, Explanation: "No valid JSON found in the text.", Data: map[string]any{"not": c.not}}, nil
	}
	var best any
	var problems []map[string]string
	valid := false
	for i, v := range values {
		err := c.schema.Validate(plainJSON(v))
		if err == nil {
			best, valid, problems = v, true, nil
			break
		}
		if i == 0 {
			best, problems = v, validationProblems(err)
		}
	}
	pass := inverted(valid, c.not)
	expl := "The JSON validates against the schema."
	if !valid {
		expl = "No JSON in the text validates against the schema."
	}
	return Verdict{Pass: pass, Explanation: expl, Data: map[string]any{
		"matchedJson": best, "not": c.not, "validationErrors": problems,
	}}, nil
}

func validationProblems(err error) []map[string]string {
	return []map[string]string{{"message": err.Error()}}
}

// --- default.jsonKeys -----------------------------------------------------------------------

type jsonKeys struct {
	keys     []string
	operator string
}

// newJSONKeys: keys (required), operator any|all|none (default any). Judges the top-level keys
// of the JSON objects in the text; passes when one object satisfies the operator. A text
// without a JSON object fails.
func newJSONKeys(params map[string]any, _ Deps) (Check, error) {
	p := readParams(params)
	keys := p.strings("keys", true, maxListItems, false)
	op := p.enum("operator", "any", "any", "all", "none")
	p.runner()
	if err := p.done(); err != nil {
		return nil, err
	}
	return &jsonKeys{keys: keys, operator: op}, nil
}

func (c *jsonKeys) Run(_ context.Context, in Input) (Verdict, error) {
	var best map[string]any
	bestPresent, bestMissing := []string{}, c.keys
	pass := false
	for _, v := range extractJSON(textOf(in)) {
		obj, ok := v.(map[string]any)
		if !ok {
			continue
		}
		present, missing := []string{}, []string{}
		for _, k := range c.keys {
			if _, ok := obj[k]; ok {
				present = append(present, k)
			} else {
				missing = append(missing, k)
			}
		}
		ok = opVerdict(c.operator, len(present), len(missing))
		if ok || best == nil || len(present) > len(bestPresent) {
			best, bestPresent, bestMissing, pass = obj, present, missing, ok
		}
		if ok {
			break
		}
	}
	if best == nil {
		return Verdict{Pass: false, Explanation: "No JSON object found in the text.", Data: map[string]any{
			"requiredKeys": c.keys, "operator": c.operator,
		}}, nil
	}
	return Verdict{Pass: pass, Explanation: opExplanation("keys", c.operator, pass), Data: map[string]any{
		"matchedJson": best, "presentKeys": bestPresent, "missingKeys": bestMissing, "operator": c.operator,
	}}, nil
}
