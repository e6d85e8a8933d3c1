package providers

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Helpers every adapter shares to turn what an upstream answered (or failed to) into the
// errors of provider.go: UpstreamError for an answer outside 2xx, ConnectionError for a
// provider that could not be reached, ctx.Err() for a caller that gave up.

// maxErrorBody bounds how much of an error answer is read: enough for any provider's error
// object, not enough for a hostile host to make the gateway buffer without limit.
const maxErrorBody = 1 << 20

// maxAnswerBody bounds a whole (non-streamed) answer; large embedding batches are the
// biggest legitimate answers.
const maxAnswerBody = 256 << 20

// redacted replaces a credential wherever an upstream or a transport error echoes it.
const redacted = "[redacted]"

// NewUpstreamError reads (and closes) an answer outside 2xx and returns it as an
// UpstreamError: its status, its Retry-After, and its body in OpenAI's error shape, kept as the
// provider's (ProviderErrorBody). apiKey is scrubbed from the body, since some providers quote
// the credential they refused. The gateway may use it on a pass-through answer it decides to
// retry or fall back from.
func NewUpstreamError(provider string, resp *http.Response, apiKey string) *UpstreamError {
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
	return &UpstreamError{
		Status:     resp.StatusCode,
		RetryAfter: RetryAfter(resp.Header, time.Now()),
		Body:       ProviderErrorBody(provider, resp.StatusCode, Scrub(body, apiKey)),
		Provider:   provider,
	}
}

// RetryAfter is how long an answer asks the client to wait: OpenAI's retry-after-ms when
// present (it is finer), else Retry-After as delay-seconds or an HTTP-date (RFC 9110 10.2.3).
// Zero when absent, malformed or in the past.
func RetryAfter(h http.Header, now time.Time) time.Duration {
	if ms := strings.TrimSpace(h.Get("Retry-After-Ms")); ms != "" {
		if v, err := strconv.ParseFloat(ms, 64); err == nil && v > 0 {
			return time.Duration(v * float64(time.Millisecond))
		}
	}
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0
	}
	if secs, err := strconv.ParseFloat(v, 64); err == nil {
		if secs <= 0 {
			return 0
		}
		return time.Duration(secs * float64(time.Second))
	}
	if at, err := http.ParseTime(v); err == nil && at.After(now) {
		return at.Sub(now)
	}
	return 0
}

// openAIError is OpenAI's error object; param and code are null when absent, as OpenAI
// sends them.
type openAIError struct {
	Message string          `json:"message"`
	Type    string          `json:"type"`
	Param   json.RawMessage `json:"param"`
	Code    json.RawMessage `json:"code"`
}

// OpenAIErrorBody turns a provider's error body into OpenAI's {"error":{"message","type",
// "param","code"}}. It understands the shapes OpenAI-compatible providers use: OpenAI's own
// (also Anthropic's {"type":"error","error":{...}}, Gemini's {"error":{"code","message",
// "status"}}), a bare {"error":"text"} (Ollama), a top-level message (Mistral, vLLM, Cohere),
// FastAPI's {"detail":...}, and plain text.
func OpenAIErrorBody(status int, body []byte) []byte {
	e := openAIError{Type: errorType(status), Param: json.RawMessage("null"), Code: json.RawMessage("null")}
	var raw struct {
		Error   json.RawMessage `json:"error"`
		Message json.RawMessage `json:"message"`
		Detail  json.RawMessage `json:"detail"`
		Type    json.RawMessage `json:"type"`
		Param   json.RawMessage `json:"param"`
		Code    json.RawMessage `json:"code"`
	}
	trimmed := bytes.TrimSpace(body)
	if json.Unmarshal(trimmed, &raw) == nil {
		switch {
		case isObject(raw.Error):
			var inner struct {
				Message json.RawMessage `json:"message"`
				Type    json.RawMessage `json:"type"`
				Status  json.RawMessage `json:"status"`
				Param   json.RawMessage `json:"param"`
				Code    json.RawMessage `json:"code"`
			}
			_ = json.Unmarshal(raw.Error, &inner)
			e.Message = text(inner.Message)
			e.fill(inner.Type, inner.Param, inner.Code)
			if t := text(inner.Status); t != "" && text(inner.Type) == "" {
				e.Type = t
			}
		case text(raw.Error) != "":
			e.Message = text(raw.Error)
		case text(raw.Message) != "":
			e.Message = text(raw.Message)
			e.fill(raw.Type, raw.Param, raw.Code)
		case len(raw.Detail) > 0:
			e.Message = text(raw.Detail)
			if e.Message == "" {
				e.Message = string(raw.Detail)
			}
		}
	} else if len(trimmed) > 0 && len(trimmed) <= 4096 {
		e.Message = string(trimmed)
	}
	if e.Message == "" {
		e.Message = http.StatusText(status)
		if e.Message == "" {
			e.Message = "upstream error " + strconv.Itoa(status)
		}
	}
	out, _ := json.Marshal(struct {
		Error openAIError `json:"error"`
	}{e})
	return out
}

