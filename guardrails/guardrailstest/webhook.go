package guardrailstest

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
)

// RawBody is an answer written as it is, not as JSON: for answers that are not JSON.
type RawBody []byte

// Webhook is a webhook receiver for default.webhook: it verifies each call's signature with
// its secret (401 when it does not hold), decodes the event and answers with what Answer
// returns, {"verdict": true} until a test sets it.
type Webhook struct {
	URL string
	recorder
	secret []byte

	mu     sync.Mutex
	answer func(event map[string]any) (status int, body any)
}

// NewWebhook starts a receiver that verifies signatures with secret; it stops with tb.
func NewWebhook(tb testing.TB, secret []byte) *Webhook {
	w := &Webhook{secret: secret}
	srv := httptest.NewServer(http.HandlerFunc(w.serve))
	tb.Cleanup(srv.Close)
	w.URL = srv.URL
	return w
}

// Answer sets how the receiver answers an event: a status and a body (a value sent as JSON,
// or RawBody).
func (w *Webhook) Answer(f func(event map[string]any) (status int, body any)) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.answer = f
}

func (w *Webhook) serve(rw http.ResponseWriter, r *http.Request) {
	body, ok := w.signedPost(rw, r, w.secret)
	if !ok {
		return
	}
	var event map[string]any
	if err := json.Unmarshal(body, &event); err != nil {
		writeAnswer(rw, http.StatusBadRequest, map[string]any{"error": "body is not a JSON object"})
		return
	}
	if !w.wait(r) {
		return
	}
	w.mu.Lock()
	answer := w.answer
	w.mu.Unlock()
	if answer == nil {
		writeAnswer(rw, http.StatusOK, map[string]any{"verdict": true})
		return
	}
	status, out := answer(event)
	writeAnswer(rw, status, out)
}

func writeAnswer(rw http.ResponseWriter, status int, body any) {
	raw, ok := body.(RawBody)
	if !ok {
		var err error
		if raw, err = json.Marshal(body); err != nil {
			status, raw = http.StatusInternalServerError, []byte(`{"error":"stand-in could not encode its answer"}`)
		}
	}
	rw.Header().Set("Content-Type", "application/json")
	rw.WriteHeader(status)
	_, _ = rw.Write(raw)
}
