package openai

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
)

// StreamAccumulator rebuilds the whole answer of a streamed chat or text completion from its
// chunks: what the answer cache stores of a streamed miss. Its zero value is ready; Add takes
// each data payload (chat.completion.chunk or text_completion chunk, as every adapter's stream
// yields them) and Body gives the chat.completion or text_completion object that the same
// answer has when not streamed.
//
// Only what the answer needs is decoded: the chunk's id, object, created, model,
// system_fingerprint, service_tier, usage and choices, and of each choice its index, delta (or
// text), logprobs and finish_reason. The other members of a chunk or a choice describe the
// chunk rather than the answer (OpenAI's obfuscation padding, Azure's content filter results
// of one segment, Groq's x_groq) and are dropped. A delta's members beyond OpenAI's (role,
// content, refusal, tool_calls, function_call, and the gateway's content_blocks) are merged as
// OpenAI's SDKs merge them when they are strings (concatenated: reasoning_content) or arrays
// (appended: annotations); one of another kind (audio) cannot be merged safely, and leaves the
// answer incomplete rather than rebuilt wrong.
type StreamAccumulator struct {
	// Choices is the number of choices the request asked for (its n): when set, Complete
	// also waits for that many. Zero counts the choices the stream began.
	Choices int

	kind                         answerKind
	id, model, fingerprint, tier []byte
	created                      []byte // as sent
	usage                        []byte // the last usage object, as sent
	choices                      []*choiceAcc
	failed                       bool   // an error chunk came
	lossy                        string // why the answer cannot be rebuilt, when it cannot

	// Scratch slices for splitting a chunk, one per level of nesting, reused chunk after chunk.
	scratch [scratchLevels][]member
	items   [2][]json.RawMessage
}

// The levels of a chunk split at once: the chunk, a choice, its delta, a tool call (or a
// content block, or logprobs), its function (or the block's delta).
const (
	levelChunk = iota
	levelChoice
	levelDelta
	levelCall
	levelFunction
	scratchLevels
)

// split splits an object at a level of nesting into the scratch slice of that level.
func (a *StreamAccumulator) split(level int, obj []byte) []member {
	a.scratch[level] = splitMembers(a.scratch[level][:0], obj)
	return a.scratch[level]
}

// splitArray splits the choices (level 0) or a delta's array (level 1).
func (a *StreamAccumulator) splitArray(level int, arr []byte) []json.RawMessage {
	a.items[level] = splitElements(a.items[level][:0], arr)
	return a.items[level]
}

type answerKind uint8

const (
	answerUnknown answerKind = iota
	answerChat
	answerText
)

// Bounds on indices a stream sends, so that a corrupt one cannot make the accumulator
// allocate without limit.
const maxToolCalls = 1024

// choiceAcc is one choice being rebuilt.
type choiceAcc struct {
	seen     bool
	finish   []byte
	finished bool
	logprobs membersAcc

	text []byte // a text completion's

	role       []byte
	content    []byte
	hasContent bool // a content string came (possibly empty)
	refusal    []byte
	refusalSet refusalState
	calls      []callAcc
	fn         *callAcc
	extras     membersAcc
	// blocks are content_blocks: thinking blocks as their deltas came, and the runs of content
	// between them as text blocks (start and end in content). They are part of the answer
	// only when thinking came.
	blocks      []blockAcc
	hasThinking bool
}

type refusalState uint8

const (
	refusalAbsent refusalState = iota
	refusalNull
	refusalText
)

// callAcc is a tool call (or a legacy function_call) being rebuilt.
type callAcc struct {
	began              bool
	id, typ, name, arg []byte
}

type blockType uint8

const (
	blockText blockType = iota
	blockThinking
	blockRedacted
)

type blockAcc struct {
	typ                       blockType
	key                       int // the index its deltas carry
	start, end                int // a text block's run of content
	thinking, signature, data []byte
}

