package guardrails

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
)

// NewExternalPolicyCheck builds default.externalPolicy, the specification's external-policy
// guardrail: a policy service outside the gateway decides, by policy id, whether a request
// or an answer may go on. The reference gateway has no such plugin; the wire is ours.
//
// Parameters: policyId (required, at most 256 characters), url (required, the policy
// service's decision endpoint, http or https, checked by the egress guard now and on every
// connection), headers (object of strings sent with the call, e.g. the service's API key;
// never shown back), timeout (milliseconds, 1 to 60000, default 10000). Hooks: both.
//
// The call is POST url with Content-Type application/json, signed with SignatureHeader like
// the webhook's, and the body
//
//	{"policy_id": "<policyId>", "hook": "beforeRequestHook"|"afterRequestHook",
//	 "endpoint": "chatComplete", "provider": "openai", "model": "gpt-4o",
//	 "metadata": {...}, "request": <request body>, "response": <answer body, after hook>,
//	 "text": <the text checks read>, "stream": false, "final": true}
//
// and the service answers 2xx with
//
//	{"allow": true|false, "reason": "<why, shown as the explanation>"}
//
// A false allow denies. Another status (an unknown policy id is the service's 404), an answer
// without a boolean allow or one that is not JSON is an error, which the runner treats as the
// guardrail's failOnError says. Redirects are not followed.
func NewExternalPolicyCheck(params map[string]any, deps Deps) (Check, error) {
	deps, err := netDeps(idExternalPolicy, deps, true)
	if err != nil {
		return nil, err
	}
	p := netParams(params)
	c := &policyCheck{policyID: p.nonEmptyStr("policyId", true, "", 256), signedEndpoint: signedEndpoint{
		url:     p.url("url", true, "", deps.CheckURL),
		header:  p.headers("headers"),
		timeout: p.millis("timeout", 10000, 60000),
		client:  noRedirects(deps.Client),
		secret:  deps.Secret,
		now:     deps.Now,
	}}
	if err := p.done(); err != nil {
		return nil, err
	}
	return c, nil
}

var _ Check = (*policyCheck)(nil)

type policyCheck struct {
	policyID string
	signedEndpoint
}

// policyRequest is the body posted to the policy service.
type policyRequest struct {
	PolicyID string            `json:"policy_id"`
	Hook     Hook              `json:"hook"`
	Endpoint string            `json:"endpoint,omitempty"`
	Provider string            `json:"provider,omitempty"`
	Model    string            `json:"model,omitempty"`
	Metadata map[string]string `json:"metadata,omitempty"`
	Request  json.RawMessage   `json:"request,omitempty"`
	Response json.RawMessage   `json:"response,omitempty"`
	Text     string            `json:"text,omitempty"`
	Stream   bool              `json:"stream"`
	Final    bool              `json:"final"`
}

type policyAnswer struct {
	Allow  *bool  `json:"allow"`
	Reason string `json:"reason"`
}

func (c *policyCheck) Run(ctx context.Context, in Input) (Verdict, error) {
	body, err := encodeJSONNoEscape(policyRequest{
		PolicyID: c.policyID, Hook: in.Hook, Endpoint: in.Endpoint, Provider: in.Provider,
		Model: in.Model, Metadata: in.Metadata, Request: in.Request, Response: in.Response,
		Text: in.Text, Stream: in.Stream, Final: in.Final,
	})
	if err != nil {
		return Verdict{}, fmt.Errorf("policy service: encoding the input: %w", err)
	}
	var ans policyAnswer
	if err := c.post(ctx, "policy service", body, 1<<20, &ans); err != nil {
		return Verdict{}, err
	}
	if ans.Allow == nil {
		return Verdict{}, &callError{what: "policy service", msg: "answer has no boolean allow"}
	}
	if len(ans.Reason) > 1024 {
		ans.Reason = strings.ToValidUTF8(ans.Reason[:1024], "")
	}
	v := Verdict{
		Pass: *ans.Allow,
		Data: map[string]any{"policyId": c.policyID, "allow": *ans.Allow, "reason": ans.Reason},
	}
	switch {
	case ans.Reason != "":
		v.Explanation = ans.Reason
	case v.Pass:
		v.Explanation = "policy " + c.policyID + " allowed"
	default:
		v.Explanation = "policy " + c.policyID + " denied"
	}
	return v, nil
}

// Hooks are the hooks the check runs on.
func (c *policyCheck) Hooks() []Hook { return []Hook{BeforeRequest, AfterRequest} }