// ProviderErrorType is the error type of a provider's error that names none of its own.
const ProviderErrorType = "provider_error"

// maxErrorText bounds the text of a plain (not JSON) error answer kept in a message.
const maxErrorText = 4096

// ProviderErrorBody turns a provider's error answer into OpenAI's {"error":{"message","type",
// "param","code"}}, kept recognisably the provider's. A body whose error is an object with a
// message (OpenAI's shape, which Anthropic's and most OpenAI-compatible providers' share) is
// passed through, every field of its error object kept; any other body (plain text, HTML, a
// bare {"error":"text"}, a top-level message, FastAPI's detail) is wrapped: its text becomes
// the message, prefixed "<provider> answered <status>: ". The type is the provider's own where
// it names one (Gemini's status counts), else provider_error.
func ProviderErrorBody(provider string, status int, body []byte) []byte {
	trimmed := bytes.TrimSpace(body)
	var raw struct {
		Error   json.RawMessage `json:"error"`
		Message json.RawMessage `json:"message"`
		Detail  json.RawMessage `json:"detail"`
		Type    json.RawMessage `json:"type"`
		Param   json.RawMessage `json:"param"`
		Code    json.RawMessage `json:"code"`
	}
	isJSON := json.Unmarshal(trimmed, &raw) == nil
	if isJSON && isObject(raw.Error) {
		var inner map[string]json.RawMessage
		if json.Unmarshal(raw.Error, &inner) == nil && text(inner["message"]) != "" {
			return passProviderError(inner)
		}
	}
	e := openAIError{Type: ProviderErrorType, Param: json.RawMessage("null"), Code: json.RawMessage("null")}
	msg := ""
	switch {
	case !isJSON:
		msg = string(trimmed)
		if len(msg) > maxErrorText {
			msg = strings.ToValidUTF8(msg[:maxErrorText], "") + "..."
		}
	case text(raw.Error) != "":
		msg = text(raw.Error)
	case text(raw.Message) != "":
		msg = text(raw.Message)
		e.fill(raw.Type, raw.Param, raw.Code)
	case len(raw.Detail) > 0:
		if msg = text(raw.Detail); msg == "" {
			msg = string(raw.Detail)
		}
	case len(trimmed) <= maxErrorText:
		msg = string(trimmed)
	}
	if msg == "" {
		msg = http.StatusText(status)
	}
	e.Message = fmt.Sprintf("%s answered %d", provider, status)
	if msg != "" {
		e.Message += ": " + msg
	}
	out, _ := json.Marshal(struct {
		Error openAIError `json:"error"`
	}{e})
	return out
}