// membersAcc merges the members of objects that come in pieces: arrays appended, strings
// concatenated, null kept until a value comes; a value of another kind replaces the last (when
// replace) or makes the merge fail.
type membersAcc struct {
	seen    bool // a non-null object came
	members []memberAcc
}

type memberAcc struct {
	name string
	kind kind
	buf  []byte // a string's text, an array's elements joined by commas, or any other value as sent
}

// Add merges one data payload of the stream. It returns an error for a payload that is not a
// chunk (not a JSON object, or a member of the wrong type); the answer is then not to be
// trusted. A chunk carrying an error (the provider failed mid-stream) is read without error
// but leaves the answer incomplete; [DONE] is ignored.
func (a *StreamAccumulator) Add(chunk []byte) error {
	chunk = bytes.TrimSpace(chunk)
	if string(chunk) == "[DONE]" {
		return nil
	}
	if kindOf(chunk) != kindObject || !json.Valid(chunk) {
		return errors.New("openai: a stream chunk is not a JSON object")
	}
	ms := a.split(levelChunk, chunk)
	for _, m := range ms {
		if string(m.key) == "error" && kindOf(m.val) != kindNull {
			a.failed = true
			return nil
		}
	}
	var choices json.RawMessage
	for _, m := range ms {
		var err error
		switch string(m.key) {
		case "object":
			var obj []byte
			if obj, err = stringOrNull(m.val, "object"); err == nil {
				switch string(obj) {
				case "chat.completion.chunk":
					err = a.setKind(answerChat)
				case "text_completion":
					err = a.setKind(answerText)
				}
			}
		case "id":
			err = keepFirst(&a.id, m.val, "id")
		case "model":
			err = keepFirst(&a.model, m.val, "model")
		case "system_fingerprint":
			err = keepFirst(&a.fingerprint, m.val, "system_fingerprint")
		case "service_tier":
			err = keepFirst(&a.tier, m.val, "service_tier")
		case "created":
			switch kindOf(m.val) {
			case kindNumber:
				// Azure's first chunk, of prompt filter results, is created 0.
				if a.created == nil || string(a.created) == "0" {
					a.created = append(a.created[:0], m.val...)
				}
			case kindNull:
			default:
				err = errors.New("openai: a stream chunk's created is not a number")
			}
		case "usage":
			switch kindOf(m.val) {
			case kindObject:
				a.usage = appendCompact(a.usage[:0], m.val)
			case kindNull:
			default:
				err = errors.New("openai: a stream chunk's usage is not an object")
			}
		case "choices":
			choices = m.val
		}
		if err != nil {
			return err
		}
	}
	switch kindOf(choices) {
	case kindInvalid, kindNull:
		return nil
	case kindArray:
	default:
		return errors.New("openai: a stream chunk's choices is not an array")
	}
	for _, c := range a.splitArray(0, choices) {
		if err := a.addChoice(c); err != nil {
			return err
		}
	}
	return nil
}

func (a *StreamAccumulator) setKind(k answerKind) error {
	if a.kind != answerUnknown && a.kind != k {
		return errors.New("openai: a stream mixes chat and text completion chunks")
	}
	a.kind = k
	return nil
}

