// Package guardrailstest holds stand-ins for the outside services that guardrail checks call:
// a webhook receiver, an external policy service and Lasso Security's classify API. Each is
// an httptest server speaking the wire its check documents, recording what it received and
// answering as the test tells it. It imports only the standard library, so the guardrails
// package's own tests can use it.
package guardrailstest

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// SignatureHeader is the header that carries a signed call's signature.
const SignatureHeader = "X-Causeway-Signature"

// SignatureTolerance is how far a signature's time may be from the receiver's clock.
const SignatureTolerance = 5 * time.Minute

// VerifySignature checks a SignatureHeader value "t=<unix>,v1=<hex>" against body, as a
// receiver does: v1 must be HMAC-SHA256 of "<t>.<body>" under secret (compared in constant
// time), and t within tolerance of now. Written apart from the gateway's signer, on purpose.
func VerifySignature(secret []byte, header string, body []byte, now time.Time, tolerance time.Duration) error {
	var ts string
	var sigs []string
	for _, f := range strings.Split(header, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(f), "=")
		if !ok {
			return errors.New("malformed signature header")
		}
		switch k {
		case "t":
			ts = v
		case "v1":
			sigs = append(sigs, v)
		}
	}
	t, err := strconv.ParseInt(ts, 10, 64)
	if err != nil || len(sigs) == 0 {
		return errors.New("signature header lacks t or v1")
	}
	if d := now.Sub(time.Unix(t, 0)); d > tolerance || d < -tolerance {
		return errors.New("signature time outside the tolerance")
	}
	m := hmac.New(sha256.New, secret)
	m.Write([]byte(ts + "."))
	m.Write(body)
	want := m.Sum(nil)
	for _, s := range sigs {
		got, err := hex.DecodeString(s)
		if err == nil && hmac.Equal(got, want) {
			return nil
		}
	}
	return errors.New("signature does not match")
}

// Call is one request a stand-in received.
type Call struct {
	Header http.Header
	Body   []byte
}

// recorder keeps calls and the delay a stand-in waits before answering.
type recorder struct {
	mu    sync.Mutex
	calls []Call
	delay time.Duration
}

func (r *recorder) record(c Call) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls = append(r.calls, c)
}

// signedPost reads and records a call, and answers it when it is not a POST signed with
// secret: 405, or 401 naming why. It returns the body, and false when it answered.
func (r *recorder) signedPost(rw http.ResponseWriter, req *http.Request, secret []byte) ([]byte, bool) {
	body, err := io.ReadAll(io.LimitReader(req.Body, 32<<20))
	if err != nil {
		return nil, false
	}
	r.record(Call{Header: req.Header.Clone(), Body: body})
	if req.Method != http.MethodPost {
		writeAnswer(rw, http.StatusMethodNotAllowed, map[string]any{"error": "POST only"})
		return nil, false
	}
	if err := VerifySignature(secret, req.Header.Get(SignatureHeader), body, time.Now(), SignatureTolerance); err != nil {
		writeAnswer(rw, http.StatusUnauthorized, map[string]any{"error": err.Error()})
		return nil, false
	}
	return body, true
}

// Calls returns the requests received so far.
func (r *recorder) Calls() []Call {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Call(nil), r.calls...)
}

// SetDelay makes the stand-in wait d before each answer, or until the caller gives up.
func (r *recorder) SetDelay(d time.Duration) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.delay = d
}

// wait sleeps the delay; false when the caller went away first.
func (r *recorder) wait(req *http.Request) bool {
	r.mu.Lock()
	d := r.delay
	r.mu.Unlock()
	if d <= 0 {
		return true
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-req.Context().Done():
		return false
	}
}
