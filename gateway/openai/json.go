package openai

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"strconv"

	"github.com/causeway/causeway/domain"
)

// kind is a JSON value's type, read from its first byte.
type kind int

const (
	kindInvalid kind = iota
	kindNull
	kindBool
	kindNumber
	kindString
	kindArray
	kindObject
)

func kindOf(raw json.RawMessage) kind {
	raw = bytes.TrimLeft(raw, " \t\r\n")
	if len(raw) == 0 {
		return kindInvalid
	}
	switch c := raw[0]; {
	case c == 'n':
		return kindNull
	case c == 't' || c == 'f':
		return kindBool
	case c == '"':
		return kindString
	case c == '[':
		return kindArray
	case c == '{':
		return kindObject
	case c == '-' || (c >= '0' && c <= '9'):
		return kindNumber
	}
	return kindInvalid
}

// article names a kind in an error message: "n must be an integer, not a string".
func (k kind) article() string {
	switch k {
	case kindNull:
		return "null"
	case kindBool:
		return "a boolean"
	case kindNumber:
		return "a number"
	case kindString:
		return "a string"
	case kindArray:
		return "an array"
	case kindObject:
		return "an object"
	}
	return "invalid JSON"
}

// decodeBody checks that body is one JSON object and splits it into its members. The body is
// validated once, here; the members, and their members in turn, are then split by a scanner
// that relies on that (split.go) instead of decoding each level again.
func decodeBody(body []byte) (*validator, obj, error) {
	switch kindOf(body) {
	case kindObject:
	case kindInvalid:
		if len(bytes.TrimSpace(body)) == 0 {
			return nil, obj{}, domain.Invalid("", "the request body is empty; send a JSON object")
		}
		return nil, obj{}, domain.Invalid("", "the request body is not valid JSON")
	default:
		if !json.Valid(body) {
			return nil, obj{}, domain.Invalid("", "the request body is not valid JSON")
		}
		return nil, obj{}, domain.Invalid("", "the request body must be a JSON object, not %s", kindOf(body).article())
	}
	if !json.Valid(body) {
		// Decoded again only to say where the problem is.
		var syn *json.SyntaxError
		if err := json.Unmarshal(body, new(any)); errors.As(err, &syn) {
			return nil, obj{}, domain.Invalid("", "the request body is not valid JSON: %s at byte %d", syn.Error(), syn.Offset)
		}
		return nil, obj{}, domain.Invalid("", "the request body is not valid JSON")
	}
	v := &validator{}
	top, ok := v.asObject(body, "")
	if !ok {
		return nil, obj{}, v.err
	}
	return v, top, nil
}

// validator holds the first problem found; once it is set every further check is skipped, so
// the checks read as a straight list and the client hears about the first broken field.
type validator struct{ err error }

func (v *validator) fail(param, format string, args ...any) {
	if v.err == nil {
		v.err = domain.Invalid(param, format, args...)
	}
}

func (v *validator) failed() bool { return v.err != nil }

func (v *validator) typeError(param, want string, raw json.RawMessage) {
	v.fail(param, "%s must be %s, not %s", param, want, kindOf(raw).article())
}

func (v *validator) asString(raw json.RawMessage, param string) (string, bool) {
	if v.failed() {
		return "", false
	}
	if kindOf(raw) != kindString {
		v.typeError(param, "a string", raw)
		return "", false
	}
	return string(unquote(raw)), true
}

func (v *validator) asBool(raw json.RawMessage, param string) (bool, bool) {
	if v.failed() {
		return false, false
	}
	if kindOf(raw) != kindBool {
		v.typeError(param, "a boolean", raw)
		return false, false
	}
	return bytes.HasPrefix(bytes.TrimLeft(raw, " \t\r\n"), []byte("true")), true
}

