package cohere

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/causeway/causeway/gateway/openai"
	"github.com/causeway/causeway/gateway/providers"
	"github.com/causeway/causeway/gateway/providers/openaicompat"
)

// BaseURL is Cohere's API (docs.cohere.com/reference/rerank).
const BaseURL = "https://api.cohere.com"

// Adapter is the adapter for Cohere: rerank on its own v2 API, and chat and embeddings on its
// Compatibility API, which speaks OpenAI's dialect under {base}/compatibility/v1
// (docs.cohere.com/docs/compatibility-api) but refuses stream_options.
type Adapter struct {
	compat *openaicompat.Adapter
	client *http.Client
}

var (
	_ providers.Provider     = (*Adapter)(nil)
	_ providers.ChatStreamer = (*Adapter)(nil)
	_ providers.Embedder     = (*Adapter)(nil)
	_ providers.Reranker     = (*Adapter)(nil)
)

// New returns the Cohere adapter; client is used when a Target carries none (nil:
// providers.NewClient()).
func New(client *http.Client) *Adapter {
	if client == nil {
		client = providers.NewClient()
	}
	compat := openaicompat.Custom("cohere",
		openaicompat.Dialect{BaseURL: BaseURL + "/compatibility/v1", StreamOptions: openaicompat.DropStreamOptions}, client)
	return &Adapter{compat: compat, client: client}
}

// Name is "cohere".
func (p *Adapter) Name() string { return "cohere" }

// compatTarget points a Target's base (Cohere's API root) at the Compatibility API.
func compatTarget(t providers.Target) providers.Target {
	if t.BaseURL != "" {
		t.BaseURL = strings.TrimRight(t.BaseURL, "/") + "/compatibility/v1"
	}
	return t
}

// Chat is the Compatibility API's POST /chat/completions.
func (p *Adapter) Chat(ctx context.Context, t providers.Target, c providers.Call) (*providers.Response, error) {
	return p.compat.Chat(ctx, compatTarget(t), c)
}

// ChatStream is the Compatibility API's streamed POST /chat/completions.
func (p *Adapter) ChatStream(ctx context.Context, t providers.Target, c providers.Call) (providers.Stream, error) {
	return p.compat.ChatStream(ctx, compatTarget(t), c)
}

// Embed is the Compatibility API's POST /embeddings.
func (p *Adapter) Embed(ctx context.Context, t providers.Target, c providers.Call) (*providers.Response, error) {
	return p.compat.Embed(ctx, compatTarget(t), c)
}

// rerankRequest is Cohere's POST /v2/rerank body (docs.cohere.com/reference/rerank):
// documents are strings, and the v1 fields return_documents and max_chunks_per_doc are gone.
type rerankRequest struct {
	Model           string          `json:"model"`
	Query           string          `json:"query"`
	Documents       []string        `json:"documents"`
	TopN            *int            `json:"top_n,omitempty"`
	MaxTokensPerDoc *int            `json:"max_tokens_per_doc,omitempty"`
	Priority        json.RawMessage `json:"priority,omitempty"`
}

// rerankResponse is the part of Cohere's answer the adapter reads: its billing meta.
type rerankResponse struct {
	Meta *struct {
		BilledUnits *units `json:"billed_units"`
		Tokens      *units `json:"tokens"`
	} `json:"meta"`
}

type units struct {
	InputTokens  float64 `json:"input_tokens"`
	OutputTokens float64 `json:"output_tokens"`
	SearchUnits  float64 `json:"search_units"`
}

