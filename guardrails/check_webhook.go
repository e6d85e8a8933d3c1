package guardrails

import (
	"context"
	"encoding/json"
	"fmt"
)

// webhookAnswerLimit bounds a webhook's answer, which may carry a whole rewritten body.
const webhookAnswerLimit = 16 << 20

// NewWebhookCheck builds default.webhook, the reference gateway's webhook plugin: the check's
// input is POSTed to a receiver whose answer is the verdict.
//
// Parameters: webhookURL (required, http or https, checked by the egress guard now and on
// every connection), headers (object of strings sent with the call, never shown back; the
// transport's headers and X-Causeway-Signature cannot be set), timeout (milliseconds, 1 to
// 60000, default 3000). Hooks: both.
//
// The call is POST webhookURL with Content-Type application/json, signed with SignatureHeader,
// and the body of the reference's plugin without the request's headers (so never the client's
// credentials):
//
//	{"eventType": "beforeRequestHook", "requestType": "chatComplete", "provider": "openai",
//	 "model": "gpt-4o", "metadata": {...},
//	 "request": {"json": <request body>, "text": <request text, before hook>},
//	 "response": {"json": <answer body>, "text": <answer text>},   (after hook only)
//	 "stream": false, "final": true}
//
// The receiver answers 2xx with
//
//	{"verdict": true|false, "data": <any, shown in the hook results>,
//	 "transformedData": {"request": {"json": <new request body>}, "response": {"json": <new answer body>}}}
//
// where transformedData is optional; its request.json (before hook) or response.json (after
// hook), an object, becomes the Verdict's Transformed. Another status, an answer without a
// boolean verdict or one that is not JSON is an error. The webhook is not followed through
// redirects: its headers would go with them.
func NewWebhookCheck(params map[string]any, deps Deps) (Check, error) {
	deps, err := netDeps(idWebhook, deps, true)
	if err != nil {
		return nil, err
	}
	p := netParams(params)
	c := &webhookCheck{signedEndpoint{
		url:     p.url("webhookURL", true, "", deps.CheckURL),
		header:  p.headers("headers"),
		timeout: p.millis("timeout", 3000, 60000),
		client:  noRedirects(deps.Client),
		secret:  deps.Secret,
		now:     deps.Now,
	}}
	if err := p.done(); err != nil {
		return nil, err
	}
	return c, nil
}

var _ Check = (*webhookCheck)(nil)

type webhookCheck struct{ signedEndpoint }

// hookEvent is the webhook's body: the reference gateway's plugin context, less headers.
type hookEvent struct {
	EventType   Hook              `json:"eventType"`
	RequestType string            `json:"requestType,omitempty"`
	Provider    string            `json:"provider,omitempty"`
	Model       string            `json:"model,omitempty"`
	Metadata    map[string]string `json:"metadata,omitempty"`
	Request     webhookBody       `json:"request"`
	Response    *webhookBody      `json:"response,omitempty"`
	Stream      bool              `json:"stream"`
	Final       bool              `json:"final"`
}

type webhookBody struct {
	JSON json.RawMessage `json:"json,omitempty"`
	Text string          `json:"text,omitempty"`
}

func newHookEvent(in Input) hookEvent {
	ev := hookEvent{
		EventType:   in.Hook,
		RequestType: in.Endpoint,
		Provider:    in.Provider,
		Model:       in.Model,
		Metadata:    in.Metadata,
		Request:     webhookBody{JSON: in.Request},
		Stream:      in.Stream,
		Final:       in.Final,
	}
	if in.Hook == AfterRequest {
		ev.Response = &webhookBody{JSON: in.Response, Text: in.Text}
	} else {
		ev.Request.Text = in.Text
	}
	return ev
}

type webhookAnswer struct {
	Verdict         *bool           `json:"verdict"`
	Data            json.RawMessage `json:"data"`
	TransformedData *struct {
		Request  *transformedBody `json:"request"`
		Response *transformedBody `json:"response"`
	} `json:"transformedData"`
}

type transformedBody struct {
	JSON json.RawMessage `json:"json"`
}

func (c *webhookCheck) Run(ctx context.Context, in Input) (Verdict, error) {
	body, err := encodeJSONNoEscape(newHookEvent(in))
	if err != nil {
		return Verdict{}, fmt.Errorf("webhook: encoding the input: %w", err)
	}
	var ans webhookAnswer
	if err := c.post(ctx, "webhook", body, webhookAnswerLimit, &ans); err != nil {
		return Verdict{}, err
	}
	if ans.Verdict == nil {
		return Verdict{}, &callError{what: "webhook", msg: "answer has no boolean verdict"}
	}

	v := Verdict{Pass: *ans.Verdict, Explanation: "webhook denied"}
	if v.Pass {
		v.Explanation = "webhook allowed"
	}
	var t json.RawMessage
	if td := ans.TransformedData; td != nil {
		if in.Hook == BeforeRequest && td.Request != nil {
			t = td.Request.JSON
		} else if in.Hook == AfterRequest && td.Response != nil {
			t = td.Response.JSON
		}
	}
	if len(t) > 0 && string(t) != "null" {
		if t[0] != '{' {
			return Verdict{}, &callError{what: "webhook", msg: "transformedData holds a body that is not a JSON object"}
		}
		v.Transformed = t
	}
	data := ans.Data
	if len(data) == 0 {
		data = json.RawMessage("null")
	}
	v.Data = map[string]any{"responseData": data, "transformed": v.Transformed != nil}
	return v, nil
}

// Hooks are the hooks the check runs on.
func (c *webhookCheck) Hooks() []Hook { return []Hook{BeforeRequest, AfterRequest} }