// asNumber reads a finite number. JSON cannot spell NaN or infinity, but 1e400 overflows a
// float64 to infinity, and no bound can be checked against that.
func (v *validator) asNumber(raw json.RawMessage, param string) (float64, bool) {
	if v.failed() {
		return 0, false
	}
	if kindOf(raw) != kindNumber {
		v.typeError(param, "a number", raw)
		return 0, false
	}
	f, err := strconv.ParseFloat(string(bytes.TrimSpace(raw)), 64)
	if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
		v.fail(param, "%s must be a finite number", param)
		return 0, false
	}
	return f, true
}

// asInt reads an integer that fits an int. A number with an integral value written as a
// float (2.0, 1e2) is accepted, as JSON Schema's integer type accepts it; 1.5 is refused.
func (v *validator) asInt(raw json.RawMessage, param string) (int, bool) {
	if v.failed() {
		return 0, false
	}
	if kindOf(raw) != kindNumber {
		v.typeError(param, "an integer", raw)
		return 0, false
	}
	text := string(bytes.TrimSpace(raw))
	if i, err := strconv.ParseInt(text, 10, 64); err == nil {
		if i < math.MinInt || i > math.MaxInt {
			v.fail(param, "%s is out of range (got %s)", param, text)
			return 0, false
		}
		return int(i), true
	}
	f, ok := v.asNumber(raw, param)
	if !ok {
		return 0, false
	}
	if f != math.Trunc(f) {
		v.fail(param, "%s must be an integer (got %s)", param, formatNumber(f))
		return 0, false
	}
	// float64(math.MaxInt) rounds up to 2^63 on 64-bit platforms, so the upper test is >=.
	if f < math.MinInt || f >= math.MaxInt {
		v.fail(param, "%s is out of range (got %s)", param, formatNumber(f))
		return 0, false
	}
	return int(f), true
}

func (v *validator) asArray(raw json.RawMessage, param string) ([]json.RawMessage, bool) {
	if v.failed() {
		return nil, false
	}
	if kindOf(raw) != kindArray {
		v.typeError(param, "an array", raw)
		return nil, false
	}
	return elements(raw), true
}

// asObject splits an object. On failure the obj it returns is empty but usable: every check on
// it is then skipped.
func (v *validator) asObject(raw json.RawMessage, param string) (obj, bool) {
	if v.failed() {
		return obj{v: v}, false
	}
	if kindOf(raw) != kindObject {
		v.typeError(param, "an object", raw)
		return obj{v: v}, false
	}
	o := obj{v: v, path: param, members: members(raw)}
	// A repeated key is refused rather than resolved: parsers disagree on which occurrence
	// wins, and the gateway must route, limit and log the very request the provider reads.
	if len(o.members) > smallObject {
		o.byKey = make(map[string]json.RawMessage, len(o.members))
	}
	for i, m := range o.members {
		if o.byKey != nil {
			if _, dup := o.byKey[string(m.key)]; dup {
				return obj{v: v}, v.duplicate(o.param(string(m.key)))
			}
			o.byKey[string(m.key)] = m.val
			continue
		}
		for _, prev := range o.members[:i] {
			if bytes.Equal(prev.key, m.key) {
				return obj{v: v}, v.duplicate(o.param(string(m.key)))
			}
		}
	}
	return o, true
}

// smallObject is the size up to which an object's keys are searched one by one.
const smallObject = 16

// duplicate refuses a repeated key; the param is cut short, as it quotes the client's key.
func (v *validator) duplicate(param string) bool {
	param = truncate(param, 120)
	v.fail(param, "%s appears more than once; send each field once", param)
	return false
}

func (v *validator) numberIn(param string, f, lo, hi float64) bool {
	if v.failed() {
		return false
	}
	if f < lo || f > hi {
		v.fail(param, "%s must be between %s and %s (got %s)", param, formatNumber(lo), formatNumber(hi), formatNumber(f))
		return false
	}
	return true
}

// intIn checks lo <= i <= hi; hi == noMax states only the lower bound.
func (v *validator) intIn(param string, i, lo, hi int) bool {
	if v.failed() {
		return false
	}
	if hi == noMax && i < lo {
		v.fail(param, "%s must be at least %d (got %d)", param, lo, i)
		return false
	}
	if i < lo || i > hi {
		v.fail(param, "%s must be between %d and %d (got %d)", param, lo, hi, i)
		return false
	}
	return true
}

