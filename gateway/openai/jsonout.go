package openai

import (
	"strconv"
	"unicode/utf8"
)

// Writing JSON by appending to a byte slice: the cache key, the accumulated answer and the
// replayed chunks are built this way rather than through encoding/json's reflection, which
// would also need a Go type for every shape a provider may send.

const hexDigits = "0123456789abcdef"

// appendString writes s as a JSON string: quotes, backslashes and control characters escaped,
// invalid UTF-8 replaced by U+FFFD (as encoding/json does), everything else as is. One spelling
// per string, so that it also serves the cache key's canonical form.
func appendString(dst []byte, s []byte) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' && c < utf8.RuneSelf {
			i++
			continue
		}
		if c < utf8.RuneSelf {
			dst = append(dst, s[start:i]...)
			switch c {
			case '"', '\\':
				dst = append(dst, '\\', c)
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRune(s[i:])
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i += size
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

func appendStr(dst []byte, s string) []byte {
	return appendString(dst, []byte(s))
}

// appendKey writes `"key":`, for keys that need no escaping.
func appendKey(dst []byte, key string) []byte {
	dst = append(dst, '"')
	dst = append(dst, key...)
	return append(dst, '"', ':')
}

// appendComma writes the comma before a member or element, unless it is the first.
func appendComma(dst []byte) []byte {
	if n := len(dst); n > 0 && dst[n-1] != '{' && dst[n-1] != '[' {
		dst = append(dst, ',')
	}
	return dst
}

// appendField writes `,"key":` (without the comma for the first member of an object).
func appendField(dst []byte, key string) []byte { return appendKey(appendComma(dst), key) }

func appendInt(dst []byte, i int) []byte { return strconv.AppendInt(dst, int64(i), 10) }

// appendCompact writes valid JSON without the whitespace between its tokens, so that a value
// from a pretty-printed answer (OpenAI indents its unstreamed answers) fits one data: line.
func appendCompact(dst []byte, raw []byte) []byte {
	start := 0
	for i := 0; i < len(raw); i++ {
		switch raw[i] {
		case '"':
			i = stringEnd(raw, i) - 1
		case ' ', '\t', '\n', '\r':
			dst = append(dst, raw[start:i]...)
			start = i + 1
		}
	}
	return append(dst, raw[start:]...)
}