func (a *StreamAccumulator) addChoice(raw json.RawMessage) error {
	if kindOf(raw) != kindObject {
		return errors.New("openai: a stream chunk's choice is not an object")
	}
	index := 0
	var delta, text, logprobs, finish json.RawMessage
	for _, m := range a.split(levelChoice, raw) {
		switch string(m.key) {
		case "index":
			i, ok := smallInt(m.val)
			if !ok || i < 0 || i >= MaxChoices {
				return fmt.Errorf("openai: a stream chunk's choice index is not an integer from 0 to %d", MaxChoices-1)
			}
			index = i
		case "delta":
			delta = m.val
		case "text":
			text = m.val
		case "logprobs":
			logprobs = m.val
		case "finish_reason":
			finish = m.val
		}
	}
	if k := kindOf(delta); k != kindInvalid && k != kindNull {
		if k != kindObject {
			return errors.New("openai: a stream chunk's delta is not an object")
		}
		if err := a.setKind(answerChat); err != nil {
			return err
		}
	}
	if k := kindOf(text); k != kindInvalid && k != kindNull {
		if k != kindString {
			return errors.New("openai: a stream chunk's text is not a string")
		}
		if err := a.setKind(answerText); err != nil {
			return err
		}
	}
	for len(a.choices) <= index {
		a.choices = append(a.choices, &choiceAcc{})
	}
	c := a.choices[index]
	c.seen = true
	if kindOf(delta) == kindObject {
		if err := a.addDelta(c, delta); err != nil {
			return err
		}
	}
	if kindOf(text) == kindString {
		c.text = append(c.text, unquote(text)...)
	}
	switch kindOf(logprobs) {
	case kindInvalid, kindNull:
	case kindObject:
		c.logprobs.seen = true
		for _, m := range a.split(levelCall, logprobs) {
			c.logprobs.mergeMember(m.key, m.val, true)
		}
	default:
		return errors.New("openai: a stream chunk's logprobs is not an object")
	}
	reason, err := stringOrNull(finish, "finish_reason")
	if err != nil {
		return err
	}
	// Some compatible servers send "" rather than null before the end.
	if len(reason) > 0 {
		c.finish, c.finished = append(c.finish[:0], reason...), true
	}
	return nil
}

func (a *StreamAccumulator) addDelta(c *choiceAcc, delta json.RawMessage) error {
	for _, m := range a.split(levelDelta, delta) {
		switch string(m.key) {
		case "role":
			if err := keepFirst(&c.role, m.val, "delta.role"); err != nil {
				return err
			}
		case "content":
			s, err := stringOrNull(m.val, "delta.content")
			if err != nil {
				return err
			}
			if kindOf(m.val) == kindString {
				c.addContent(s)
			}
		case "refusal":
			s, err := stringOrNull(m.val, "delta.refusal")
			if err != nil {
				return err
			}
			if kindOf(m.val) == kindString {
				c.refusal, c.refusalSet = append(c.refusal, s...), refusalText
			} else if c.refusalSet == refusalAbsent {
				c.refusalSet = refusalNull
			}
		case "tool_calls":
			switch kindOf(m.val) {
			case kindNull:
			case kindArray:
				for _, call := range a.splitArray(1, m.val) {
					if err := a.addToolCall(c, call); err != nil {
						return err
					}
				}
			default:
				return errors.New("openai: a stream chunk's delta.tool_calls is not an array")
			}
		case "function_call":
			switch kindOf(m.val) {
			case kindNull:
			case kindObject:
				if c.fn == nil {
					c.fn = &callAcc{}
				}
				if err := a.addFunction(c.fn, m.val); err != nil {
					return err
				}
			default:
				return errors.New("openai: a stream chunk's delta.function_call is not an object")
			}
		case "content_blocks":
			switch kindOf(m.val) {
			case kindNull:
			case kindArray:
				for _, b := range a.splitArray(1, m.val) {
					if err := a.addBlock(c, b); err != nil {
						return err
					}
				}
			default:
				return errors.New("openai: a stream chunk's delta.content_blocks is not an array")
			}
		default:
			if !c.extras.mergeMember(m.key, m.val, false) {
				a.cannotMerge("delta." + string(m.key))
			}
		}
	}
	return nil
}

// cannotMerge records the first member the answer cannot be rebuilt with.
func (a *StreamAccumulator) cannotMerge(what string) {
	if a.lossy == "" {
		a.lossy = what
	}
}

// addContent appends content, extending the text block it continues or beginning one.
func (c *choiceAcc) addContent(s []byte) {
	c.hasContent = true
	if len(s) == 0 {
		return
	}
	if n := len(c.blocks); n > 0 && c.blocks[n-1].typ == blockText {
		c.blocks[n-1].end += len(s)
	} else {
		c.blocks = append(c.blocks, blockAcc{typ: blockText, start: len(c.content), end: len(c.content) + len(s)})
	}
	c.content = append(c.content, s...)
}