const noMax = math.MaxInt

func formatNumber(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }

// obj is a JSON object under validation; path is its param ("" at the top level).
type obj struct {
	v       *validator
	path    string
	members []member                   // in the body's order; no key twice
	byKey   map[string]json.RawMessage // an index, for objects of more than smallObject members
}

// get returns key's value as sent, null included.
func (o obj) get(key string) (json.RawMessage, bool) {
	if o.byKey != nil {
		raw, ok := o.byKey[key]
		return raw, ok
	}
	for _, m := range o.members {
		if string(m.key) == key {
			return m.val, true
		}
	}
	return nil, false
}

func (o obj) param(key string) string {
	if o.path == "" {
		return key
	}
	return o.path + "." + key
}

// has reports whether key is present with a value other than null. Every optional field of the
// specification is nullable, and null means "not sent".
func (o obj) has(key string) bool {
	raw, ok := o.get(key)
	return ok && kindOf(raw) != kindNull
}

// raw returns key's value when it is present and not null, and no problem was found yet.
func (o obj) raw(key string) (json.RawMessage, bool) {
	if o.v.failed() {
		return nil, false
	}
	raw, ok := o.get(key)
	if !ok || kindOf(raw) == kindNull {
		return nil, false
	}
	return raw, true
}

func (o obj) str(key string) (string, bool) {
	raw, ok := o.raw(key)
	if !ok {
		return "", false
	}
	return o.v.asString(raw, o.param(key))
}

func (o obj) boolean(key string) (bool, bool) {
	raw, ok := o.raw(key)
	if !ok {
		return false, false
	}
	return o.v.asBool(raw, o.param(key))
}

func (o obj) number(key string, lo, hi float64) (float64, bool) {
	raw, ok := o.raw(key)
	if !ok {
		return 0, false
	}
	f, ok := o.v.asNumber(raw, o.param(key))
	if !ok || !o.v.numberIn(o.param(key), f, lo, hi) {
		return 0, false
	}
	return f, true
}

func (o obj) integer(key string, lo, hi int) (int, bool) {
	raw, ok := o.raw(key)
	if !ok {
		return 0, false
	}
	i, ok := o.v.asInt(raw, o.param(key))
	if !ok || !o.v.intIn(o.param(key), i, lo, hi) {
		return 0, false
	}
	return i, true
}

func (o obj) array(key string) ([]json.RawMessage, bool) {
	raw, ok := o.raw(key)
	if !ok {
		return nil, false
	}
	return o.v.asArray(raw, o.param(key))
}

func (o obj) object(key string) (obj, bool) {
	raw, ok := o.raw(key)
	if !ok {
		return obj{v: o.v}, false
	}
	return o.v.asObject(raw, o.param(key))
}

// shape checks only that key, when sent, is of kind k: for values passed on without being read,
// such as a function's JSON Schema parameters.
func (o obj) shape(key string, k kind, article string) {
	if raw, ok := o.raw(key); ok && kindOf(raw) != k {
		o.v.typeError(o.param(key), article, raw)
	}
}

// required refuses a missing or null key.
func (o obj) required(key string) bool {
	if o.v.failed() {
		return false
	}
	if !o.has(key) {
		o.v.fail(o.param(key), "%s is required", o.param(key))
		return false
	}
	return true
}

// model reads the required, non-empty model.
func (o obj) model() string {
	if !o.required("model") {
		return ""
	}
	s, ok := o.str("model")
	if ok && s == "" {
		o.v.fail("model", "model must not be empty")
	}
	return s
}

