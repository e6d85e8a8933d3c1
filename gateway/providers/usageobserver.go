package providers

import (
	"bytes"
	"encoding/json"
	"io"
	"mime"
	"strings"
	"unicode/utf8"
)

// UsageObserver reads the usage a provider reports in an answer the gateway passes through
// unchanged (POST /responses, images, audio, batches, any path): it is fed the answer's bytes
// as they pass (an io.Writer, for a copy loop or io.TeeReader), changes none of them and holds
// none back. It reads
//   - a JSON answer's top-level usage object: Chat Completions' spelling (prompt_tokens,
//     completion_tokens, total_tokens, prompt_tokens_details.cached_tokens,
//     completion_tokens_details.reasoning_tokens), the Responses API's and embeddings'
//     (input_tokens, output_tokens, total_tokens, input_tokens_details.cached_tokens,
//     output_tokens_details.reasoning_tokens), Anthropic's (cache_read_input_tokens,
//     cache_creation_input_tokens) and Gemini's usageMetadata;
//   - a text/event-stream answer's usage, event by event: a chat chunk's usage, the Responses
//     API's response.usage (response.completed), Anthropic's message.usage and usage. A later
//     usage object updates the counts it carries, so the last one seen wins and Anthropic's
//     message_delta completes its message_start.
//
// It also counts the bytes of the text a stream delivered (chat chunks' delta content, tool
// call arguments and refusals, text completions' text, the Responses API's delta events), so
// that the gateway can estimate the completion of a stream its client abandoned before the
// usage came.
//
// Its memory is bounded whatever the answer's size: it scans the JSON as it streams, keeping
// only the path to the current value (at most maxScanDepth levels, keys of at most maxKeyLen
// bytes) and a usage object while it is read (at most maxUsageObject bytes). An answer that is
// neither JSON nor an event stream (an image, audio, a gzip body) is not read: no usage, no
// error. It is not safe for concurrent use.
type UsageObserver struct {
	mode observeMode
	scan jsonScan
	sse  sseLines

	usage map[string]float64 // the usage counts seen, by dotted key (prompt_tokens_details.cached_tokens)
	found bool
	text  int
}

var _ io.Writer = (*UsageObserver)(nil)

type observeMode uint8

const (
	observeSniff observeMode = iota // no Content-Type: a JSON object is read, anything else not
	observeJSON
	observeSSE
	observeOff
)

// Bounds of what an observer keeps.
const (
	maxScanDepth   = 32
	maxKeyLen      = 32
	maxUsageObject = 16 << 10
)

// NewUsageObserver returns an observer of an answer with the given Content-Type.
func NewUsageObserver(contentType string) *UsageObserver {
	o := &UsageObserver{}
	mt, _, err := mime.ParseMediaType(contentType)
	switch {
	case strings.TrimSpace(contentType) == "":
		o.mode = observeSniff
	case err != nil:
		o.mode = observeOff
	case mt == "text/event-stream":
		o.mode = observeSSE
	case mt == "application/json" || strings.HasSuffix(mt, "+json"):
		o.mode = observeJSON
	default:
		o.mode = observeOff
	}
	o.scan.observer = o
	o.scan.stream = o.mode == observeSSE
	return o
}

// Write observes p, the next bytes of the answer. It never fails and always reports len(p).
func (o *UsageObserver) Write(p []byte) (int, error) {
	if o.mode == observeSniff {
		i := 0
		for i < len(p) && isJSONSpace(p[i]) {
			i++
		}
		if i == len(p) {
			return len(p), nil
		}
		o.mode = observeOff
		if p[i] == '{' {
			o.mode = observeJSON
		}
	}
	switch o.mode {
	case observeJSON:
		o.scan.write(p)
	case observeSSE:
		o.sse.write(p, &o.scan)
	}
	return len(p), nil
}

