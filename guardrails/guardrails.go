// Package guardrails is the guardrail engine: the checks a guardrail holds (default.<name> and
// <partner>.<name>), their parameters, and the runner that applies the guardrails of a hook to
// a request or an answer. It decides only; the gateway calls it at its hooks, and the control
// plane (domain/) stores guardrails as events and validates their checks through Validate.
//
// It imports the standard library and maintained libraries for formats (JOSE, JSON Schema);
// outbound calls (webhook, external policy, partner checks, image fetches) go through the
// Deps' HTTP client, whose dialer is the gateway's egress check.
package guardrails

import (
	"context"
	"encoding/json"
	"net/http"
	"time"
)

// Hook is where a guardrail runs.
type Hook string

// The two hooks of the specification.
const (
	BeforeRequest Hook = "beforeRequestHook"
	AfterRequest  Hook = "afterRequestHook"
)

// Input is what a check sees.
type Input struct {
	Hook     Hook
	Endpoint string // the providers.Endpoint* value: chatComplete, complete, embed, ...
	Provider string // the provider type that is (or was) called, e.g. openai
	Model    string
	Metadata map[string]string
	// Headers are the client's request headers (the JWT check reads its token from one). They
	// are never logged, nor sent on by a check.
	Headers http.Header
	// Request is the request body as the client sent it (OpenAI's shape).
	Request json.RawMessage
	// Response is the answer body (after-request hook, whole answers); nil on a stream.
	Response json.RawMessage
	// Text is what text checks read: on the before hook, the request's text (the last user
	// message, or every message's text when a check's parameters say so); on the after hook,
	// the answer's text, or on a stream the current window of it.
	Text string
	// Stream is true when Text is a window of a streamed answer: checks that need the whole
	// answer (JSON schema, ends with, sentence counts...) run only on the final window.
	Stream bool
	Final  bool // the last window of a stream, or a whole answer
	// Cut is true when a stream's window starts inside a word (the overlap cut into it): its
	// first letters are a word's tail, as its last may be a word's head. Checks that match
	// whole words leave both out of a window; the next window, or the final one, holds them.
	Cut bool
}

// Verdict is one check's result.
type Verdict struct {
	Pass        bool
	Explanation string
	// Data is what the check found (matches, counts, the classifier's answer), shown in the
	// hook results.
	Data any
	// Transformed, when set, is the request (before) or answer (after) body the check rewrote:
	// add-prefix, inline-image, PII redaction. Checks that only judge leave it nil.
	Transformed json.RawMessage
}

// Check is one configured check, ready to run. Run must honour ctx (the runner cancels the
// other checks of a hook once one denies, and bounds each by its timeout).
type Check interface {
	Run(ctx context.Context, in Input) (Verdict, error)
}

// Deps are what checks that leave the process use.
type Deps struct {
	// Client makes outbound calls; its dialer checks every address (the egress guard), and
	// redirects too.
	Client *http.Client
	// CheckURL refuses URLs the egress guard refuses, before any call is made.
	CheckURL func(raw string) error
	// Secret signs webhook bodies (HMAC-SHA256) so receivers can verify them.
	Secret []byte
	Now    func() time.Time
}

// Factory validates a check's parameters and builds it. A parameter error is a
// *ParamError naming the parameter (its path under "parameters").
type Factory func(params map[string]any, deps Deps) (Check, error)

// ParamError is a check's parameter that is missing or out of its bounds.
type ParamError struct {
	Param   string // e.g. "metadataPairs", "tools.allowedTypes[1]"
	Message string // what is wrong, with the bound
}

func (e *ParamError) Error() string { return e.Param + ": " + e.Message }
