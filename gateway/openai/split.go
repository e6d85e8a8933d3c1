package openai

import (
	"bytes"
	"encoding/json"
	"unicode/utf8"
)

// The scanner below splits JSON that encoding/json has already validated (decodeBody validates
// the whole body once). It only finds where values begin and end, so each level of the body is
// read once more at most, instead of being validated and decoded again at every level.

// member is one member of an object: its key, unescaped, and its value as sent.
type member struct {
	key []byte
	val json.RawMessage
	at  int // where val begins in the object's bytes
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

func skipSpace(d []byte, i int) int {
	for i < len(d) && isSpace(d[i]) {
		i++
	}
	return i
}

// stringEnd returns the index just past the string that starts at d[i].
func stringEnd(d []byte, i int) int {
	for i++; i < len(d); i++ {
		switch d[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
	return len(d)
}

// valueEnd returns the index just past the value that starts at d[i].
func valueEnd(d []byte, i int) int {
	switch d[i] {
	case '"':
		return stringEnd(d, i)
	case '{', '[':
		depth := 0
		for i < len(d) {
			switch d[i] {
			case '"':
				i = stringEnd(d, i)
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1
				}
			}
			i++
		}
		return len(d)
	}
	for i < len(d) {
		switch d[i] {
		case ',', '}', ']', ' ', '\t', '\n', '\r':
			return i
		}
		i++
	}
	return len(d)
}

// members splits an object into its members, in order.
func members(d []byte) []member { return splitMembers(nil, d) }

// splitMembers appends an object's members to out.
func splitMembers(out []member, d []byte) []member {
	i := skipSpace(d, 0) + 1 // past '{'
	for {
		i = skipSpace(d, i)
		if i >= len(d) || d[i] == '}' {
			return out
		}
		keyEnd := stringEnd(d, i)
		key := unquote(d[i:keyEnd])
		i = skipSpace(d, skipSpace(d, keyEnd)+1) // past ':'
		end := valueEnd(d, i)
		out = append(out, member{key: key, val: d[i:end], at: i})
		i = skipSpace(d, end)
		if i < len(d) && d[i] == ',' {
			i++
		}
	}
}

// elements splits an array into its elements, in order.
func elements(d []byte) []json.RawMessage { return splitElements(nil, d) }

// splitElements appends an array's elements to out.
func splitElements(out []json.RawMessage, d []byte) []json.RawMessage {
	i := skipSpace(d, 0) + 1 // past '['
	for {
		i = skipSpace(d, i)
		if i >= len(d) || d[i] == ']' {
			return out
		}
		end := valueEnd(d, i)
		out = append(out, d[i:end])
		i = skipSpace(d, end)
		if i < len(d) && d[i] == ',' {
			i++
		}
	}
}

// unquote returns a string's content. Without escapes it is the bytes between the quotes;
// otherwise, and for invalid UTF-8 (which encoding/json replaces with U+FFFD), encoding/json
// decodes it, so that both read every string alike.
func unquote(q []byte) []byte {
	inner := q[1 : len(q)-1]
	if bytes.IndexByte(inner, '\\') < 0 && utf8.Valid(inner) {
		return inner
	}
	var s string
	if err := json.Unmarshal(q, &s); err != nil {
		return inner
	}
	return []byte(s)
}

// TopMember is the value of the top-level member name of d, an object, as sent (the last when
// the name repeats, as encoding/json reads it); ok is false when d has no such member or is
// not an object. d must be valid JSON (json.Valid): the scan does not check it again.
func TopMember(d []byte, name string) (val json.RawMessage, ok bool) {
	if i := skipSpace(d, 0); i >= len(d) || d[i] != '{' {
		return nil, false
	}
	for _, m := range members(d) {
		if string(m.key) == name {
			val, ok = m.val, true
		}
	}
	return val, ok
}
