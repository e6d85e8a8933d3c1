package providers

import (
	"github.com/causeway/causeway/gateway/openai"
)

// WithOverrides returns c with a config's override_params applied. A call that carries its
// parsed request has it overridden (openai's WithOverrides methods: Body changes only where
// overridden, and the overridden members are read again and checked), and Body follows it;
// otherwise Body, when there is one (a pass-through GET has none), is overridden as JSON. A
// model override becomes Model.
func (c Call) WithOverrides(overrides map[string]any) (Call, error) {
	if len(overrides) == 0 {
		return c, nil
	}
	var model string
	switch {
	case c.Chat != nil:
		r, err := c.Chat.WithOverrides(overrides)
		if err != nil {
			return c, err
		}
		c.Chat, c.Body, model = r, r.Raw, r.Model
	case c.Completion != nil:
		r, err := c.Completion.WithOverrides(overrides)
		if err != nil {
			return c, err
		}
		c.Completion, c.Body, model = r, r.Raw, r.Model
	case c.Embedding != nil:
		r, err := c.Embedding.WithOverrides(overrides)
		if err != nil {
			return c, err
		}
		c.Embedding, c.Body, model = r, r.Raw, r.Model
	case c.Rerank != nil:
		r, err := c.Rerank.WithOverrides(overrides)
		if err != nil {
			return c, err
		}
		c.Rerank, c.Body, model = r, r.Raw, r.Model
	default:
		if len(c.Body) > 0 {
			body, err := openai.WithOverrides(c.Body, overrides)
			if err != nil {
				return c, err
			}
			c.Body = body
		}
		if m, ok := overrides["model"].(string); ok {
			c.Model = m
		}
		return c, nil
	}
	if _, ok := overrides["model"]; ok {
		c.Model = model
	}
	return c, nil
}

// ChatRequest is the call's chat request: Chat, or, for a call built from bytes alone, Body
// read once by openai.ParseChat, the call's Model (the model after overrides) standing in for
// the body's, and a streamed call's stream flag for the body's.
func (c Call) ChatRequest() (*openai.ChatRequest, error) {
	if c.Chat != nil {
		return c.Chat, nil
	}
	body, err := c.bodyAsCalled()
	if err != nil {
		return nil, err
	}
	return openai.ParseChat(body)
}

// RerankRequest is the call's rerank request: Rerank, or Body read by openai.ParseRerank, as
// ChatRequest does.
func (c Call) RerankRequest() (*openai.RerankRequest, error) {
	if c.Rerank != nil {
		return c.Rerank, nil
	}
	body, err := c.bodyAsCalled()
	if err != nil {
		return nil, err
	}
	return openai.ParseRerank(body)
}

// bodyAsCalled is Body with the call's model and stream flag, which decide over the body's.
func (c Call) bodyAsCalled() ([]byte, error) {
	set := map[string]any{}
	if c.Model != "" {
		set["model"] = c.Model
	}
	if c.Stream {
		set["stream"] = true
	}
	return openai.WithOverrides(c.Body, set)
}