// Usage is the usage the answer reported so far, and whether it reported any token count.
func (o *UsageObserver) Usage() (Usage, bool) {
	if !o.found {
		return Usage{}, false
	}
	first := func(keys ...string) (int, bool) {
		for _, k := range keys {
			if v, ok := o.usage[k]; ok {
				return int(v), true
			}
		}
		return 0, false
	}
	firstNonZero := func(keys ...string) int {
		for _, k := range keys {
			if v := o.usage[k]; v > 0 {
				return int(v)
			}
		}
		return 0
	}
	var u Usage
	cacheRead, cacheWrite := int(o.usage["cache_read_input_tokens"]), int(o.usage["cache_creation_input_tokens"])
	if v, ok := first("prompt_tokens"); ok {
		u.PromptTokens = v
	} else if v, ok := first("input_tokens"); ok {
		// Anthropic's input_tokens leave out the cache; OpenAI's count it, and send no cache_*.
		u.PromptTokens = v + cacheRead + cacheWrite
	} else {
		u.PromptTokens, _ = first("promptTokenCount")
	}
	if v, ok := first("completion_tokens", "output_tokens"); ok {
		u.CompletionTokens = v
	} else {
		u.CompletionTokens = int(o.usage["candidatesTokenCount"] + o.usage["thoughtsTokenCount"])
	}
	if v, ok := first("total_tokens", "totalTokenCount"); ok {
		u.TotalTokens = v
	} else {
		u.TotalTokens = u.PromptTokens + u.CompletionTokens
	}
	u.CachedTokens = firstNonZero("prompt_tokens_details.cached_tokens", "input_tokens_details.cached_tokens",
		"cache_read_input_tokens", "prompt_cache_hit_tokens", "cachedContentTokenCount")
	u.CacheWriteTokens = firstNonZero("prompt_tokens_details.cache_write_tokens", "cache_creation_input_tokens")
	u.ReasoningTokens = firstNonZero("completion_tokens_details.reasoning_tokens", "output_tokens_details.reasoning_tokens",
		"thoughtsTokenCount")
	return u, true
}

// DeliveredText is the number of bytes of text the stream delivered so far (UTF-8, escapes
// decoded); 0 for an answer that is not an event stream.
func (o *UsageObserver) DeliveredText() int { return o.text }

// tokenCounts are the usage keys that make a usage object a report of tokens (a transcription's
// usage may count seconds instead).
var tokenCounts = map[string]bool{
	"prompt_tokens": true, "completion_tokens": true, "total_tokens": true, "input_tokens": true,
	"output_tokens": true, "promptTokenCount": true, "candidatesTokenCount": true, "totalTokenCount": true,
}

// record merges a usage object into what was seen: the counts it carries replace earlier ones.
func (o *UsageObserver) record(obj []byte) {
	dec := json.NewDecoder(bytes.NewReader(obj))
	dec.UseNumber()
	var m map[string]any
	if dec.Decode(&m) != nil {
		return
	}
	if o.usage == nil {
		o.usage = map[string]float64{}
	}
	flattenUsage(o.usage, "", m)
	for k := range tokenCounts {
		if _, ok := o.usage[k]; ok {
			o.found = true
			break
		}
	}
}

// flattenUsage keeps the numbers of m, and of its objects a level down, by dotted key.
func flattenUsage(dst map[string]float64, prefix string, m map[string]any) {
	for k, v := range m {
		switch v := v.(type) {
		case json.Number:
			if f, err := v.Float64(); err == nil && f >= 0 {
				dst[prefix+k] = f
			}
		case map[string]any:
			if prefix == "" {
				flattenUsage(dst, k+".", v)
			}
		}
	}
}

