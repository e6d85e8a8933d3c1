package httpapi

import (
	"errors"
	"log/slog"
	"net/http"
	"strings"

	"github.com/gorilla/mux"

	"github.com/causeway/causeway/gateway"
	"github.com/causeway/causeway/gateway/providers"
)

// Gateway is the data plane's HTTP surface: it turns each request into the gateway service's
// input and its outcome into JSON, server-sent events or the provider's own bytes, and
// nothing more. Every decision is the service's (gateway.Service).
type Gateway struct {
	Log     *slog.Logger
	Service *gateway.Service
	// MaxBody bounds a request body at the transport too, so a body longer than it declared
	// is cut off as it is read.
	MaxBody int64
	// OnPromptRender hears each prompt render's status (renders call no provider, so no log
	// row counts them), for the metrics; nil: nobody.
	OnPromptRender func(status int)
}

// Register adds the inference endpoints.
func (g *Gateway) Register(v1 *mux.Router) {
	v1.Handle("/chat/completions", g.endpoint(providers.EndpointChat)).Methods(http.MethodPost)
	v1.Handle("/completions", g.endpoint(providers.EndpointCompletion)).Methods(http.MethodPost)
	v1.Handle("/embeddings", g.endpoint(providers.EndpointEmbed)).Methods(http.MethodPost)
	v1.Handle("/rerank", g.endpoint(providers.EndpointRerank)).Methods(http.MethodPost)
	g.registerPrompts(v1)
}

// PassThrough serves every other path under /v1 (POST, GET, PUT, DELETE) through the same
// pipeline; admin routes are matched first, so they keep precedence.
func (g *Gateway) PassThrough() http.Handler { return g.endpoint(providers.EndpointPassThrough) }

func (g *Gateway) endpoint(endpoint string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body := r.Body
		if g.MaxBody > 0 && body != nil {
			body = http.MaxBytesReader(w, body, g.MaxBody)
		}
		g.Service.Serve(r.Context(), gateway.Request{
			Endpoint: endpoint, Method: r.Method, Path: strings.TrimPrefix(r.URL.Path, BasePath), Query: r.URL.RawQuery,
			Header: r.Header, Body: body, ContentLength: r.ContentLength, TraceID: TraceID(r.Context()),
		}, &reply{ResponseWriter: w, r: r, log: g.Log})
	})
}

// reply is the service's writer: the response, flushed chunk by chunk, and the one error
// shape of the API.
type reply struct {
	http.ResponseWriter
	r   *http.Request
	log *slog.Logger
}

var _ gateway.Reply = (*reply)(nil)

func (w *reply) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Error answers err in the error shape; a refusal by a policy or budget names it in the
// body as decided_by.
func (w *reply) Error(err error) int {
	var denied *gateway.GuardrailDeniedError
	if errors.As(err, &denied) {
		by := denied.By
		return writeError(w.ResponseWriter, w.r, w.log, denied.Err, &by, denied.HookResults)
	}
	var refused *gateway.RefusalError
	if errors.As(err, &refused) {
		by := refused.By
		return writeError(w.ResponseWriter, w.r, w.log, refused.Err, &by, nil)
	}
	return writeError(w.ResponseWriter, w.r, w.log, err, nil, nil)
}
