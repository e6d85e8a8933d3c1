package openai

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"unicode/utf8"
)

// replayPiece is about the most text one replayed chunk carries: a long answer arrives in a
// few chunks, as a client rendering the stream expects, without a chunk per token.
const replayPiece = 256

// ReplayStream turns a stored whole answer (a chat.completion or text_completion object) into
// the data payloads of the stream that gives the same answer, as OpenAI streams it: the same
// id, created, model, system_fingerprint and service_tier on every chunk; per choice, a first
// chunk with the role (and content "" or null, refusal null, the message's other members such
// as reasoning_content whole, and the choice's logprobs), the content in pieces of about 256
// bytes, each tool call's id, type and name then its arguments in pieces, and a last chunk with
// the finish_reason; then, when includeUsage (stream_options.include_usage), a chunk of no
// choices with the answer's usage (when it has one), every other chunk carrying "usage":null.
// A text completion's chunks carry its text in pieces. Thinking in content_blocks (the
// gateway's) is replayed as delta.content_blocks in its place among the text. Each chunk is
// one line of compact JSON, however the answer was indented. The caller writes [DONE] after
// them.
//
// Fed to a StreamAccumulator, the chunks give back the same answer. An embeddings list, or
// anything but one of the two answers with at least one choice, is an error.
func ReplayStream(body []byte, includeUsage bool) ([][]byte, error) {
	if kindOf(body) != kindObject || !json.Valid(body) {
		return nil, errors.New("openai: a stored answer is not a JSON object")
	}
	r := replayer{includeUsage: includeUsage}
	var object []byte
	var choices, usage json.RawMessage
	var id, created, model, tier, fingerprint json.RawMessage
	for _, m := range members(bytes.TrimSpace(body)) {
		switch string(m.key) {
		case "object":
			if kindOf(m.val) == kindString {
				object = unquote(m.val)
			}
		case "id":
			id = m.val
		case "created":
			created = m.val
		case "model":
			model = m.val
		case "service_tier":
			tier = m.val
		case "system_fingerprint":
			fingerprint = m.val
		case "choices":
			choices = m.val
		case "usage":
			usage = m.val
		}
	}
	if kindOf(choices) != kindArray {
		return nil, fmt.Errorf("openai: a stored %s answer has no choices to replay", object)
	}
	items := elements(choices)
	if len(items) == 0 {
		return nil, fmt.Errorf("openai: a stored %s answer has no choices to replay", object)
	}
	chat := false
	switch string(object) {
	case "chat.completion":
		chat = true
	case "text_completion":
	default:
		// A compatible server that names no object: the choices say which answer it is.
		probe, ok := TopMember(items[0], "message")
		chat = ok && kindOf(probe) == kindObject
		if _, isText := TopMember(items[0], "text"); !chat && !isText {
			return nil, fmt.Errorf("openai: a stored answer of object %q cannot be replayed as a stream", object)
		}
	}
	chunkObject := "text_completion"
	if chat {
		chunkObject = "chat.completion.chunk"
	}
	r.head = append(r.head, '{')
	if kindOf(id) != kindInvalid && kindOf(id) != kindNull {
		r.head = appendCompact(appendField(r.head, "id"), id)
	}
	r.head = appendStr(appendField(r.head, "object"), chunkObject)
	for _, f := range []struct {
		name string
		val  json.RawMessage
	}{{"created", created}, {"model", model}, {"service_tier", tier}, {"system_fingerprint", fingerprint}} {
		if k := kindOf(f.val); k != kindInvalid && k != kindNull {
			r.head = appendCompact(appendField(r.head, f.name), f.val)
		}
	}
	r.head = append(appendField(r.head, "choices"), '[')
	for i, item := range items {
		var err error
		if chat {
			err = r.chatChoice(item, i)
		} else {
			err = r.textChoice(item, i)
		}
		if err != nil {
			return nil, err
		}
	}
	if includeUsage && kindOf(usage) == kindObject {
		chunk := append(bytes.Clone(r.head), `],"usage":`...)
		chunk = appendCompact(chunk, usage)
		r.out = append(r.out, append(chunk, '}'))
	}
	return r.out, nil
}