// The paths, from the top of a JSON answer or of an event's data, at which a usage object is
// read, and at which a stream's string values are delivered text. "[]" is any array element.
var (
	usagePaths = [][]string{
		{"usage"},             // Chat Completions, Responses, embeddings, images, audio; a chat chunk
		{"response", "usage"}, // the Responses API's response.completed (and .incomplete, .failed)
		{"message", "usage"},  // Anthropic's message_start
		{"usageMetadata"},     // Gemini
		{"x_groq", "usage"},   // Groq's last chunk
	}
	textPaths = [][]string{
		{"choices", "[]", "delta", "content"},
		{"choices", "[]", "delta", "refusal"},
		{"choices", "[]", "delta", "reasoning_content"},
		{"choices", "[]", "delta", "reasoning"},
		{"choices", "[]", "delta", "tool_calls", "[]", "function", "arguments"},
		{"choices", "[]", "text"},                              // text completions
		{"delta"},                                              // the Responses API's *.delta events, transcript deltas
		{"delta", "text"},                                      // Anthropic's text_delta
		{"delta", "partial_json"},                              // and input_json_delta
		{"delta", "thinking"},                                  // and thinking_delta
		{"candidates", "[]", "content", "parts", "[]", "text"}, // Gemini
	}
)

func isJSONSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// sseLines splits an event stream into lines as it passes and feeds the scanner the data
// lines' values; a blank line ends an event, and the scanner starts over.
type sseLines struct {
	state     sseState
	field     [8]byte
	fieldLen  int
	lastCR    bool
	dataLines int // data lines of the current event
}

type sseState uint8

const (
	sseLineStart sseState = iota
	sseField
	sseDataStart // after "data:", where one space is skipped
	sseData
	sseSkip // the rest of a line that is not data
)

func (l *sseLines) write(p []byte, scan *jsonScan) {
	for i := 0; i < len(p); {
		c := p[i]
		if c == '\n' && l.lastCR {
			// The \n of a \r\n, whose \r ended the line.
			l.lastCR = false
			i++
			continue
		}
		l.lastCR = false
		switch l.state {
		case sseLineStart:
			if c == '\n' || c == '\r' {
				l.endLine(c, scan, true)
				i++
				continue
			}
			l.state, l.fieldLen = sseField, 0
			continue
		case sseField:
			switch {
			case c == ':':
				l.state = sseSkip
				if l.isData() {
					l.state = sseDataStart
					l.startData(scan)
				}
			case c == '\n' || c == '\r':
				if l.isData() {
					l.startData(scan) // "data" alone: an empty data line
				}
				l.endLine(c, scan, false)
			default:
				if l.fieldLen < len(l.field) {
					l.field[l.fieldLen] = c
				}
				l.fieldLen++
			}
			i++
			continue
		case sseDataStart:
			l.state = sseData
			if c == ' ' {
				i++
			}
			continue
		case sseData, sseSkip:
			end := bytes.IndexAny(p[i:], "\r\n")
			if end < 0 {
				end = len(p) - i
			}
			if l.state == sseData && end > 0 {
				scan.write(p[i : i+end])
			}
			i += end
			if i < len(p) {
				l.endLine(p[i], scan, false)
				i++
			}
		}
	}
}

func (l *sseLines) isData() bool { return l.fieldLen == 4 && string(l.field[:4]) == "data" }

// startData begins a data line: the lines of one event are joined by "\n".
func (l *sseLines) startData(scan *jsonScan) {
	if l.dataLines > 0 {
		scan.write([]byte{'\n'})
	}
	l.dataLines++
}

// endLine ends a line at its terminator c; a blank line ends the event.
func (l *sseLines) endLine(c byte, scan *jsonScan, blank bool) {
	l.lastCR = c == '\r'
	l.state = sseLineStart
	if blank {
		l.dataLines = 0
		scan.reset()
	}
}

// jsonScan follows JSON as it streams, knowing at each value the path that leads to it, without
// decoding it: it reads the usage objects at usagePaths and, in a stream, counts the text of
// the strings at textPaths. It trusts nothing: on input that is not JSON it finds nothing.
type jsonScan struct {
	observer *UsageObserver
	stream   bool // count delivered text

	frames   [maxScanDepth]frame
	depth    int // open containers
	overflow int // containers open beyond maxScanDepth
	state    scanState

	esc      bool // after a backslash in a string
	hex      int  // hex digits of a \u escape still to read
	hexValue int

	counting  bool // the current string is delivered text
	capturing bool
	capDepth  int // depth at which the captured object opened
	capture   []byte
	capFailed bool
}

