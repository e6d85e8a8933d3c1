package providertest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"testing"
)

// CohereServer stands in for Cohere's API: POST /v2/rerank (docs.cohere.com/reference/rerank)
// and the Compatibility API under /compatibility/v1 (docs.cohere.com/docs/compatibility-api),
// which answers chat completions and embeddings as OpenAI does but refuses stream_options.
// Anything else is echoed back as JSON, as the OpenAI stand-in does.
type CohereServer struct {
	*core

	compat *OpenAIServer
}

// NewCohere starts a Cohere stand-in, closed when the test ends.
func NewCohere(t testing.TB) *CohereServer {
	s := &CohereServer{}
	s.core = newCore(t, http.HandlerFunc(s.serve))
	s.compat = &OpenAIServer{core: s.core}
	return s
}

func (s *CohereServer) serve(w http.ResponseWriter, r *http.Request) {
	req, scripted, plan, key, seq := s.receive(r)
	if scripted != nil {
		s.answerScripted(w, r, scripted)
		return
	}
	switch {
	case r.Method == http.MethodPost && r.URL.Path == "/v2/rerank":
		s.rerank(w, r, req, key, seq)
	case strings.HasPrefix(r.URL.Path, "/compatibility/v1/"):
		var body struct {
			StreamOptions json.RawMessage `json:"stream_options"`
		}
		if json.Unmarshal(req.Body, &body) == nil && len(body.StreamOptions) > 0 {
			// The refusal is documented (strandsagents.com, "Cohere": "Cohere's Compatibility
			// API rejects the stream_options request field"); its wording is not.
			cohereError(w, http.StatusBadRequest, "invalid request: stream_options is not supported")
			return
		}
		s.compat.serveOpenAI(w, r, req, plan, key, seq)
	default:
		writeJSON(w, http.StatusOK, map[string]any{"method": r.Method, "path": r.URL.Path, "query": r.URL.RawQuery, "body": string(req.Body)})
	}
}

// cohereError writes Cohere's error body (docs.cohere.com/reference/errors): a message, and
// the request's id.
func cohereError(w http.ResponseWriter, status int, message string) {
	writeJSON(w, status, map[string]any{"id": "standin-error", "message": message})
}

// rerank scores each document by the share of the query's words it contains, and answers
// Cohere's v2 object: results (index, relevance_score) best first, cut to top_n, an id, and
// meta with api_version and billed_units.
func (s *CohereServer) rerank(w http.ResponseWriter, r *http.Request, req Request, key string, seq int) {
	got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok || got == "" || (key != "" && got != key) {
		cohereError(w, http.StatusUnauthorized, "invalid api token")
		return
	}
	var body struct {
		Model     string            `json:"model"`
		Query     string            `json:"query"`
		Documents []json.RawMessage `json:"documents"`
		TopN      *int              `json:"top_n"`
	}
	if err := json.Unmarshal(req.Body, &body); err != nil {
		cohereError(w, http.StatusBadRequest, "invalid request: could not parse the body")
		return
	}
	switch {
	case body.Model == "":
		cohereError(w, http.StatusBadRequest, "invalid request: model must be specified")
		return
	case body.Query == "":
		cohereError(w, http.StatusBadRequest, "invalid request: query must not be empty")
		return
	case len(body.Documents) == 0:
		cohereError(w, http.StatusBadRequest, "invalid request: documents must not be empty")
		return
	}
	type result struct {
		Index          int     `json:"index"`
		RelevanceScore float64 `json:"relevance_score"`
	}
	words := strings.Fields(strings.ToLower(body.Query))
	results := make([]result, 0, len(body.Documents))
	for i, raw := range body.Documents {
		var doc string
		if json.Unmarshal(raw, &doc) != nil {
			cohereError(w, http.StatusBadRequest, fmt.Sprintf("invalid request: documents[%d] must be a string", i))
			return
		}
		lower, hits := strings.ToLower(doc), 0
		for _, word := range words {
			if strings.Contains(lower, word) {
				hits++
			}
		}
		results = append(results, result{Index: i, RelevanceScore: float64(hits) / float64(max(len(words), 1))})
	}
	sort.SliceStable(results, func(i, j int) bool { return results[i].RelevanceScore > results[j].RelevanceScore })
	if body.TopN != nil && *body.TopN >= 0 && *body.TopN < len(results) {
		results = results[:*body.TopN]
	}
	writeJSON(w, http.StatusOK, map[string]any{
		"id":      fmt.Sprintf("standin-rerank-%d", seq),
		"results": results,
		"meta": map[string]any{
			"api_version":  map[string]any{"version": "2", "is_experimental": false},
			"billed_units": map[string]any{"search_units": 1},
		},
	})
}