// replayer writes the chunks of one answer.
type replayer struct {
	head         []byte // every chunk's beginning, up to the choices' opening bracket
	includeUsage bool
	out          [][]byte
}

// choice writes a chunk of one choice: index, the delta or text written by body, logprobs and
// finish_reason as given (nil: null).
func (r *replayer) choice(index int, chat bool, body func([]byte) []byte, logprobs, finish json.RawMessage) {
	c := append(bytes.Clone(r.head), '{')
	if chat {
		c = appendInt(appendKey(c, "index"), index)
		c = append(appendField(c, "delta"), '{')
		c = append(body(c), '}')
	} else {
		c = body(appendKey(c, "text"))
		c = appendInt(appendField(c, "index"), index)
	}
	c = appendRawOrNull(appendField(c, "logprobs"), logprobs)
	c = appendRawOrNull(appendField(c, "finish_reason"), finish)
	c = append(c, '}', ']')
	if r.includeUsage {
		c = append(c, `,"usage":null`...)
	}
	r.out = append(r.out, append(c, '}'))
}

func appendRawOrNull(dst []byte, raw json.RawMessage) []byte {
	if kindOf(raw) == kindInvalid {
		return append(dst, "null"...)
	}
	return appendCompact(dst, raw)
}

// replayedChoice is what a stored choice holds besides its message or text.
type replayedChoice struct {
	index    int
	logprobs json.RawMessage
	finish   json.RawMessage
	message  json.RawMessage
	text     json.RawMessage
}

func readChoice(raw json.RawMessage, position int) (replayedChoice, error) {
	if kindOf(raw) != kindObject {
		return replayedChoice{}, errors.New("openai: a stored answer's choice is not an object")
	}
	c := replayedChoice{index: position}
	for _, m := range members(raw) {
		switch string(m.key) {
		case "index":
			i, ok := smallInt(m.val)
			if !ok || i < 0 || i >= MaxChoices {
				return replayedChoice{}, errors.New("openai: a stored answer's choice index is out of range")
			}
			c.index = i
		case "logprobs":
			if k := kindOf(m.val); k != kindNull && k != kindObject {
				return replayedChoice{}, errors.New("openai: a stored answer's logprobs is not an object")
			}
			c.logprobs = m.val
		case "finish_reason":
			c.finish = m.val
		case "message":
			c.message = m.val
		case "text":
			c.text = m.val
		}
	}
	return c, nil
}

func (r *replayer) textChoice(raw json.RawMessage, position int) error {
	c, err := readChoice(raw, position)
	if err != nil {
		return err
	}
	text, err := stringOrNull(c.text, "text")
	if err != nil {
		return err
	}
	logprobs := c.logprobs
	for _, p := range pieces(text, replayPiece) {
		r.choice(c.index, false, func(b []byte) []byte { return appendString(b, p) }, logprobs, nil)
		logprobs = nil
	}
	r.choice(c.index, false, func(b []byte) []byte { return append(b, `""`...) }, logprobs, c.finish)
	return nil
}

