package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"

	"github.com/causeway/causeway/analytics"
	"github.com/causeway/causeway/domain"
	"github.com/causeway/causeway/gateway/providers"
)

// RefusalError is a request refused by a rate limit or a budget: the application error to
// answer, and what refused it, which the answer names in a header and in its body.
type RefusalError struct {
	By  analytics.Decider
	Err *domain.Error
}

func (e *RefusalError) Error() string { return e.Err.Error() }
func (e *RefusalError) Unwrap() error { return e.Err }

// RawUpstreamError is a pass-through answer with an error status, kept whole so that retries
// and fallbacks can act on its status and the client gets it unchanged when they don't.
type RawUpstreamError struct {
	Upstream providers.UpstreamError
	Header   map[string][]string
}

func (e *RawUpstreamError) Error() string { return e.Upstream.Error() }
func (e *RawUpstreamError) Unwrap() error { return &e.Upstream }

// translate turns the engine's errors into application errors. A timeout names the timeout
// that ran out and what set it; an unreachable provider names its host and the class of
// failure (providers.ConnectionError.Describe), never the transport's own message.
func translate(err error) *domain.Error {
	var (
		conn        *providers.ConnectionError
		timeout     *TimeoutError
		unknown     *UnknownProviderError
		unsupported *UnsupportedError
		appErr      *domain.Error
	)
	switch {
	case errors.As(err, &appErr):
		return appErr
	case errors.As(err, &timeout):
		return &domain.Error{Code: domain.CodeTimeout, Detail: "request_timeout", Message: timeout.Error() + " before the provider answered", Err: err}
	case errors.Is(err, context.DeadlineExceeded):
		return &domain.Error{Code: domain.CodeTimeout, Detail: "request_timeout", Message: "the request timed out before the provider answered", Err: err}
	case errors.As(err, &conn):
		return &domain.Error{Code: domain.CodeUpstream, Detail: "provider_unreachable", Message: conn.Describe(), Err: err}
	case errors.As(err, &unknown):
		return &domain.Error{Code: domain.CodeInvalid, Param: HeaderProvider, Message: unknown.Error()}
	case errors.As(err, &unsupported):
		return &domain.Error{Code: domain.CodeUnsupported, Message: unsupported.Error()}
	}
	return &domain.Error{Code: domain.CodeInternal, Message: "internal error", Err: err}
}

// credentialFields are body fields a client may put a credential in.
var credentialFields = []string{"api_key", "apiKey", "authorization", "Authorization", "password", "secret"}

// redactBody keeps a request body for the log with any credential a client put in it replaced.
// Most bodies hold none: a byte scan tells, and only those that might are decoded.
func redactBody(body []byte) []byte {
	if len(body) == 0 || len(body) > maxLoggedBody {
		return nil
	}
	suspect := false
	for _, k := range credentialFields {
		if bytes.Contains(body, []byte(`"`+k+`"`)) {
			suspect = true
			break
		}
	}
	if !suspect {
		return body
	}
	var m map[string]any
	if json.Unmarshal(body, &m) != nil {
		return body
	}
	changed := false
	for _, k := range credentialFields {
		if _, ok := m[k]; ok {
			m[k], changed = "[REDACTED]", true
		}
	}
	if !changed {
		return body
	}
	out, _ := json.Marshal(m)
	return out
}