// stop checks a string or an array of at most MaxStop strings, and reads them.
func (o obj) stop() []string {
	raw, ok := o.raw("stop")
	if !ok {
		return nil
	}
	if kindOf(raw) == kindString {
		s, ok := o.v.asString(raw, "stop")
		if !ok {
			return nil
		}
		return []string{s}
	}
	if kindOf(raw) != kindArray {
		o.v.typeError("stop", "a string or an array of strings", raw)
		return nil
	}
	items, ok := o.v.asArray(raw, "stop")
	if !ok {
		return nil
	}
	if len(items) > MaxStop {
		o.v.fail("stop", "stop must have at most %d sequences (got %d)", MaxStop, len(items))
		return nil
	}
	out := make([]string, 0, len(items))
	for i, it := range items {
		s, _ := o.v.asString(it, indexParam("stop", i))
		out = append(out, s)
	}
	if o.v.failed() {
		return nil
	}
	return out
}

// logitBias checks an object of token ids (integers written as strings) to biases in
// -100..100, and reads it. The specification's schema says integer biases, but OpenAI and
// compatible servers accept fractional ones, so any finite number in range passes.
func (o obj) logitBias() map[string]float64 {
	bias, ok := o.object("logit_bias")
	if !ok {
		return nil
	}
	out := make(map[string]float64, len(bias.members))
	for _, m := range bias.members {
		tok, raw := string(m.key), m.val
		if o.v.failed() {
			return nil
		}
		if id, err := strconv.ParseInt(tok, 10, 64); err != nil || id < 0 {
			o.v.fail("logit_bias", "logit_bias keys must be token ids, non-negative integers written as strings (got %q)", truncate(tok, 40))
			return nil
		}
		f, ok := o.v.asNumber(raw, "logit_bias")
		if !ok {
			return nil
		}
		if f < -100 || f > 100 {
			o.v.fail("logit_bias", "logit_bias values must be between -100 and 100 (got %s for token %s)", formatNumber(f), tok)
			return nil
		}
		out[tok] = f
	}
	return out
}

// streamOptions reads stream_options, which OpenAI allows only with stream=true.
func (o obj) streamOptions(stream bool) StreamOptions {
	so, ok := o.object("stream_options")
	if !ok {
		return StreamOptions{}
	}
	if !stream {
		o.v.fail("stream_options", "stream_options is only allowed when stream is true")
		return StreamOptions{}
	}
	usage, _ := so.boolean("include_usage")
	return StreamOptions{IncludeUsage: usage}
}

func indexParam(param string, i int) string { return param + "[" + strconv.Itoa(i) + "]" }

// truncate keeps client-sent text quoted in an error message short.
func truncate(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n]) + "…"
}

// The peek functions read members the specification leaves to the provider (an image's url, a
// tool call's id): they fill the model when the value has the expected kind and never fail, so
// that reading a member into Go refuses nothing the validator accepts.

// peekRaw returns key's value when it is present and not null.
func (o obj) peekRaw(key string) json.RawMessage {
	raw, ok := o.get(key)
	if !ok || kindOf(raw) == kindNull {
		return nil
	}
	return raw
}

// peekString returns key's value when it is a string, else "".
func (o obj) peekString(key string) string {
	raw, ok := o.get(key)
	if !ok || kindOf(raw) != kindString {
		return ""
	}
	return string(unquote(raw))
}

// peekObject splits key's value when it is an object. Its members are not checked for repeated
// keys, and it is read with the peek functions only.
func (o obj) peekObject(key string) (obj, bool) {
	raw, ok := o.get(key)
	if !ok || kindOf(raw) != kindObject {
		return obj{v: o.v}, false
	}
	return obj{v: o.v, path: o.param(key), members: members(raw)}, true
}

// indexed is an object whose members were split, and checked for repeated keys, before.
func indexed(v *validator, path string, ms []member) obj {
	o := obj{v: v, path: path, members: ms}
	if len(ms) > smallObject {
		o.byKey = make(map[string]json.RawMessage, len(ms))
		for _, m := range ms {
			o.byKey[string(m.key)] = m.val
		}
	}
	return o
}

// Pointer fields: a member the body did not send is nil in the model.

func (o obj) numberPtr(key string, lo, hi float64) *float64 {
	f, ok := o.number(key, lo, hi)
	if !ok {
		return nil
	}
	return &f
}

func (o obj) boolPtr(key string) *bool {
	b, ok := o.boolean(key)
	if !ok {
		return nil
	}
	return &b
}
