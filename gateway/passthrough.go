package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/http"
	"strings"

	"github.com/causeway/causeway/gateway/providers"
)

// passThroughProbe is what a pass-through body tells the pipeline before it is sent on
// unchanged: the model (for prices and budgets), whether it streams, and its worst case.
type passThroughProbe struct {
	model  string
	stream bool
	tokens int
	output int
}

// generativePaths are pass-through endpoints whose answer length a budget must reserve for
// when the request sets no limit.
var generativePaths = []string{"/responses", "/messages", "/chat/completions", "/completions"}

// probePassThrough reads the few fields of a JSON body that governance needs; any other body
// (multipart uploads, binary audio) is sent on without being read.
func probePassThrough(h http.Header, body []byte, path string, defaultOutput int) passThroughProbe {
	var p passThroughProbe
	mt, _, _ := mime.ParseMediaType(h.Get("Content-Type"))
	if len(body) == 0 || (mt != "" && mt != "application/json") || h.Get("Content-Encoding") != "" {
		return p
	}
	var fields struct {
		Model               string `json:"model"`
		Stream              bool   `json:"stream"`
		MaxOutputTokens     int    `json:"max_output_tokens"`
		MaxTokens           int    `json:"max_tokens"`
		MaxCompletionTokens int    `json:"max_completion_tokens"`
	}
	if json.Unmarshal(body, &fields) != nil {
		return p
	}
	p.model, p.stream = fields.Model, fields.Stream
	p.tokens = (len(body) + 3) / 4
	p.output = max(fields.MaxOutputTokens, fields.MaxCompletionTokens, fields.MaxTokens)
	if p.output == 0 {
		for _, g := range generativePaths {
			if strings.HasSuffix(path, g) {
				p.output = defaultOutput
			}
		}
	}
	return p
}

// relay copies a pass-through answer to the client as it comes, unchanged, flushing each
// read, while an observer reads the usage the provider reports in it (a JSON answer's usage,
// or a stream's last usage event).
func (s *Service) relay(ctx context.Context, x *exchange, out Reply, resp *http.Response) (int, error) {
	defer resp.Body.Close()
	copyHeaders(out.Header(), resp.Header)
	if resp.StatusCode >= 400 {
		// An error answer too long to hold for a retry is relayed as it comes, still marked.
		out.Header().Set(HeaderErrorSource, ErrorSourceProvider)
	}
	out.WriteHeader(resp.StatusCode)
	obs := providers.NewUsageObserver(resp.Header.Get("Content-Type"))
	defer func() {
		// Only a call that does work is charged what its answer reports: a GET of a batch or
		// a stored response carries the usage of work charged when it was done.
		if x.in.Method != http.MethodPost {
			return
		}
		if u, ok := obs.Usage(); ok {
			x.usage, x.usageKnown = u, true
		} else if delivered := obs.DeliveredText(); delivered > 0 {
			x.usage, x.usageKnown = streamUsage(providers.Usage{}, x.tokens, delivered)
		}
	}()
	buf := make([]byte, 32<<10)
	for {
		n, rerr := resp.Body.Read(buf)
		if n > 0 {
			_, _ = obs.Write(buf[:n])
			if _, werr := out.Write(buf[:n]); werr != nil {
				x.rec.Error = "client closed the answer"
				return StatusClientClosed, nil
			}
			out.Flush()
		}
		if rerr != nil {
			if !errors.Is(rerr, io.EOF) {
				if clientGone(ctx) {
					x.rec.Error = "client closed the answer"
					return StatusClientClosed, nil
				}
				var te *TimeoutError
				if errors.As(rerr, &te) {
					x.rec.Error = te.Error() + " while relaying the answer"
					return http.StatusRequestTimeout, nil
				}
				_, reason := providers.ClassifyFailure(rerr)
				x.rec.Error = "the provider's answer broke off: " + reason
			}
			return resp.StatusCode, nil
		}
	}
}
