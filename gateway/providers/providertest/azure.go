package providertest

import (
	"net/http"
	"strings"
	"sync"
	"testing"
)

// AzureOpenAIServer stands in for Azure OpenAI's data-plane inference API (learn.microsoft.com,
// "Azure OpenAI in Azure AI Foundry Models REST API reference"): POST
// /openai/deployments/{deployment-id}/chat/completions, /completions and /embeddings, with the
// api-version query and the key in the api-key header, answered as the OpenAI stand-in answers
// (the deployment stands for the model when the body names none). It refuses what Azure
// refuses: a path outside /openai or a request without api-version (404 "Resource not found"),
// a key missing from api-key or wrong (401), a deployment it does not have once SetDeployments
// names them (404 DeploymentNotFound). Other paths under /openai (files, batches) are echoed
// back as JSON, for pass-through tests.
type AzureOpenAIServer struct {
	*core

	openai      *OpenAIServer
	mu          sync.Mutex
	deployments map[string]bool
}

// NewAzureOpenAI starts an Azure OpenAI stand-in, closed when the test ends.
func NewAzureOpenAI(t testing.TB) *AzureOpenAIServer {
	s := &AzureOpenAIServer{}
	s.core = newCore(t, http.HandlerFunc(s.serve))
	s.openai = &OpenAIServer{core: s.core}
	return s
}

// BaseURL is the stand-in's https://{resource}.openai.azure.com/openai.
func (s *AzureOpenAIServer) BaseURL() string { return s.URL + "/openai" }

// SetDeployments names the resource's deployments; any other is not found. By default every
// deployment exists.
func (s *AzureOpenAIServer) SetDeployments(names ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.deployments = map[string]bool{}
	for _, n := range names {
		s.deployments[n] = true
	}
}

// Deployment is the deployment a request's path names; "" when it names none.
func (r Request) Deployment() string {
	rest, ok := strings.CutPrefix(r.Path, "/openai/deployments/")
	if !ok {
		return ""
	}
	d, _, _ := strings.Cut(rest, "/")
	return d
}

func azureError(w http.ResponseWriter, status int, code, message string) {
	writeJSON(w, status, map[string]any{"error": map[string]any{"code": code, "message": message}})
}

func (s *AzureOpenAIServer) serve(w http.ResponseWriter, r *http.Request) {
	req, scripted, plan, key, seq := s.receive(r)
	if scripted != nil {
		s.answerScripted(w, r, scripted)
		return
	}
	if !strings.HasPrefix(r.URL.Path, "/openai/") || r.URL.Query().Get("api-version") == "" {
		azureError(w, http.StatusNotFound, "404", "Resource not found")
		return
	}
	deployment := req.Deployment()
	if deployment == "" {
		writeJSON(w, http.StatusOK, map[string]any{"method": r.Method, "path": r.URL.Path, "query": r.URL.RawQuery, "body": string(req.Body)})
		return
	}
	if got := r.Header.Get("Api-Key"); got == "" || key != "" && got != key {
		azureError(w, http.StatusUnauthorized, "401", "Access denied due to invalid subscription key or wrong API endpoint. "+
			"Make sure to provide a valid key for an active subscription and use a correct regional API endpoint for your resource.")
		return
	}
	s.mu.Lock()
	known := s.deployments == nil || s.deployments[deployment]
	s.mu.Unlock()
	if !known {
		azureError(w, http.StatusNotFound, "DeploymentNotFound", "The API deployment for this resource does not exist. "+
			"If you created the deployment within the last 5 minutes, please wait a moment and try again.")
		return
	}
	rest := strings.TrimPrefix(r.URL.Path, "/openai/deployments/"+deployment)
	switch rest {
	case "/chat/completions", "/completions", "/embeddings":
		s.openai.serveOpenAIAs(w, r, req, plan, key, seq, deployment)
	default:
		azureError(w, http.StatusNotFound, "404", "Resource not found")
	}
}
