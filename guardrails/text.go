package guardrails

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
)

// ExtractText returns the text a hook's text checks read from a body, as the reference
// gateway's getText does, so the gateway can fill Input.Text with it and the runner can
// refresh it after a check rewrites the body:
//
//   - before the request: the last message's text (its string content, or its text parts
//     joined by newlines) for chat and messages bodies, the prompt for completions, the input
//     for embeddings;
//   - after the request: the first choice's message content (chat) or text (completions), or
//     the text blocks of a messages answer.
//
// The body's shape decides, not the endpoint. A body that is not a JSON object gives "".
func ExtractText(hook Hook, body json.RawMessage) string {
	doc, err := decodeBody(body)
	if err != nil {
		return ""
	}
	var parts []string
	visitTexts(hook, doc, false, func(s string) string {
		if s != "" {
			parts = append(parts, s)
		}
		return s
	})
	return strings.Join(parts, "\n")
}

// textOf is what a text check reads: the Input's Text, or, when the gateway left it empty on
// a whole body, the text ExtractText finds in the hook's body.
func textOf(in Input) string {
	if in.Text != "" || in.Stream {
		return in.Text
	}
	return ExtractText(in.Hook, hookBody(in))
}

// hookBody is the body a hook's checks judge and rewrite: the request before it, the answer
// after it.
func hookBody(in Input) json.RawMessage {
	if in.Hook == AfterRequest {
		return in.Response
	}
	return in.Request
}

var errNotObject = errors.New("the body is not a JSON object")

// decodeBody decodes a body keeping numbers as json.Number, so a rewritten body carries the
// client's numbers unchanged.
func decodeBody(body json.RawMessage) (map[string]any, error) {
	if len(bytes.TrimSpace(body)) == 0 {
		return nil, errNotObject
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var doc map[string]any
	if err := dec.Decode(&doc); err != nil {
		return nil, err
	}
	if doc == nil {
		return nil, errNotObject
	}
	return doc, nil
}

// encodeBody encodes a rewritten body without escaping <, > and & (they are the client's).
func encodeBody(doc map[string]any) (json.RawMessage, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(doc); err != nil {
		return nil, err
	}
	return json.RawMessage(bytes.TrimRight(buf.Bytes(), "\n")), nil
}

// visitTexts calls fn on each text of doc and stores what fn returns in its place. With all
// false it visits what ExtractText reads (the last message, the first choice); with all true
// every message (and a messages body's system prompt), every choice, every prompt and input.
func visitTexts(hook Hook, doc map[string]any, all bool, fn func(string) string) {
	if hook == AfterRequest {
		if choices, ok := doc["choices"].([]any); ok {
			for i, c := range choices {
				if !all && i > 0 {
					break
				}
				choice, ok := c.(map[string]any)
				if !ok {
					continue
				}
				if msg, ok := choice["message"].(map[string]any); ok {
					visitContent(msg, "content", fn)
				} else if _, ok := choice["text"].(string); ok {
					visitContent(choice, "text", fn)
				}
			}
			return
		}
		if _, ok := doc["content"].([]any); ok {
			visitContent(doc, "content", fn)
		}
		return
	}
	if msgs, ok := doc["messages"].([]any); ok {
		if all {
			if _, ok := doc["system"]; ok {
				visitContent(doc, "system", fn)
			}
		}
		for i, m := range msgs {
			if !all && i < len(msgs)-1 {
				continue
			}
			if msg, ok := m.(map[string]any); ok {
				visitContent(msg, "content", fn)
			}
		}
		return
	}
	for _, key := range []string{"prompt", "input"} {
		if _, ok := doc[key]; ok {
			visitStrings(doc, key, fn)
			return
		}
	}
}

// visitContent visits a message's content: a string, or an array of parts whose text parts
// ({"type":"text","text":...}, or any part with a string "text") are visited.
func visitContent(obj map[string]any, key string, fn func(string) string) {
	switch c := obj[key].(type) {
	case string:
		obj[key] = fn(c)
	case []any:
		for _, p := range c {
			part, ok := p.(map[string]any)
			if !ok {
				continue
			}
			if t, ok := part["text"].(string); ok {
				part["text"] = fn(t)
			}
		}
	}
}

// visitStrings visits a prompt or an input: a string or an array of strings (or of messages,
// as the Responses API's input is).
func visitStrings(obj map[string]any, key string, fn func(string) string) {
	switch v := obj[key].(type) {
	case string:
		obj[key] = fn(v)
	case []any:
		for i, it := range v {
			switch t := it.(type) {
			case string:
				v[i] = fn(t)
			case map[string]any:
				visitContent(t, "content", fn)
			}
		}
	}
}
