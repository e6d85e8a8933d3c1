package openai

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
)

// The endpoint kinds CacheKeyMaterial takes: the values of providers.EndpointChat,
// EndpointCompletion and EndpointEmbed, which this package cannot import (providers imports
// it). A test of the providers package's constants holds them equal.
const (
	endpointChat       = "chatComplete"
	endpointCompletion = "complete"
	endpointEmbed      = "embed"
)

// keyIgnored are the top-level members a cache key leaves out: none of them changes the
// answer, so two requests that differ only in them share a cached answer.
var keyIgnored = map[string]bool{
	// How the answer travels, not what it says: an answer is stored whole, and replayed as a
	// stream (with its usage chunk when include_usage asks for one) or sent whole.
	"stream":         true,
	"stream_options": true,
	// Who asks: an end-user id for the provider's abuse monitoring (safety_identifier is its
	// successor). Whether users share answers is the cache namespace's business, not the key's.
	"user":              true,
	"safety_identifier": true,
	// Bookkeeping at the provider: tags for its dashboard and stored completions, and whether
	// it keeps the completion for evals and distillation.
	"metadata": true,
	"store":    true,
	// The provider's processing tier (latency and price) and its prompt cache's routing hints:
	// the same model answers the same prompt.
	"service_tier":           true,
	"prompt_cache_key":       true,
	"prompt_cache_retention": true,
}

// CacheKeyMaterial is what the answer cache hashes of a request body (with the workspace, the
// route, the model and the namespace), for endpoint providers.EndpointChat, EndpointCompletion
// or EndpointEmbed: the body in canonical JSON, without the members that cannot change the
// answer (keyIgnored) and without top-level members sent as null, which this package reads as
// not sent. Canonical: every object's keys sorted (a repeated key keeps its last value, as
// encoding/json reads it), no whitespace, strings in one escaping, and numbers in one spelling
// of their exact decimal value, so that 1, 1.0, 10e-1 and 1e0 are one number while two seeds
// that a float64 would round together stay apart. Nothing else is normalised: an n of 1 and
// no n give two keys.
//
// body must be the one sent to the provider (after override_params). An error means the
// request cannot be keyed (an endpoint without a cache, a body that is not a JSON object, a
// number whose exponent is out of range); the cache then leaves it alone.
func CacheKeyMaterial(endpoint string, body []byte) ([]byte, error) {
	switch endpoint {
	case endpointChat, endpointCompletion, endpointEmbed:
	default:
		return nil, fmt.Errorf("openai: no cache key for endpoint %q", endpoint)
	}
	if kindOf(body) != kindObject || !json.Valid(body) {
		return nil, errors.New("openai: a cache key needs a JSON object body")
	}
	ms := canonicalMembers(members(bytes.TrimSpace(body)))
	ms = slices.DeleteFunc(ms, func(m member) bool { return keyIgnored[string(m.key)] || kindOf(m.val) == kindNull })
	return appendCanonicalObject(make([]byte, 0, len(body)), ms)
}

// canonicalMembers sorts an object's members by key, keeping only the last of a repeated key.
func canonicalMembers(ms []member) []member {
	slices.SortStableFunc(ms, func(a, b member) int { return bytes.Compare(a.key, b.key) })
	out := ms[:0]
	for i, m := range ms {
		if i+1 < len(ms) && bytes.Equal(ms[i+1].key, m.key) {
			continue
		}
		out = append(out, m)
	}
	return out
}

func appendCanonicalObject(dst []byte, ms []member) ([]byte, error) {
	dst = append(dst, '{')
	for i, m := range ms {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendString(dst, m.key)
		dst = append(dst, ':')
		var err error
		if dst, err = appendCanonical(dst, m.val); err != nil {
			return nil, err
		}
	}
	return append(dst, '}'), nil
}

// appendCanonical writes the canonical form of a valid JSON value.
func appendCanonical(dst []byte, v []byte) ([]byte, error) {
	v = bytes.TrimLeft(v, " \t\r\n")
	switch kindOf(v) {
	case kindObject:
		return appendCanonicalObject(dst, canonicalMembers(members(v)))
	case kindArray:
		dst = append(dst, '[')
		for i, e := range elements(v) {
			if i > 0 {
				dst = append(dst, ',')
			}
			var err error
			if dst, err = appendCanonical(dst, e); err != nil {
				return nil, err
			}
		}
		return append(dst, ']'), nil
	case kindString:
		return appendString(dst, unquote(v)), nil
	case kindNumber:
		return appendCanonicalNumber(dst, bytes.TrimRight(v, " \t\r\n"))
	case kindBool, kindNull:
		return append(dst, bytes.TrimRight(v, " \t\r\n")...), nil
	}
	return nil, errors.New("openai: invalid JSON value")
}

// maxExponent bounds a number's exponent, far beyond any float64, so that the arithmetic on it
// cannot overflow.
const maxExponent = 1_000_000_000

// appendCanonicalNumber writes a JSON number (valid by its grammar) as its exact decimal value
// in one spelling: the significant digits without leading or trailing zeros, placed as
// JavaScript's Number.prototype.toString places them (plain from 1e-6 to 1e21, else with an
// exponent), and no sign on zero. Nothing is rounded.
func appendCanonicalNumber(dst []byte, num []byte) ([]byte, error) {
	neg := len(num) > 0 && num[0] == '-'
	if neg {
		num = num[1:]
	}
	mantissa, expPart, _ := bytesCut(num, 'e', 'E')
	intPart, fracPart, _ := bytes.Cut(mantissa, []byte("."))
	exp := 0
	if len(expPart) > 0 {
		e, err := strconv.ParseInt(string(expPart), 10, 64)
		if err != nil || e > maxExponent || e < -maxExponent {
			return nil, errors.New("openai: a number's exponent is out of range")
		}
		exp = int(e)
	}
	// The value is digits × 10^exp.
	digits := make([]byte, 0, len(intPart)+len(fracPart))
	digits = append(append(digits, intPart...), fracPart...)
	exp -= len(fracPart)
	digits = bytes.TrimLeft(digits, "0")
	for len(digits) > 0 && digits[len(digits)-1] == '0' {
		digits = digits[:len(digits)-1]
		exp++
	}
	if len(digits) == 0 {
		return append(dst, '0'), nil
	}
	if neg {
		dst = append(dst, '-')
	}
	k := len(digits)
	n := k + exp // where the decimal point goes, counted from the first digit
	switch {
	case k <= n && n <= 21:
		dst = append(dst, digits...)
		return append(dst, bytes.Repeat([]byte("0"), n-k)...), nil
	case 0 < n && n <= 21:
		dst = append(dst, digits[:n]...)
		dst = append(dst, '.')
		return append(dst, digits[n:]...), nil
	case -6 < n && n <= 0:
		dst = append(dst, "0."...)
		dst = append(dst, bytes.Repeat([]byte("0"), -n)...)
		return append(dst, digits...), nil
	}
	dst = append(dst, digits[0])
	if k > 1 {
		dst = append(dst, '.')
		dst = append(dst, digits[1:]...)
	}
	dst = append(dst, 'e')
	if n-1 >= 0 {
		dst = append(dst, '+')
	}
	return strconv.AppendInt(dst, int64(n-1), 10), nil
}

// bytesCut cuts b around the first of two separators.
func bytesCut(b []byte, sep1, sep2 byte) (before, after []byte, found bool) {
	for i, c := range b {
		if c == sep1 || c == sep2 {
			return b[:i], b[i+1:], true
		}
	}
	return b, nil, false
}