// frame is an open container: for an object, the key of its current member.
type frame struct {
	object bool
	keyLen int // -1: a key too long to match a path
	key    [maxKeyLen]byte
}

type scanState uint8

const (
	scanValue      scanState = iota // a value is expected
	scanKeyOrEnd                    // after '{'
	scanKey                         // after ',' in an object
	scanColon                       // after a key
	scanAfterValue                  // ',' or the container's end
	scanString                      // in a string value
	scanKeyString                   // in a key
	scanScalar                      // in a number, true, false or null
	scanDone                        // the top-level value ended
)

// reset starts over, for the next event; frames are overwritten as they are pushed.
func (s *jsonScan) reset() {
	s.depth, s.overflow, s.state = 0, 0, scanValue
	s.esc, s.hex, s.hexValue = false, 0, 0
	s.counting, s.capturing, s.capFailed = false, false, false
	s.capture = s.capture[:0]
}

func (s *jsonScan) write(p []byte) {
	for i := 0; i < len(p); i++ {
		switch s.state {
		case scanString, scanKeyString:
			i = s.inString(p, i)
			continue
		case scanDone:
			return
		}
		c := p[i]
		if s.capturing {
			s.keep(c)
		}
		if s.state == scanScalar {
			if !isScalarEnd(c) {
				continue
			}
			s.state = scanAfterValue
		}
		if isJSONSpace(c) {
			continue
		}
		switch s.state {
		case scanValue:
			s.value(c)
		case scanKeyOrEnd, scanKey:
			switch {
			case c == '"':
				s.state = scanKeyString
				if f := s.top(); f != nil {
					f.keyLen = 0
				}
			case c == '}' && s.state == scanKeyOrEnd:
				s.pop()
			default:
				s.state = scanDone // not JSON
			}
		case scanColon:
			if c != ':' {
				s.state = scanDone
				return
			}
			s.state = scanValue
		case scanAfterValue:
			switch c {
			case ',':
				s.state = scanValue
				if f := s.top(); f != nil && f.object {
					s.state = scanKey
				}
			case '}', ']':
				s.pop()
			default:
				s.state = scanDone
			}
		}
	}
}

// value starts the value that begins with c.
func (s *jsonScan) value(c byte) {
	switch c {
	case '{', '[':
		if c == '{' && !s.capturing && s.at(usagePaths) {
			s.capturing, s.capDepth, s.capFailed = true, s.depth+s.overflow, false
			s.capture = append(s.capture[:0], c)
		}
		s.push(c == '{')
		s.state = scanValue
		if c == '{' {
			s.state = scanKeyOrEnd
		}
	case '"':
		s.state = scanString
		s.counting = s.stream && !s.capturing && s.at(textPaths)
	case ']':
		// An empty array.
		s.pop()
	default:
		s.state = scanScalar
	}
}

// inString reads a string from p[i] on and returns the index of its last byte read.
func (s *jsonScan) inString(p []byte, i int) int {
	key := s.state == scanKeyString
	for ; i < len(p); i++ {
		c := p[i]
		if s.capturing {
			s.keep(c)
		}
		switch {
		case s.hex > 0:
			s.hexValue = s.hexValue<<4 | hexDigit(c)
			s.hex--
			if s.hex == 0 {
				if s.counting {
					s.observer.text += runeBytes(s.hexValue)
				}
				if key {
					s.keyRune(rune(s.hexValue))
				}
			}
			continue
		case s.esc:
			s.esc = false
			if c == 'u' {
				s.hex, s.hexValue = 4, 0
				continue
			}
			if s.counting {
				s.observer.text++
			}
			if key {
				s.keyByte(unescape(c))
			}
			continue
		case c == '\\':
			s.esc = true
			continue
		case c == '"':
			if key {
				s.state = scanColon
			} else {
				s.state, s.counting = scanAfterValue, false
			}
			return i
		}
		if key {
			s.keyByte(c)
			continue
		}
		if !s.counting && !s.capturing {
			// Skip to the next quote or backslash: long strings (base64 images) pass fast.
			j := bytes.IndexByte(p[i:], '"')
			if j < 0 {
				j = len(p) - i
			}
			if k := bytes.IndexByte(p[i:i+j], '\\'); k >= 0 {
				j = k
			}
			if j > 0 {
				i += j - 1
			}
			continue
		}
		if s.counting {
			s.observer.text++
		}
	}
	return i
}