func (r *replayer) chatChoice(raw json.RawMessage, position int) error {
	c, err := readChoice(raw, position)
	if err != nil {
		return err
	}
	if kindOf(c.message) != kindObject {
		return errors.New("openai: a stored chat answer's choice has no message")
	}
	var role, content, refusal, calls, fn, blocks json.RawMessage
	var extras []member
	for _, m := range members(c.message) {
		switch string(m.key) {
		case "role":
			role = m.val
		case "content":
			content = m.val
		case "refusal":
			refusal = m.val
		case "tool_calls":
			calls = m.val
		case "function_call":
			fn = m.val
		case "content_blocks":
			blocks = m.val
		default:
			extras = append(extras, m)
		}
	}
	if k := kindOf(role); k != kindString {
		role = json.RawMessage(`"assistant"`)
	}
	text, err := stringOrNull(content, "content")
	if err != nil {
		return err
	}
	refusalText, err := stringOrNull(refusal, "refusal")
	if err != nil {
		return err
	}

	// The first chunk: the role, and what comes whole.
	r.choice(c.index, true, func(b []byte) []byte {
		b = appendCompact(appendKey(b, "role"), role)
		if kindOf(content) == kindString {
			b = append(appendField(b, "content"), `""`...)
		} else {
			b = append(appendField(b, "content"), "null"...)
		}
		switch kindOf(refusal) {
		case kindNull:
			b = append(appendField(b, "refusal"), "null"...)
		case kindString:
			b = append(appendField(b, "refusal"), `""`...)
		}
		return appendMembers(b, extras)
	}, c.logprobs, nil)

	delta := func(write func([]byte) []byte) { r.choice(c.index, true, write, nil, nil) }
	contentPieces := func(s []byte) {
		for _, p := range pieces(s, replayPiece) {
			delta(func(b []byte) []byte { return appendString(appendKey(b, "content"), p) })
		}
	}
	if err := replayBlocks(blocks, text, contentPieces, delta); err != nil {
		return err
	}
	for _, p := range pieces(refusalText, replayPiece) {
		delta(func(b []byte) []byte { return appendString(appendKey(b, "refusal"), p) })
	}
	switch kindOf(calls) {
	case kindInvalid, kindNull:
	case kindArray:
		for i, call := range elements(calls) {
			if err := replayCall(call, i, delta); err != nil {
				return err
			}
		}
	default:
		return errors.New("openai: a stored answer's tool_calls is not an array")
	}
	switch kindOf(fn) {
	case kindInvalid, kindNull:
	case kindObject:
		name, args, rest, err := readFunction(fn)
		if err != nil {
			return err
		}
		delta(func(b []byte) []byte {
			b = append(appendKey(b, "function_call"), '{')
			b = appendString(appendKey(b, "name"), name)
			b = append(b, `,"arguments":""`...)
			return append(appendMembers(b, rest), '}')
		})
		for _, p := range pieces(args, replayPiece) {
			delta(func(b []byte) []byte {
				b = append(appendKey(b, "function_call"), '{')
				return append(appendString(appendKey(b, "arguments"), p), '}')
			})
		}
	default:
		return errors.New("openai: a stored answer's function_call is not an object")
	}
	r.choice(c.index, true, func(b []byte) []byte { return b }, nil, c.finish)
	return nil
}

// replayBlocks replays the content, and the thinking of content_blocks in its place among the
// text blocks. Blocks whose text is not the content (a body edited by hand) have their
// thinking replayed first, then the content.
func replayBlocks(blocks json.RawMessage, content []byte, contentPieces func([]byte), delta func(func([]byte) []byte)) error {
	switch kindOf(blocks) {
	case kindInvalid, kindNull:
		contentPieces(content)
		return nil
	case kindArray:
	default:
		return errors.New("openai: a stored answer's content_blocks is not an array")
	}
	type storedBlock struct {
		typ, text, thinking, signature, data []byte
	}
	var list []storedBlock
	var joined []byte
	for _, raw := range elements(blocks) {
		if kindOf(raw) != kindObject {
			return errors.New("openai: a stored answer's content block is not an object")
		}
		var b storedBlock
		for _, m := range members(raw) {
			s, err := stringOrNull(m.val, "content block "+string(m.key))
			if err != nil {
				return err
			}
			switch string(m.key) {
			case "type":
				b.typ = s
			case "text":
				b.text = s
			case "thinking":
				b.thinking = s
			case "signature":
				b.signature = s
			case "data":
				b.data = s
			}
		}
		if string(b.typ) == "text" {
			joined = append(joined, b.text...)
		}
		list = append(list, b)
	}
	inPlace := bytes.Equal(joined, content)
	for i, b := range list {
		switch string(b.typ) {
		case "text":
			if inPlace {
				contentPieces(b.text)
			}
		case "thinking":
			delta(func(d []byte) []byte {
				return append(appendString(blockDeltaHead(d, i, "thinking"), b.thinking), `}}]`...)
			})
			if len(b.signature) > 0 {
				delta(func(d []byte) []byte {
					return append(appendString(blockDeltaHead(d, i, "signature"), b.signature), `}}]`...)
				})
			}
		case "redacted_thinking":
			delta(func(d []byte) []byte {
				return append(appendString(blockDeltaHead(d, i, "data"), b.data), `}}]`...)
			})
		}
	}
	if !inPlace {
		contentPieces(content)
	}
	return nil
}