// passProviderError keeps a provider's error object as it is, with OpenAI's four fields made
// usable: a type (the provider's, or its status, or provider_error), and a param and code
// that are null unless they are what OpenAI's clients decode (strings; a number for code).
func passProviderError(inner map[string]json.RawMessage) []byte {
	if text(inner["type"]) == "" {
		t := text(inner["status"])
		if t == "" {
			t = ProviderErrorType
		}
		inner["type"], _ = json.Marshal(t)
	}
	if text(inner["param"]) == "" {
		inner["param"] = json.RawMessage("null")
	}
	if c := bytes.TrimSpace(inner["code"]); len(c) == 0 || !(c[0] == '"' || c[0] == '-' || (c[0] >= '0' && c[0] <= '9')) {
		inner["code"] = json.RawMessage("null")
	}
	out, _ := json.Marshal(map[string]any{"error": inner})
	return out
}

// AnswerBody is the body the gateway answers for this error: Body with the provider's name
// and status added to its error object ("provider", "status"), so that a client tells a
// provider's error from the gateway's own.
func (e *UpstreamError) AnswerBody() []byte {
	var outer map[string]json.RawMessage
	var inner map[string]json.RawMessage
	if json.Unmarshal(e.Body, &outer) != nil || !isObject(outer["error"]) || json.Unmarshal(outer["error"], &inner) != nil {
		outer = map[string]json.RawMessage{}
		_ = json.Unmarshal(ProviderErrorBody(e.Provider, e.Status, e.Body), &outer)
		_ = json.Unmarshal(outer["error"], &inner)
	}
	if inner == nil {
		inner = map[string]json.RawMessage{}
	}
	inner["provider"], _ = json.Marshal(e.Provider)
	inner["status"], _ = json.Marshal(e.Status)
	outer["error"], _ = json.Marshal(inner)
	out, _ := json.Marshal(outer)
	return out
}

// fill takes the provider's type, param and code where they are usable: a type must be a
// string, a param a string, a code a string or a number.
func (e *openAIError) fill(typ, param, code json.RawMessage) {
	if t := text(typ); t != "" {
		e.Type = t
	}
	if text(param) != "" {
		e.Param = param
	}
	if c := bytes.TrimSpace(code); len(c) > 0 && (c[0] == '"' || c[0] == '-' || (c[0] >= '0' && c[0] <= '9')) {
		e.Code = c
	}
}

// errorType names an error by its status as OpenAI does.
func errorType(status int) string {
	switch {
	case status == http.StatusUnauthorized:
		return "authentication_error"
	case status == http.StatusForbidden:
		return "permission_error"
	case status == http.StatusNotFound:
		return "not_found_error"
	case status == http.StatusTooManyRequests:
		return "rate_limit_error"
	case status >= 500:
		return "server_error"
	}
	return "invalid_request_error"
}

func isObject(raw json.RawMessage) bool {
	raw = bytes.TrimSpace(raw)
	return len(raw) > 0 && raw[0] == '{'
}

// text is a JSON string's value; anything else is empty.
func text(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return ""
	}
	return s
}

// TransportError classifies a failure to get an answer. A caller that gave up gets its
// context's error; a deadline (the request timeout) is a timed-out ConnectionError that still
// unwraps to context.DeadlineExceeded; anything else (DNS, refused, TLS, reset) is a
// ConnectionError, with Timeout when the network said so. The request URL's query and any
// echo of apiKey are removed, so that no credential reaches a log or a client.
func TransportError(ctx context.Context, provider string, err error, apiKey string) error {
	if ctxErr := ctx.Err(); ctxErr != nil {
		if errors.Is(ctxErr, context.DeadlineExceeded) {
			return &ConnectionError{Provider: provider, Host: hostOf(err), Timeout: true, Err: ctxErr}
		}
		return ctxErr
	}
	var netErr net.Error
	timeout := errors.As(err, &netErr) && netErr.Timeout()
	return &ConnectionError{Provider: provider, Host: hostOf(err), Timeout: timeout, Err: RedactError(err, apiKey)}
}

