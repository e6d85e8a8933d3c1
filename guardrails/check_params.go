package guardrails

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sort"
	"strings"
	"time"
)

// paramReader reads a check's decoded JSON parameters strictly: each read validates one
// parameter's type and bounds, and done refuses the parameters no read asked for. Every
// problem is kept, so a factory reports them all at once (errors.Join of *ParamError).
type paramReader struct {
	m      map[string]any
	prefix string // the path of m under "parameters", e.g. "tools."
	seen   map[string]bool
	errs   []error
}

func readParams(m map[string]any) *paramReader {
	return &paramReader{m: m, seen: map[string]bool{}}
}

// sub reads the object under name (absent: an empty object) with its own strictness; its
// errors join the parent's through done.
func (p *paramReader) sub(name string) *paramReader {
	obj := p.object(name, false)
	return &paramReader{m: obj, prefix: p.prefix + name + ".", seen: map[string]bool{}}
}

func (p *paramReader) path(name string) string { return p.prefix + name }

// fail records a problem once, however many reads find it.
func (p *paramReader) fail(name, format string, args ...any) {
	e := &ParamError{Param: p.path(name), Message: fmt.Sprintf(format, args...)}
	for _, seen := range p.errs {
		if pe, ok := seen.(*ParamError); ok && *pe == *e {
			return
		}
	}
	p.errs = append(p.errs, e)
}

// lookup marks name as read and returns its value; null counts as absent.
func (p *paramReader) lookup(name string) (any, bool) {
	p.seen[name] = true
	v, ok := p.m[name]
	if !ok || v == nil {
		return nil, false
	}
	return v, true
}

func (p *paramReader) has(name string) bool {
	v, ok := p.m[name]
	return ok && v != nil
}

func (p *paramReader) str(name string, required bool, def string) string {
	v, ok := p.lookup(name)
	if !ok {
		if required {
			p.fail(name, "is required (a string)")
		}
		return def
	}
	s, isStr := v.(string)
	if !isStr {
		p.fail(name, "must be a string, got %s", jsonKind(v))
		return def
	}
	return s
}

func (p *paramReader) nonEmptyStr(name string, required bool, def string, maxLen int) string {
	present := p.has(name)
	s := p.str(name, required, def)
	if present && s == "" {
		p.fail(name, "must not be empty")
	}
	if len(s) > maxLen {
		p.fail(name, "is %d bytes, at most %d", len(s), maxLen)
	}
	return s
}

func (p *paramReader) boolean(name string, def bool) bool {
	v, ok := p.lookup(name)
	if !ok {
		return def
	}
	b, isBool := v.(bool)
	if !isBool {
		p.fail(name, "must be a boolean, got %s", jsonKind(v))
		return def
	}
	return b
}

// integer reads a whole number in [lo, hi].
func (p *paramReader) integer(name string, def, lo, hi int64) int64 {
	v, ok := p.lookup(name)
	if !ok {
		return def
	}
	f, isNum := number(v)
	if !isNum {
		p.fail(name, "must be a number, got %s", jsonKind(v))
		return def
	}
	if f != math.Trunc(f) || math.IsInf(f, 0) || math.IsNaN(f) {
		p.fail(name, "must be a whole number, got %v", f)
		return def
	}
	if f < float64(lo) || f > float64(hi) {
		p.fail(name, "must be between %d and %d, got %v", lo, hi, f)
		return def
	}
	return int64(f)
}

func (p *paramReader) enum(name string, def string, allowed ...string) string {
	present := p.has(name)
	s := p.str(name, false, def)
	if present && !inList(allowed, s) {
		p.fail(name, "must be one of %s, got %q", strings.Join(allowed, ", "), s)
		return def
	}
	return s
}

