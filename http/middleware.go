package httpapi

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// TraceIDHeader carries the trace id of a request: the client's when it sends one, else the
// trace id of its W3C traceparent, else one generated here. It is returned on every answer
// and logged.
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
			id = traceparentID(r.Header)
		}
		if id == "" {
			id = newTraceID()
		}
		w.Header().Set(TraceIDHeader, id)
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), traceKey{}, id)))
	})
}

// traceparentID is the trace id of a valid W3C traceparent header, or "".
func traceparentID(h http.Header) string {
	if len(h["Traceparent"]) == 0 {
		return ""
	}
	sc := trace.SpanContextFromContext(propagation.TraceContext{}.Extract(context.Background(), propagation.HeaderCarrier(h)))
	if !sc.IsValid() {
		return ""
	}
	return sc.TraceID().String()
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

// A refused body is drained this far (bytes) and this long at most before the connection
// closes. A server that closes with unread bytes in its receive buffer sends a TCP reset, which
// makes the client lose the answer it has not read yet: an SDK or curl that sends an
// over-limit body would show "connection reset" instead of the 413 that says what the limit is.
const (
	drainMaxBytes = 4 << 20
	drainMaxTime  = time.Second
)

// withBodyDrain reads and discards what a handler left of a request body (a refusal before
// or while reading it: 413, 401, ...), within drainMaxBytes and drainMaxTime, after sending
// the answer, so that a client which writes its whole body before reading gets the answer.
func withBodyDrain(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Body == nil || r.Body == http.NoBody || r.ContentLength == 0 {
			next.ServeHTTP(w, r)
			return
		}
		body := &trackedBody{ReadCloser: r.Body}
		r.Body = body
		next.ServeHTTP(w, r)
		// A client waiting for "100 Continue" that never came has sent nothing; it reads the
		// answer instead of sending.
		if body.eof || (body.n == 0 && strings.EqualFold(r.Header.Get("Expect"), "100-continue")) {
			return
		}
		rc := http.NewResponseController(w)
		if err := rc.SetReadDeadline(time.Now().Add(drainMaxTime)); err != nil {
			return // no deadline, no unbounded wait
		}
		_ = rc.Flush()
		_, _ = io.CopyN(io.Discard, body.ReadCloser, drainMaxBytes)
		_ = rc.SetReadDeadline(time.Time{})
	})
}

// trackedBody notes whether a request body was read to its end.
type trackedBody struct {
	io.ReadCloser
	n   int64
	eof bool
}

func (b *trackedBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.n += int64(n)
	if errors.Is(err, io.EOF) {
		b.eof = true
	}
	return n, err
}