// RedactError strips the query and user info from a url.Error's URL (some providers take the
// key in the query) and replaces apiKey in the message, keeping Timeout and Unwrap working.
func RedactError(err error, apiKey string) error {
	var uerr *url.Error
	if errors.As(err, &uerr) {
		if u, perr := url.Parse(uerr.URL); perr == nil {
			u.RawQuery, u.User = "", nil
			uerr = &url.Error{Op: uerr.Op, URL: u.String(), Err: uerr.Err}
			err = uerr
		}
	}
	if apiKey != "" && strings.Contains(err.Error(), apiKey) {
		return &scrubbedError{msg: strings.ReplaceAll(err.Error(), apiKey, redacted), err: err}
	}
	return err
}

// scrubbedError carries a cause whose message quoted a credential: the message is scrubbed,
// the chain (for errors.Is and net.Error) is kept.
type scrubbedError struct {
	msg string
	err error
}

func (e *scrubbedError) Error() string { return e.msg }
func (e *scrubbedError) Unwrap() error { return e.err }
func (e *scrubbedError) Timeout() bool {
	var netErr net.Error
	return errors.As(e.err, &netErr) && netErr.Timeout()
}

// Scrub replaces apiKey wherever body quotes it (some providers echo the credential they
// refused).
func Scrub(body []byte, apiKey string) []byte {
	if apiKey == "" || !bytes.Contains(body, []byte(apiKey)) {
		return body
	}
	return bytes.ReplaceAll(body, []byte(apiKey), []byte(redacted))
}

// ReadAnswer reads (and closes) a whole 2xx answer, bounded.
func ReadAnswer(ctx context.Context, provider string, resp *http.Response, apiKey string) ([]byte, error) {
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswerBody+1))
	if err != nil {
		return nil, TransportError(ctx, provider, err, apiKey)
	}
	if len(body) > maxAnswerBody {
		return nil, &ConnectionError{Provider: provider, Reason: "its answer is larger than 256 MiB", Err: errors.New("answer larger than 256 MiB")}
	}
	return body, nil
}

// NewClient returns the HTTP client adapters use when a Target carries none: no overall
// timeout (a stream may last minutes; the caller's context bounds a call), bounded dialing and
// TLS handshakes, and a connection pool sized for a gateway's concurrency rather than
// net/http's default of two idle connections per host.
func NewClient() *http.Client {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConns = 1024
	tr.MaxIdleConnsPerHost = 256
	tr.IdleConnTimeout = 90 * time.Second
	tr.TLSHandshakeTimeout = 10 * time.Second
	tr.DialContext = (&net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}).DialContext
	return &http.Client{Transport: tr}
}

// Headers never forwarded from the client: the gateway's own, hop-by-hop ones (RFC 9110
// 7.6.1), and the credential headers the adapter sets itself from the Target.
var hopByHop = map[string]bool{
	"Connection": true, "Keep-Alive": true, "Proxy-Connection": true, "Proxy-Authenticate": true,
	"Proxy-Authorization": true, "Te": true, "Trailer": true, "Transfer-Encoding": true,
	"Upgrade": true, "Host": true, "Content-Length": true,
	"Authorization": true, "Api-Key": true, "X-Api-Key": true, "X-Goog-Api-Key": true,
}

// ForwardHeaders copies the client's forwarded headers into dst, leaving out x-gateway-*,
// hop-by-hop and credential headers; keepEncoding keeps Accept-Encoding (pass-through returns
// the body unread, so it may stay compressed; every other call parses the answer).
func ForwardHeaders(dst, src http.Header, keepEncoding bool) {
	for name, values := range src {
		canon := http.CanonicalHeaderKey(name)
		if hopByHop[canon] || strings.HasPrefix(canon, "X-Gateway-") ||
			(!keepEncoding && canon == "Accept-Encoding") {
			continue
		}
		dst[canon] = append([]string(nil), values...)
	}
}
