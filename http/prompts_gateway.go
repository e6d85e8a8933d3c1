package httpapi

import (
	"net/http"
	"strings"

	"github.com/gorilla/mux"

	"github.com/causeway/causeway/gateway"
	"github.com/causeway/causeway/gateway/providers"
)

// The prompts' data-plane routes: POST /prompts/{promptId}/completions is a chat completion
// the gateway makes of the prompt (gateway.Request.Prompt), served by the one pipeline as any
// other; POST /prompts/{promptId}/render answers the body it would send ({success, data}, the
// reference's PromptRenderResponse) without calling a model. {promptId} is an id or slug,
// optionally with @version, @latest, @default or @label.

func (g *Gateway) registerPrompts(v1 *mux.Router) {
	v1.Handle("/prompts/{promptId}/completions", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body := r.Body
		if g.MaxBody > 0 && body != nil {
			body = http.MaxBytesReader(w, body, g.MaxBody)
		}
		g.Service.Serve(r.Context(), gateway.Request{
			Endpoint: providers.EndpointChat, Method: r.Method, Path: strings.TrimPrefix(r.URL.Path, BasePath), Query: r.URL.RawQuery,
			Header: r.Header, Body: body, ContentLength: r.ContentLength, TraceID: TraceID(r.Context()),
			Prompt: mux.Vars(r)["promptId"],
		}, &reply{ResponseWriter: w, r: r, log: g.Log})
	})).Methods(http.MethodPost)

	v1.Handle("/prompts/{promptId}/render", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body := r.Body
		if g.MaxBody > 0 && body != nil {
			body = http.MaxBytesReader(w, body, g.MaxBody)
		}
		rendered, err := g.Service.RenderPrompt(r.Context(), gateway.Request{Method: r.Method, Header: r.Header, Body: body,
			ContentLength: r.ContentLength, TraceID: TraceID(r.Context()), Prompt: mux.Vars(r)["promptId"]})
		if err != nil {
			g.rendered(writeError(w, r, g.Log, err, nil, nil))
			return
		}
		WriteJSON(w, http.StatusOK, map[string]any{"success": true, "data": rendered.Body})
		g.rendered(http.StatusOK)
	})).Methods(http.MethodPost)
}

func (g *Gateway) rendered(status int) {
	if g.OnPromptRender != nil {
		g.OnPromptRender(status)
	}
}