// addToolCall merges a tool call delta by its index: id, type and name come once (a repeat is
// ignored), the arguments in pieces. A delta without an index continues the last call, unless
// it brings a new id.
func (a *StreamAccumulator) addToolCall(c *choiceAcc, raw json.RawMessage) error {
	if kindOf(raw) != kindObject {
		return errors.New("openai: a stream chunk's tool call is not an object")
	}
	ms := a.split(levelCall, raw)
	index := -1
	var id []byte
	for _, m := range ms {
		switch string(m.key) {
		case "index":
			i, ok := smallInt(m.val)
			if !ok || i < 0 || i >= maxToolCalls {
				return fmt.Errorf("openai: a stream chunk's tool call index is not an integer from 0 to %d", maxToolCalls-1)
			}
			index = i
		case "id":
			var err error
			if id, err = stringOrNull(m.val, "tool call id"); err != nil {
				return err
			}
		}
	}
	if index < 0 {
		index = max(len(c.calls)-1, 0)
		if len(c.calls) > 0 && len(id) > 0 && len(c.calls[index].id) > 0 && !bytes.Equal(c.calls[index].id, id) {
			index = len(c.calls)
		}
		if index >= maxToolCalls {
			return errors.New("openai: a stream has too many tool calls")
		}
	}
	for len(c.calls) <= index {
		c.calls = append(c.calls, callAcc{})
	}
	call := &c.calls[index]
	for _, m := range ms {
		var err error
		switch string(m.key) {
		case "index":
		case "id":
			err = keepFirst(&call.id, m.val, "tool call id")
		case "type":
			err = keepFirst(&call.typ, m.val, "tool call type")
		case "function":
			switch kindOf(m.val) {
			case kindNull:
			case kindObject:
				err = a.addFunction(call, m.val)
			default:
				err = errors.New("openai: a stream chunk's tool call function is not an object")
			}
		default:
			if kindOf(m.val) != kindNull {
				a.cannotMerge("delta.tool_calls[]." + string(m.key))
			}
		}
		if err != nil {
			return err
		}
	}
	call.began = true
	return nil
}

// addFunction merges a function's name and arguments.
func (a *StreamAccumulator) addFunction(call *callAcc, raw json.RawMessage) error {
	call.began = true
	for _, m := range a.split(levelFunction, raw) {
		switch string(m.key) {
		case "name":
			s, err := stringOrNull(m.val, "function name")
			if err != nil {
				return err
			}
			// A name comes whole in one delta; some servers repeat it, a few split it.
			if len(call.name) == 0 || !bytes.Equal(call.name, s) {
				call.name = append(call.name, s...)
			}
		case "arguments":
			s, err := stringOrNull(m.val, "function arguments")
			if err != nil {
				return err
			}
			call.arg = append(call.arg, s...)
		default:
			if kindOf(m.val) != kindNull {
				a.cannotMerge("delta function." + string(m.key))
			}
		}
	}
	return nil
}

