package httpapi

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"log/slog"
	"net/http"
)

// TraceIDHeader carries the trace id of a request: the client's when it sends one, else one
// generated here. It is returned on every answer and logged.
const TraceIDHeader = "x-gateway-trace-id"

type traceKey struct{}

// TraceID returns the trace id of the request that ctx belongs to.
func TraceID(ctx context.Context) string {
	id, _ := ctx.Value(traceKey{}).(string)
	return id
}

// maxTraceID bounds what a client may send as a trace id, so logs cannot be flooded.
const maxTraceID = 256

func withTraceID(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := r.Header.Get(TraceIDHeader)
		if id == "" || len(id) > maxTraceID {
			id = newTraceID()
		}
		w.Header().Set(TraceIDHeader, id)
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), traceKey{}, id)))
	})
}

func newTraceID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// withRecover turns a panic in a handler into a logged 500 in the error shape, so one bad
// request cannot take the process down.
func withRecover(log *slog.Logger, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			if v := recover(); v != nil {
				if v == http.ErrAbortHandler {
					panic(v)
				}
				WriteError(w, r, log, fmt.Errorf("panic: %v", v))
			}
		}()
		next.ServeHTTP(w, r)
	})
}