// strings reads an array of strings (at most maxItems, each non-empty); when comma is true a
// comma-separated string is accepted too, as the reference gateway does for a few lists.
func (p *paramReader) strings(name string, required bool, maxItems int, comma bool) []string {
	v, ok := p.lookup(name)
	if !ok {
		if required {
			p.fail(name, "is required (an array of strings)")
		}
		return nil
	}
	var items []any
	switch t := v.(type) {
	case []any:
		items = t
	case []string:
		for _, s := range t {
			items = append(items, s)
		}
	case string:
		if !comma {
			p.fail(name, "must be an array of strings, got string")
			return nil
		}
		for _, s := range strings.Split(t, ",") {
			if s = strings.TrimSpace(s); s != "" {
				items = append(items, s)
			}
		}
	default:
		p.fail(name, "must be an array of strings, got %s", jsonKind(v))
		return nil
	}
	if required && len(items) == 0 {
		p.fail(name, "must hold at least one item")
		return nil
	}
	if len(items) > maxItems {
		p.fail(name, "holds %d items, at most %d", len(items), maxItems)
		return nil
	}
	out := make([]string, 0, len(items))
	for i, it := range items {
		s, isStr := it.(string)
		switch {
		case !isStr:
			p.fail(fmt.Sprintf("%s[%d]", name, i), "must be a string, got %s", jsonKind(it))
		case s == "":
			p.fail(fmt.Sprintf("%s[%d]", name, i), "must not be empty")
		default:
			out = append(out, s)
		}
	}
	return out
}

// enumStrings reads an array whose items are each one of allowed.
func (p *paramReader) enumStrings(name string, maxItems int, comma bool, allowed []string) []string {
	items := p.strings(name, false, maxItems, comma)
	out := items[:0]
	for i, s := range items {
		if !inList(allowed, s) {
			p.fail(fmt.Sprintf("%s[%d]", name, i), "must be one of %s, got %q", strings.Join(allowed, ", "), s)
			continue
		}
		out = append(out, s)
	}
	return out
}

func (p *paramReader) object(name string, required bool) map[string]any {
	v, ok := p.lookup(name)
	if !ok {
		if required {
			p.fail(name, "is required (an object)")
		}
		return map[string]any{}
	}
	obj, isObj := v.(map[string]any)
	if !isObj {
		p.fail(name, "must be an object, got %s", jsonKind(v))
		return map[string]any{}
	}
	return obj
}

// runner reads the two parameters the reference gateway accepts on any check and the runner
// uses: failOnError and timeout (milliseconds). Configure turns them into a Configured.
func (p *paramReader) runner() (failOnError bool, timeout time.Duration) {
	failOnError = p.boolean("failOnError", false)
	ms := p.integer("timeout", 0, 1, MaxCheckTimeout.Milliseconds())
	return failOnError, time.Duration(ms) * time.Millisecond
}

// done refuses unknown parameters and returns every problem found.
func (p *paramReader) done(subs ...*paramReader) error {
	var unknown []string
	for k := range p.m {
		if !p.seen[k] {
			unknown = append(unknown, k)
		}
	}
	sort.Strings(unknown)
	for _, k := range unknown {
		p.fail(k, "is not a parameter of this check")
	}
	errs := p.errs
	for _, s := range subs {
		if err := s.done(); err != nil {
			errs = append(errs, err)
		}
	}
	switch len(errs) {
	case 0:
		return nil
	case 1:
		return errs[0]
	}
	return errors.Join(errs...)
}

func number(v any) (float64, bool) {
	switch n := v.(type) {
	case float64:
		return n, true
	case float32:
		return float64(n), true
	case int:
		return float64(n), true
	case int64:
		return float64(n), true
	case json.Number:
		f, err := n.Float64()
		return f, err == nil
	}
	return 0, false
}

func jsonKind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case string:
		return "string"
	case []any, []string:
		return "array"
	case map[string]any:
		return "object"
	}
	if _, ok := number(v); ok {
		return "number"
	}
	return fmt.Sprintf("%T", v)
}

func inList(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