// addBlock merges a content_blocks delta (the gateway's, for thinking): a piece of the block
// its index names, which continues the last block when that has the same index and type.
// Text reaches content_blocks by content, never by a block delta.
func (a *StreamAccumulator) addBlock(c *choiceAcc, raw json.RawMessage) error {
	if kindOf(raw) != kindObject {
		return errors.New("openai: a stream chunk's content block is not an object")
	}
	index := 0
	var delta json.RawMessage
	for _, m := range a.split(levelCall, raw) {
		switch string(m.key) {
		case "index":
			i, ok := smallInt(m.val)
			if !ok {
				return errors.New("openai: a stream chunk's content block index is not an integer")
			}
			index = i
		case "delta":
			delta = m.val
		}
	}
	if kindOf(delta) != kindObject {
		return errors.New("openai: a stream chunk's content block has no delta object")
	}
	var thinking, signature, data []byte
	var hasThinking, hasData bool
	typ := ""
	for _, m := range a.split(levelFunction, delta) {
		var err error
		switch string(m.key) {
		case "type":
			var t []byte
			t, err = stringOrNull(m.val, "content block type")
			typ = string(t)
		case "thinking":
			thinking, err = stringOrNull(m.val, "content block thinking")
			hasThinking = hasThinking || kindOf(m.val) == kindString
		case "signature":
			signature, err = stringOrNull(m.val, "content block signature")
			hasThinking = hasThinking || kindOf(m.val) == kindString
		case "data":
			data, err = stringOrNull(m.val, "content block data")
			hasData = kindOf(m.val) == kindString
		default:
			if kindOf(m.val) != kindNull {
				a.cannotMerge("delta.content_blocks[].delta." + string(m.key))
				return nil
			}
		}
		if err != nil {
			return err
		}
	}
	var bt blockType
	switch {
	case typ == "thinking" || typ == "" && hasThinking && !hasData:
		bt = blockThinking
	case typ == "redacted_thinking" || typ == "" && hasData && !hasThinking:
		bt = blockRedacted
	case typ == "" && !hasThinking && !hasData:
		return nil
	default:
		a.cannotMerge("delta.content_blocks[] of type " + typ)
		return nil
	}
	c.hasThinking = true
	n := len(c.blocks)
	if n == 0 || c.blocks[n-1].typ != bt || c.blocks[n-1].key != index {
		c.blocks = append(c.blocks, blockAcc{typ: bt, key: index})
		n++
	}
	b := &c.blocks[n-1]
	b.thinking = append(b.thinking, thinking...)
	b.signature = append(b.signature, signature...)
	b.data = append(b.data, data...)
	return nil
}

// mergeMember merges one member; false when it cannot be merged.
func (acc *membersAcc) mergeMember(name []byte, val json.RawMessage, replace bool) bool {
	var cur *memberAcc
	for i := range acc.members {
		if acc.members[i].name == string(name) {
			cur = &acc.members[i]
			break
		}
	}
	k := kindOf(val)
	if cur == nil {
		acc.members = append(acc.members, memberAcc{name: string(name), kind: kindNull})
		cur = &acc.members[len(acc.members)-1]
	}
	switch {
	case k == kindNull:
		return true
	case k == kindString && (cur.kind == kindString || cur.kind == kindNull):
		cur.kind, cur.buf = kindString, append(cur.buf, unquote(val)...)
	case k == kindArray && (cur.kind == kindArray || cur.kind == kindNull):
		if inner := bytes.TrimSpace(val[1 : len(val)-1]); len(inner) > 0 {
			if len(cur.buf) > 0 {
				cur.buf = append(cur.buf, ',')
			}
			cur.buf = appendCompact(cur.buf, inner)
		}
		cur.kind = kindArray
	case replace:
		cur.kind, cur.buf = k, appendCompact(cur.buf[:0], val)
	default:
		return false
	}
	return true
}

// appendMembers writes the merged members as the members of an object.
func (acc *membersAcc) appendMembers(dst []byte) []byte {
	for _, m := range acc.members {
		dst = append(appendStr(appendComma(dst), m.name), ':')
		switch m.kind {
		case kindNull:
			dst = append(dst, "null"...)
		case kindString:
			dst = appendString(dst, m.buf)
		case kindArray:
			dst = append(dst, '[')
			dst = append(dst, m.buf...)
			dst = append(dst, ']')
		default:
			dst = append(dst, m.buf...)
		}
	}
	return dst
}

// Complete reports whether the stream gave a whole answer: every choice (Choices of them, when
// set) finished with a finish_reason, no error chunk came, and every member could be merged.
// A partial answer must not be cached.
func (a *StreamAccumulator) Complete() bool { return a.incomplete() == nil }

