package httpapi

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"

	"github.com/causeway/causeway/analytics"
	"github.com/causeway/causeway/domain"
	"github.com/causeway/causeway/eventstore"
	"github.com/causeway/causeway/gateway"
	"github.com/causeway/causeway/projections"
)

// errorBody is the OpenAI error shape, which the specification and the reference share.
type errorBody struct {
	Error errorDetail `json:"error"`
	// HookResults are the guardrails' verdicts of a request a guardrail denied, in the
	// reference's hook_results shape.
	HookResults json.RawMessage `json:"hook_results,omitempty"`
}

type errorDetail struct {
	Message string  `json:"message"`
	Type    string  `json:"type"`
	Param   *string `json:"param"`
	Code    *string `json:"code"`
	// DecidedBy names the rate-limit policy or budget that refused a gateway request, with
	// its version, limit and usage.
	DecidedBy *analytics.Decider `json:"decided_by,omitempty"`
}

// CodeReadModelUnavailable is the error code of a read the read model could not answer (503).
const CodeReadModelUnavailable = "read_model_unavailable"

// statusOf is the one mapping from application error codes to HTTP statuses.
var statusOf = map[domain.Code]int{
	domain.CodeInvalid:      http.StatusBadRequest,
	domain.CodeUnsupported:  http.StatusBadRequest,
	domain.CodeUnauthorized: http.StatusUnauthorized,
	domain.CodeForbidden:    http.StatusForbidden,
	domain.CodeDisabled:     http.StatusForbidden,
	domain.CodeNotFound:     http.StatusNotFound,
	domain.CodeNotAllowed:   http.StatusMethodNotAllowed,
	domain.CodeConflict:     http.StatusConflict,
	domain.CodeTooLarge:     http.StatusRequestEntityTooLarge,
	domain.CodeRateLimited:  http.StatusTooManyRequests,
	domain.CodeUnavailable:  http.StatusServiceUnavailable,
	domain.CodeTimeout:      http.StatusRequestTimeout,
	domain.CodeUpstream:     http.StatusBadGateway,
	domain.CodeInternal:     http.StatusInternalServerError,

	domain.CodeUnprocessable:   http.StatusUnprocessableEntity, // an idempotency key reused for another request
	domain.CodePrecondition:    http.StatusPreconditionFailed,  // If-Match names a revision the resource moved past
	domain.CodeGatewayTimeout:  http.StatusGatewayTimeout,      // a write not applied by every instance in the wait asked for
	domain.CodeGuardrailDenied: gateway.StatusGuardrailDenied,  // a guardrail denied the request or its answer
}

// typeOf is the error "type" field, in the OpenAI spelling clients already parse.
var typeOf = map[domain.Code]string{
	domain.CodeInvalid:      "invalid_request_error",
	domain.CodeUnsupported:  "invalid_request_error",
	domain.CodeUnauthorized: "authentication_error",
	domain.CodeForbidden:    "permission_error",
	domain.CodeDisabled:     "permission_error",
	domain.CodeNotFound:     "not_found_error",
	domain.CodeNotAllowed:   "invalid_request_error",
	domain.CodeConflict:     "conflict_error",
	domain.CodeTooLarge:     "invalid_request_error",
	domain.CodeRateLimited:  "rate_limit_error",
	domain.CodeUnavailable:  "service_unavailable_error",
	domain.CodeTimeout:      "timeout_error",
	domain.CodeUpstream:     "api_error",
	domain.CodeInternal:     "api_error",

	domain.CodeUnprocessable:   "invalid_request_error",
	domain.CodePrecondition:    "conflict_error",
	domain.CodeGatewayTimeout:  "timeout_error",
	domain.CodeGuardrailDenied: "guardrail_error",
}

// asAppError turns any error into the application's Error: infrastructure errors are
// translated here, and anything unrecognised is internal, its text kept for the log only.
func asAppError(err error) *domain.Error {
	var appErr *domain.Error
	switch {
	case errors.As(err, &appErr):
		return appErr
	case errors.Is(err, projections.ErrUnavailable):
		// A read model that cannot answer is never "not found": the client retries.
		return &domain.Error{Code: domain.CodeUnavailable, Detail: CodeReadModelUnavailable, Err: err,
			Message: "the read model is unavailable (its database cannot be reached); retry later"}
	case errors.Is(err, eventstore.ErrWrongExpectedVersion):
		return &domain.Error{Code: domain.CodeConflict, Message: "the resource was changed by another request; retry", Err: err}
	case errors.Is(err, eventstore.ErrUnavailable), errors.Is(err, context.DeadlineExceeded):
		return &domain.Error{Code: domain.CodeUnavailable, Message: "a backend is unavailable; retry later", Err: err}
	}
	return &domain.Error{Code: domain.CodeInternal, Message: "internal error", Err: err}
}

// WriteError answers err in the error shape with its status. Internal details go to the log
// with the request's trace id, never to the client.
func WriteError(w http.ResponseWriter, r *http.Request, log *slog.Logger, err error) {
	writeError(w, r, log, err, nil, nil)
}

// writeError is WriteError naming what decided a refusal, and the guardrails' verdicts when
// they decided it; it returns the status answered.
func writeError(w http.ResponseWriter, r *http.Request, log *slog.Logger, err error, by *analytics.Decider, hooks json.RawMessage) int {
	e := asAppError(err)
	status, ok := statusOf[e.Code]
	if !ok {
		status = http.StatusInternalServerError
	}
	if status >= 500 && log != nil {
		log.ErrorContext(r.Context(), "request failed", "trace_id", TraceID(r.Context()),
			"method", r.Method, "path", r.URL.Path, "status", status, "error", err)
	}
	body := errorBody{Error: errorDetail{Message: e.Message, Type: typeOf[e.Code]}}
	if body.Error.Type == "" {
		body.Error.Type = "api_error"
	}
	if e.Param != "" {
		body.Error.Param = &e.Param
	}
	code := string(e.Code)
	if e.Detail != "" {
		code = e.Detail
	}
	body.Error.Code = &code
	body.Error.DecidedBy = by
	body.HookResults = hooks
	// Every error this writes is the gateway's own; a provider's is marked "provider" where
	// the gateway service passes it on.
	w.Header().Set(gateway.HeaderErrorSource, gateway.ErrorSourceGateway)
	WriteJSON(w, status, body)
	return status
}

// WriteJSON answers v as JSON with status.
func WriteJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
