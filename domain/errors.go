// Package domain is Causeway's control-plane model: aggregates folded from their events and
// decisions (state, command) → events | error. It imports only the standard library; it knows
// nothing of HTTP, SQL or the event store's backends.
package domain

import (
	"errors"
	"fmt"
)

// Code classifies an application error. The HTTP layer maps each code to one status, in one
// place; nothing else chooses status codes.
type Code string

const (
	CodeInvalid      Code = "invalid"       // the request breaks a rule: 400
	CodeUnauthorized Code = "unauthorized"  // no or unknown credentials: 401
	CodeForbidden    Code = "forbidden"     // known credentials, too few rights: 403
	CodeNotFound     Code = "not_found"     // 404
	CodeConflict     Code = "conflict"      // state changed underneath, or already exists: 409
	CodeTooLarge     Code = "too_large"     // body over the limit: 413
	CodeRateLimited  Code = "rate_limited"  // 429
	CodeUnavailable  Code = "unavailable"   // a backend is down or too slow: 503
	CodeTimeout      Code = "timeout"       // the provider did not answer in time: 408
	CodeUpstream     Code = "upstream"      // the provider could not be reached: 502
	CodeInternal     Code = "internal"      // a bug: 500, details logged and never returned
	CodeDisabled     Code = "disabled"      // switched off by configuration: 403
	CodeNotAllowed   Code = "not_allowed"   // method not allowed on this path: 405
	CodeUnsupported  Code = "not_supported" // the provider or endpoint cannot do this: 400
	// CodeUnprocessable: well formed, but it cannot be done as sent (an idempotency key
	// already used for another request): 422.
	CodeUnprocessable Code = "unprocessable"
	// CodePrecondition: the request's If-Match names a revision the resource has moved past: 412.
	CodePrecondition Code = "precondition_failed"
	// CodeGatewayTimeout: a write was saved, but not every instance applied it within the wait
	// the request asked for: 504.
	CodeGatewayTimeout Code = "gateway_timeout"
	// CodeGuardrailDenied: a guardrail with actions.deny failed on the request or its answer:
	// 446, the reference gateway's status for it.
	CodeGuardrailDenied Code = "guardrail_denied"
)

// Error is the one error type of the application. Message is safe to show to the client;
// Param names the offending field when there is one.
type Error struct {
	Code    Code
	Message string
	Param   string
	// Detail is an optional machine code of the specification's own, such as AB01.
	Detail string
	Err    error // cause, for logs only
}

func (e *Error) Error() string {
	msg := string(e.Code) + ": " + e.Message
	if e.Param != "" {
		msg += " (" + e.Param + ")"
	}
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	return msg
}

func (e *Error) Unwrap() error { return e.Err }

// Errorf builds an Error with a formatted client-safe message.
func Errorf(code Code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// Invalid reports a field that breaks a rule; the message should name the bound.
func Invalid(param, format string, args ...any) *Error {
	return &Error{Code: CodeInvalid, Param: param, Message: fmt.Sprintf(format, args...)}
}

// ErrorCode returns the code of err's Error, or CodeInternal when it has none.
func ErrorCode(err error) Code {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return CodeInternal
}