// incomplete says why the answer is not whole; nil when it is.
func (a *StreamAccumulator) incomplete() error {
	switch {
	case a.failed:
		return errors.New("openai: the stream carried an error")
	case a.lossy != "":
		return fmt.Errorf("openai: the stream's %s cannot be merged into a whole answer", a.lossy)
	case a.kind == answerUnknown || len(a.choices) == 0:
		return errors.New("openai: the stream carried no choice")
	case len(a.choices) < a.Choices:
		return fmt.Errorf("openai: the stream carried %d of %d choices", len(a.choices), a.Choices)
	}
	for i, c := range a.choices {
		switch {
		case !c.seen:
			return fmt.Errorf("openai: the stream carried no choice %d", i)
		case !c.finished:
			return fmt.Errorf("openai: choice %d of the stream has no finish_reason", i)
		}
		for j := range c.calls {
			if !c.calls[j].began {
				return fmt.Errorf("openai: tool call %d of choice %d never began", j, i)
			}
		}
	}
	return nil
}

// Body is the whole answer the stream gave: a chat.completion object (id, object, created,
// model, choices with their message, logprobs and finish_reason, usage when a chunk carried
// it, system_fingerprint and service_tier when sent) or a text_completion object. It fails
// when the answer is not Complete.
func (a *StreamAccumulator) Body() ([]byte, error) {
	if err := a.incomplete(); err != nil {
		return nil, err
	}
	size := 256 + len(a.usage)
	for _, c := range a.choices {
		size += 256 + len(c.content) + len(c.text) + len(c.refusal)
		for _, m := range c.logprobs.members {
			size += len(m.buf)
		}
		for _, call := range c.calls {
			size += 64 + len(call.arg)
		}
	}
	b := make([]byte, 0, size)
	b = append(b, '{')
	if len(a.id) > 0 {
		b = appendString(appendField(b, "id"), a.id)
	}
	b = appendField(b, "object")
	if a.kind == answerChat {
		b = append(b, `"chat.completion"`...)
	} else {
		b = append(b, `"text_completion"`...)
	}
	if a.created != nil {
		b = append(appendField(b, "created"), a.created...)
	}
	if len(a.model) > 0 {
		b = appendString(appendField(b, "model"), a.model)
	}
	b = append(appendField(b, "choices"), '[')
	for i, c := range a.choices {
		if i > 0 {
			b = append(b, ',')
		}
		if a.kind == answerChat {
			b = c.appendChat(b, i)
		} else {
			b = c.appendText(b, i)
		}
	}
	b = append(b, ']')
	if len(a.usage) > 0 {
		b = append(appendField(b, "usage"), a.usage...)
	}
	if len(a.tier) > 0 {
		b = appendString(appendField(b, "service_tier"), a.tier)
	}
	if len(a.fingerprint) > 0 {
		b = appendString(appendField(b, "system_fingerprint"), a.fingerprint)
	}
	return append(b, '}'), nil
}

func (c *choiceAcc) appendText(b []byte, index int) []byte {
	b = appendString(appendKey(append(b, '{'), "text"), c.text)
	b = appendInt(appendField(b, "index"), index)
	b = c.appendEnd(b)
	return append(b, '}')
}

// appendEnd writes a choice's logprobs and finish_reason.
func (c *choiceAcc) appendEnd(b []byte) []byte {
	b = appendField(b, "logprobs")
	if c.logprobs.seen {
		b = append(c.logprobs.appendMembers(append(b, '{')), '}')
	} else {
		b = append(b, "null"...)
	}
	return appendString(appendField(b, "finish_reason"), c.finish)
}

