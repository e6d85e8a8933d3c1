package guardrails

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"time"
)

// LassoBaseURL is where Lasso Security's Deputies API answers.
const LassoBaseURL = "https://server.lasso.security"

// NewLassoClassifyCheck builds lasso.classify, the reference gateway's Lasso plugin: the
// request's chat messages go to Lasso Security's classifier, and the check fails when it
// detects a violation.
//
// Parameters, as the reference's: credentials {apiKey (required)}, conversationId and userId
// (optional, sent as lasso-conversation-id and lasso-user-id), timeout (milliseconds, 1 to
// 60000, default 5000); and ours, baseURL (default LassoBaseURL; another one, such as a
// stand-in's, is checked by the egress guard now; every connection is checked anyway). Hook:
// beforeRequestHook.
//
// The call, as the reference makes it: POST <baseURL>/gateway/v2/classify with the header
// lasso-api-key and the body {"messages": [{"role", "content"}]} (content as text: the text
// parts of a multi-part content joined); the answer is
// {"deputies": {name: flagged}, "deputies_predictions": {name: score}, "violations_detected": bool}.
// The API key never appears in an error, an explanation or Data.
func NewLassoClassifyCheck(params map[string]any, deps Deps) (Check, error) {
	deps, err := netDeps(idLassoClassify, deps, false)
	if err != nil {
		return nil, err
	}
	p := netParams(params)
	c := &lassoCheck{client: noRedirects(deps.Client)}
	if !p.has("credentials") {
		p.fail("credentials", "is required (an object)")
	}
	creds := p.sub("credentials")
	c.apiKey = creds.nonEmptyStr("apiKey", true, "", 4096)
	if strings.ContainsAny(c.apiKey, "\r\n\x00") {
		creds.fail("apiKey", "must not hold line breaks")
	}
	c.conversationID = p.nonEmptyStr("conversationId", false, "", 256)
	c.userID = p.nonEmptyStr("userId", false, "", 256)
	c.timeout = p.millis("timeout", 5000, 60000)
	base := p.url("baseURL", false, LassoBaseURL, nil)
	if base != LassoBaseURL {
		if err := deps.CheckURL(base); err != nil {
			p.fail("baseURL", "%s", err.Error())
		}
	}
	c.url = strings.TrimSuffix(base, "/") + "/gateway/v2/classify"
	for _, v := range []struct{ name, val string }{{"conversationId", c.conversationID}, {"userId", c.userID}} {
		if strings.ContainsAny(v.val, "\r\n\x00") {
			p.fail(v.name, "must not hold line breaks")
		}
	}
	if err := p.done(creds); err != nil {
		return nil, err
	}
	return c, nil
}

var _ Check = (*lassoCheck)(nil)

type lassoCheck struct {
	apiKey         string
	conversationID string
	userID         string
	timeout        time.Duration
	url            string
	client         *http.Client
}

type lassoMessage struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

type lassoAnswer struct {
	Deputies            map[string]bool    `json:"deputies"`
	DeputiesPredictions map[string]float64 `json:"deputies_predictions"`
	ViolationsDetected  *bool              `json:"violations_detected"`
}

func (c *lassoCheck) Run(ctx context.Context, in Input) (Verdict, error) {
	if err := hookSupported(idLassoClassify, in.Hook, c.Hooks()); err != nil {
		return Verdict{}, err
	}
	msgs, err := lassoMessages(in)
	if err != nil {
		return Verdict{}, err
	}
	if len(msgs) == 0 {
		return Verdict{Pass: true, Explanation: "no messages to classify"}, nil
	}
	body, err := encodeJSONNoEscape(map[string]any{"messages": msgs})
	if err != nil {
		return Verdict{}, fmt.Errorf("lasso: encoding the messages: %w", err)
	}
	h := http.Header{}
	h.Set("lasso-api-key", c.apiKey)
	if c.conversationID != "" {
		h.Set("lasso-conversation-id", c.conversationID)
	}
	if c.userID != "" {
		h.Set("lasso-user-id", c.userID)
	}

	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	var ans lassoAnswer
	if err := postJSON(ctx, c.client, "lasso", c.url, h, body, 1<<20, &ans); err != nil {
		return Verdict{}, err
	}
	if ans.ViolationsDetected == nil {
		return Verdict{}, &callError{what: "lasso", msg: "answer has no violations_detected"}
	}
	v := Verdict{Pass: !*ans.ViolationsDetected, Data: ans}
	if v.Pass {
		v.Explanation = "Lasso detected no violation"
		return v, nil
	}
	var flagged []string
	for name, on := range ans.Deputies {
		if on {
			flagged = append(flagged, name)
		}
	}
	sort.Strings(flagged)
	v.Explanation = "Lasso detected a violation"
	if len(flagged) > 0 {
		v.Explanation += ": " + strings.Join(flagged, ", ")
	}
	return v, nil
}

// Hooks are the hooks the check runs on.
func (c *lassoCheck) Hooks() []Hook { return []Hook{BeforeRequest} }

// lassoMessages are the request's chat messages with their content as text, as the reference
// sends them; a request without messages (a text completion) is its text as one user message.
func lassoMessages(in Input) ([]lassoMessage, error) {
	var req struct {
		Messages []struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
	}
	if len(in.Request) > 0 {
		if err := json.Unmarshal(in.Request, &req); err != nil {
			return nil, fmt.Errorf("lasso: the request is not a JSON object with messages")
		}
	}
	out := make([]lassoMessage, 0, len(req.Messages))
	for _, m := range req.Messages {
		out = append(out, lassoMessage{Role: m.Role, Content: lassoContentText(m.Content)})
	}
	if len(out) == 0 && in.Text != "" {
		out = append(out, lassoMessage{Role: "user", Content: in.Text})
	}
	return out, nil
}

// lassoContentText is a message content's text: the string, or the text parts of a list joined.
func lassoContentText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if json.Unmarshal(raw, &parts) != nil {
		return ""
	}
	var b strings.Builder
	for _, p := range parts {
		if p.Type == "text" {
			b.WriteString(p.Text)
		}
	}
	return b.String()
}