// blockDeltaHead writes `"content_blocks":[{"index":i,"delta":{"key":`.
func blockDeltaHead(b []byte, index int, key string) []byte {
	b = append(appendKey(b, "content_blocks"), `[{"index":`...)
	b = appendInt(b, index)
	b = append(b, `,"delta":{`...)
	return appendKey(b, key)
}

// replayCall replays tool call i: its id, type, name and any other member first, then its
// arguments in pieces.
func replayCall(raw json.RawMessage, i int, delta func(func([]byte) []byte)) error {
	if kindOf(raw) != kindObject {
		return errors.New("openai: a stored answer's tool call is not an object")
	}
	var fn json.RawMessage
	var rest []member
	for _, m := range members(raw) {
		switch string(m.key) {
		case "function":
			fn = m.val
		case "index":
		default:
			rest = append(rest, m)
		}
	}
	if kindOf(fn) != kindObject {
		return errors.New("openai: a stored answer's tool call has no function")
	}
	name, args, fnRest, err := readFunction(fn)
	if err != nil {
		return err
	}
	head := func(b []byte) []byte {
		b = append(appendKey(b, "tool_calls"), `[{"index":`...)
		return appendInt(b, i)
	}
	delta(func(b []byte) []byte {
		b = head(b)
		b = append(appendField(appendMembers(b, rest), "function"), '{')
		b = appendString(appendKey(b, "name"), name)
		b = append(b, `,"arguments":""`...)
		return append(appendMembers(b, fnRest), `}}]`...)
	})
	for _, p := range pieces(args, replayPiece) {
		delta(func(b []byte) []byte {
			b = append(head(b), `,"function":{"arguments":`...)
			return append(appendString(b, p), `}}]`...)
		})
	}
	return nil
}

// readFunction reads a stored function call: its name, arguments, and other members.
func readFunction(fn json.RawMessage) (name, args []byte, rest []member, err error) {
	for _, m := range members(fn) {
		switch string(m.key) {
		case "name":
			name, err = stringOrNull(m.val, "function name")
		case "arguments":
			args, err = stringOrNull(m.val, "function arguments")
		default:
			rest = append(rest, m)
		}
		if err != nil {
			return nil, nil, nil, err
		}
	}
	return name, args, rest, nil
}

// pieces cuts s into pieces of at most about size bytes, on character boundaries, after a
// space where one falls in the second half of a piece.
func pieces(s []byte, size int) [][]byte {
	var out [][]byte
	for len(s) > size {
		cut := size
		for cut > size/2 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		if sp := bytes.LastIndexAny(s[size/2:cut], " \n"); sp >= 0 {
			cut = size/2 + sp + 1
		}
		out = append(out, s[:cut])
		s = s[cut:]
	}
	if len(s) > 0 {
		out = append(out, s)
	}
	return out
}

// appendMembers writes members as sent, each after a comma unless first.
func appendMembers(b []byte, ms []member) []byte {
	for _, m := range ms {
		b = appendCompact(append(appendString(appendComma(b), m.key), ':'), m.val)
	}
	return b
}