func (c *choiceAcc) appendChat(b []byte, index int) []byte {
	b = appendInt(appendKey(append(b, '{'), "index"), index)
	b = appendField(b, "message")
	b = append(b, '{')
	role := c.role
	if len(role) == 0 {
		role = []byte(RoleAssistant)
	}
	b = appendString(appendKey(b, "role"), role)
	b = appendField(b, "content")
	// A non-streamed answer that only calls tools or refuses has null content, where its
	// stream sends "" (or null) first.
	calls := len(c.calls) > 0 || c.fn != nil
	if !c.hasContent || len(c.content) == 0 && (calls || c.refusalSet == refusalText) {
		b = append(b, "null"...)
	} else {
		b = appendString(b, c.content)
	}
	switch c.refusalSet {
	case refusalNull:
		b = append(appendField(b, "refusal"), "null"...)
	case refusalText:
		b = appendString(appendField(b, "refusal"), c.refusal)
	}
	b = c.extras.appendMembers(b)
	if len(c.calls) > 0 {
		b = append(appendField(b, "tool_calls"), '[')
		for i := range c.calls {
			if i > 0 {
				b = append(b, ',')
			}
			call := &c.calls[i]
			b = append(b, '{')
			if len(call.id) > 0 {
				b = appendString(appendKey(b, "id"), call.id)
			}
			typ := call.typ
			if len(typ) == 0 {
				typ = []byte("function")
			}
			b = appendString(appendField(b, "type"), typ)
			b = call.appendFunction(appendField(b, "function"))
			b = append(b, '}')
		}
		b = append(b, ']')
	}
	if c.fn != nil {
		b = c.fn.appendFunction(appendField(b, "function_call"))
	}
	if c.hasThinking {
		b = c.appendBlocks(appendField(b, "content_blocks"))
	}
	b = append(b, '}')
	b = c.appendEnd(b)
	return append(b, '}')
}

func (call *callAcc) appendFunction(b []byte) []byte {
	b = appendString(appendKey(append(b, '{'), "name"), call.name)
	b = appendString(appendField(b, "arguments"), call.arg)
	return append(b, '}')
}

// appendBlocks writes content_blocks as the translating adapters write a whole answer's.
func (c *choiceAcc) appendBlocks(b []byte) []byte {
	b = append(b, '[')
	for i, blk := range c.blocks {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, '{')
		switch blk.typ {
		case blockText:
			b = append(appendKey(b, "type"), `"text"`...)
			b = appendString(appendField(b, "text"), c.content[blk.start:blk.end])
		case blockThinking:
			b = append(appendKey(b, "type"), `"thinking"`...)
			if len(blk.thinking) > 0 {
				b = appendString(appendField(b, "thinking"), blk.thinking)
			}
			if len(blk.signature) > 0 {
				b = appendString(appendField(b, "signature"), blk.signature)
			}
		case blockRedacted:
			b = append(appendKey(b, "type"), `"redacted_thinking"`...)
			b = appendString(appendField(b, "data"), blk.data)
		}
		b = append(b, '}')
	}
	return append(b, ']')
}

// keepFirst keeps the first non-empty string a member brings; null is no value.
func keepFirst(dst *[]byte, raw json.RawMessage, what string) error {
	s, err := stringOrNull(raw, what)
	if err == nil && len(*dst) == 0 {
		*dst = append((*dst)[:0], s...)
	}
	return err
}

// stringOrNull reads a string member (nil for null or absent).
func stringOrNull(raw json.RawMessage, what string) ([]byte, error) {
	switch kindOf(raw) {
	case kindInvalid, kindNull:
		return nil, nil
	case kindString:
		return unquote(raw), nil
	}
	return nil, fmt.Errorf("openai: a stream chunk's %s is not a string", what)
}

// smallInt reads an integer of at most 9 digits, as indices are written.
func smallInt(raw json.RawMessage) (int, bool) {
	neg := len(raw) > 0 && raw[0] == '-'
	if neg {
		raw = raw[1:]
	}
	if len(raw) == 0 || len(raw) > 9 {
		return 0, false
	}
	n := 0
	for _, c := range raw {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	if neg {
		n = -n
	}
	return n, true
}
