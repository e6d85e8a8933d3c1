package guardrailstest

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
)

// PolicyRequest is the body default.externalPolicy posts to its policy service.
type PolicyRequest struct {
	PolicyID string            `json:"policy_id"`
	Hook     string            `json:"hook"`
	Endpoint string            `json:"endpoint"`
	Provider string            `json:"provider"`
	Model    string            `json:"model"`
	Metadata map[string]string `json:"metadata"`
	Request  json.RawMessage   `json:"request"`
	Response json.RawMessage   `json:"response"`
	Text     string            `json:"text"`
	Stream   bool              `json:"stream"`
	Final    bool              `json:"final"`
}

// Decision is a policy: whether the request or answer may go on, and why.
type Decision func(PolicyRequest) (allow bool, reason string)

// PolicyService is an external policy service for default.externalPolicy: it verifies each
// call's signature (401 when it does not hold), decides by policy_id with the policies a test
// set (404 for another id) and answers {"allow", "reason"}.
type PolicyService struct {
	URL string
	recorder
	secret []byte

	mu       sync.Mutex
	policies map[string]Decision
}

// NewPolicyService starts a policy service that verifies signatures with secret; it stops
// with tb.
func NewPolicyService(tb testing.TB, secret []byte) *PolicyService {
	p := &PolicyService{secret: secret, policies: map[string]Decision{}}
	srv := httptest.NewServer(http.HandlerFunc(p.serve))
	tb.Cleanup(srv.Close)
	p.URL = srv.URL
	return p
}

// SetPolicy makes id decide with d.
func (p *PolicyService) SetPolicy(id string, d Decision) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.policies[id] = d
}

func (p *PolicyService) serve(rw http.ResponseWriter, r *http.Request) {
	body, ok := p.signedPost(rw, r, p.secret)
	if !ok {
		return
	}
	var req PolicyRequest
	if err := json.Unmarshal(body, &req); err != nil || req.PolicyID == "" {
		writeAnswer(rw, http.StatusBadRequest, map[string]any{"error": "body must be a JSON object with policy_id"})
		return
	}
	p.mu.Lock()
	decide := p.policies[req.PolicyID]
	p.mu.Unlock()
	if decide == nil {
		writeAnswer(rw, http.StatusNotFound, map[string]any{"error": "unknown policy"})
		return
	}
	if !p.wait(r) {
		return
	}
	allow, reason := decide(req)
	writeAnswer(rw, http.StatusOK, map[string]any{"allow": allow, "reason": reason})
}