// keyByte adds a byte of the key being read, decoded, to the current object's frame; a key
// longer than maxKeyLen matches no path.
func (s *jsonScan) keyByte(c byte) {
	f := s.top()
	if f == nil || f.keyLen < 0 {
		return
	}
	if f.keyLen == maxKeyLen {
		f.keyLen = -1
		return
	}
	f.key[f.keyLen] = c
	f.keyLen++
}

// keyRune adds a \u escape's character to the key being read.
func (s *jsonScan) keyRune(r rune) {
	var b [utf8.UTFMax]byte
	for _, c := range b[:utf8.EncodeRune(b[:], r)] {
		s.keyByte(c)
	}
}

// unescape is the character a JSON escape \c stands for.
func unescape(c byte) byte {
	switch c {
	case 'b':
		return '\b'
	case 'f':
		return '\f'
	case 'n':
		return '\n'
	case 'r':
		return '\r'
	case 't':
		return '\t'
	}
	return c // \" \\ \/
}

func (s *jsonScan) top() *frame {
	if s.depth == 0 || s.overflow > 0 {
		return nil
	}
	return &s.frames[s.depth-1]
}

func (s *jsonScan) push(object bool) {
	if s.depth == maxScanDepth {
		s.overflow++
		return
	}
	s.frames[s.depth] = frame{object: object}
	s.depth++
}

// pop closes the current container; the value it ends may end a capture, or the document.
func (s *jsonScan) pop() {
	switch {
	case s.overflow > 0:
		s.overflow--
	case s.depth > 0:
		s.depth--
	}
	s.state = scanAfterValue
	if s.capturing && s.depth+s.overflow == s.capDepth {
		s.capturing = false
		if !s.capFailed {
			s.observer.record(s.capture)
		}
	}
	if s.depth+s.overflow == 0 {
		s.state = scanDone
	}
}

// keep adds c to the usage object being read, unless it has grown too large to be one.
func (s *jsonScan) keep(c byte) {
	if len(s.capture) >= maxUsageObject {
		s.capFailed = true
		return
	}
	s.capture = append(s.capture, c)
}

// at reports whether the value about to start lies at one of paths.
func (s *jsonScan) at(paths [][]string) bool {
	if s.overflow > 0 {
		return false
	}
	for _, path := range paths {
		if len(path) != s.depth {
			continue
		}
		match := true
		for i, want := range path {
			f := &s.frames[i]
			if f.object {
				match = f.keyLen >= 0 && string(f.key[:f.keyLen]) == want
			} else {
				match = want == "[]"
			}
			if !match {
				break
			}
		}
		if match {
			return true
		}
	}
	return false
}

func isScalarEnd(c byte) bool {
	return c == ',' || c == '}' || c == ']' || isJSONSpace(c)
}

func hexDigit(c byte) int {
	switch {
	case c >= '0' && c <= '9':
		return int(c - '0')
	case c >= 'a' && c <= 'f':
		return int(c-'a') + 10
	case c >= 'A' && c <= 'F':
		return int(c-'A') + 10
	}
	return 0
}

// runeBytes is the UTF-8 length of the code unit of a \u escape; each half of a surrogate pair
// counts 2, the pair's 4 bytes.
func runeBytes(v int) int {
	switch {
	case v < 0x80:
		return 1
	case v < 0x800, v >= 0xD800 && v <= 0xDFFF:
		return 2
	}
	return 3
}