// Rerank is POST {base}/v2/rerank. The answer is Cohere's own object (specification 2.5);
// when the client asked for return_documents, which v2 no longer does itself, each result
// gets the document back as v1 gave it ({"document":{"text":...}}). max_chunks_per_doc, a v1
// field with no v2 equivalent, is not sent.
func (p *Adapter) Rerank(ctx context.Context, t providers.Target, c providers.Call) (*providers.Response, error) {
	in, err := c.RerankRequest()
	if err != nil {
		return nil, err
	}
	out := rerankRequest{Model: in.Model, Query: in.Query, Documents: make([]string, 0, len(in.Documents))}
	out.Priority, _ = in.Extra.Get("priority")
	if in.TopN > 0 {
		out.TopN = &in.TopN
	}
	if in.MaxTokensPerDoc > 0 {
		out.MaxTokensPerDoc = &in.MaxTokensPerDoc
	}
	if c.Model != "" {
		out.Model = c.Model
	}
	for _, d := range in.Documents {
		out.Documents = append(out.Documents, documentText(d))
	}
	body, err := json.Marshal(out)
	if err != nil {
		return nil, err
	}
	base := strings.TrimRight(t.BaseURL, "/")
	if base == "" {
		base = BaseURL
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+"/v2/rerank", bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("cohere: building the request: %w", providers.RedactError(err, t.APIKey))
	}
	providers.ForwardHeaders(req.Header, c.Header, false)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	if t.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+t.APIKey)
	}
	client := t.Client
	if client == nil {
		client = p.client
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, providers.TransportError(ctx, "cohere", err, t.APIKey)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return nil, providers.NewUpstreamError("cohere", resp, t.APIKey)
	}
	answer, err := providers.ReadAnswer(ctx, "cohere", resp, t.APIKey)
	if err != nil {
		return nil, err
	}
	var parsed rerankResponse
	if err := json.Unmarshal(answer, &parsed); err != nil {
		return nil, &providers.UpstreamError{Status: http.StatusBadGateway, Provider: "cohere",
			Body: providers.OpenAIErrorBody(http.StatusBadGateway, []byte("cohere answered a rerank that is not JSON"))}
	}
	if in.ReturnDocuments {
		if answer, err = withDocuments(answer, out.Documents); err != nil {
			return nil, err
		}
	}
	return &providers.Response{Status: resp.StatusCode, Header: openaicompat.AnswerHeaders(resp.Header), Body: answer, Usage: parsed.usage()}, nil
}

// usage counts billed tokens where Cohere reports them (meta.billed_units, else meta.tokens).
// Search units, what rerank is usually billed in, have no place in Usage.
func (r *rerankResponse) usage() providers.Usage {
	if r.Meta == nil {
		return providers.Usage{}
	}
	u := r.Meta.BilledUnits
	if u == nil || u.InputTokens+u.OutputTokens == 0 {
		u = r.Meta.Tokens
	}
	if u == nil {
		return providers.Usage{}
	}
	in, out := int(u.InputTokens), int(u.OutputTokens)
	return providers.Usage{PromptTokens: in, CompletionTokens: out, TotalTokens: in + out}
}

// documentText is a document as Cohere v2 takes it: a string as is, an object by its text,
// and any other object as its JSON (v2 asks structured documents to be sent as text).
func documentText(d openai.Document) string {
	if d.Object == nil || d.HasText {
		return d.Text
	}
	return string(d.Object)
}

// withDocuments adds each result's document ({"document":{"text":...}}) to Cohere's answer,
// leaving every other field as Cohere sent it.
func withDocuments(answer []byte, docs []string) ([]byte, error) {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(answer, &top); err != nil {
		return answer, nil
	}
	var results []map[string]json.RawMessage
	if err := json.Unmarshal(top["results"], &results); err != nil {
		return answer, nil
	}
	for _, r := range results {
		var i int
		if json.Unmarshal(r["index"], &i) != nil || i < 0 || i >= len(docs) {
			continue
		}
		doc, err := json.Marshal(map[string]string{"text": docs[i]})
		if err != nil {
			return nil, err
		}
		r["document"] = doc
	}
	raw, err := json.Marshal(results)
	if err != nil {
		return nil, err
	}
	top["results"] = raw
	return json.Marshal(top)
}
