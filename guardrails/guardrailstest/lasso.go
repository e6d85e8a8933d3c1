package guardrailstest

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// LassoPath is the classify endpoint under Lasso's base URL.
const LassoPath = "/gateway/v2/classify"

// LassoDeputies are the deputies Lasso's classify answer names.
var LassoDeputies = []string{"jailbreak", "custom-policies", "sexual", "hate", "illegality", "violence", "pattern-detection"}

// LassoMessage is a message of a classify request.
type LassoMessage struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

// Lasso is Lasso Security's classify API as its documentation and the reference gateway's
// plugin describe it: POST /gateway/v2/classify with the header lasso-api-key (401 when it is
// not the key it was started with) and {"messages": [{"role", "content"}]}; it answers
// {"deputies": {name: bool}, "deputies_predictions": {name: score}, "violations_detected":
// bool}. A deputy flags a request when a message holds one of its phrases; jailbreak flags
// "ignore all previous instructions" from the start.
type Lasso struct {
	URL string
	recorder
	apiKey string

	mu      sync.Mutex
	phrases map[string][]string // deputy → lower-case phrases
}

// NewLasso starts the stand-in accepting apiKey; it stops with tb.
func NewLasso(tb testing.TB, apiKey string) *Lasso {
	l := &Lasso{apiKey: apiKey, phrases: map[string][]string{"jailbreak": {"ignore all previous instructions"}}}
	srv := httptest.NewServer(http.HandlerFunc(l.serve))
	tb.Cleanup(srv.Close)
	l.URL = srv.URL
	return l
}

// Flag makes deputy flag messages that hold phrase, whatever its case.
func (l *Lasso) Flag(deputy, phrase string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.phrases[deputy] = append(l.phrases[deputy], strings.ToLower(phrase))
}

// Messages returns the messages of each classify call received, in order.
func (l *Lasso) Messages() [][]LassoMessage {
	var out [][]LassoMessage
	for _, c := range l.Calls() {
		var req struct {
			Messages []LassoMessage `json:"messages"`
		}
		_ = json.Unmarshal(c.Body, &req)
		out = append(out, req.Messages)
	}
	return out
}

func (l *Lasso) serve(rw http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(io.LimitReader(r.Body, 32<<20))
	if err != nil {
		return
	}
	l.record(Call{Header: r.Header.Clone(), Body: body})
	if r.Method != http.MethodPost || r.URL.Path != LassoPath {
		writeAnswer(rw, http.StatusNotFound, map[string]any{"detail": "Not Found"})
		return
	}
	if r.Header.Get("lasso-api-key") != l.apiKey {
		writeAnswer(rw, http.StatusUnauthorized, map[string]any{"detail": "Invalid API key"})
		return
	}
	var req struct {
		Messages []LassoMessage `json:"messages"`
	}
	if err := json.Unmarshal(body, &req); err != nil || len(req.Messages) == 0 {
		writeAnswer(rw, http.StatusUnprocessableEntity, map[string]any{"detail": "messages must be a list of {role, content}"})
		return
	}
	if !l.wait(r) {
		return
	}
	l.mu.Lock()
	deputies := map[string]bool{}
	for _, d := range LassoDeputies {
		deputies[d] = false
	}
	for d, phrases := range l.phrases {
		deputies[d] = false
		for _, m := range req.Messages {
			for _, p := range phrases {
				if strings.Contains(strings.ToLower(m.Content), p) {
					deputies[d] = true
				}
			}
		}
	}
	l.mu.Unlock()
	predictions := map[string]float64{}
	violation := false
	for d := range deputies {
		predictions[d] = 0.05
		if deputies[d] {
			predictions[d] = 0.97
			violation = true
		}
	}
	writeAnswer(rw, http.StatusOK, map[string]any{
		"deputies":             deputies,
		"deputies_predictions": predictions,
		"violations_detected":  violation,
	})
}
