package guardrails_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/causeway/causeway/guardrails"
)

// pngBytes is a PNG signature and a little more: the check looks at the content type, not
// the pixels.
var pngBytes = []byte("\x89PNG\r\n\x1a\n0123456789abcdef")

// imageHost serves /cat.png (image/png), /tiny.gif (4 bytes), /chunked.png (without a
// length), /page (text/html), /missing (404) and /slow (never
// answers until the caller gives up), and counts requests per path.
type imageHost struct {
	URL        string
	hits       map[string]*atomic.Int64
	authorized atomic.Int64 // requests that came with an Authorization header
}

func newImageHost(t *testing.T) *imageHost {
	t.Helper()
	h := &imageHost{hits: map[string]*atomic.Int64{}}
	for _, p := range []string{"/cat.png", "/tiny.gif", "/page", "/missing", "/slow", "/chunked.png"} {
		h.hits[p] = &atomic.Int64{}
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if c := h.hits[r.URL.Path]; c != nil {
			c.Add(1)
		}
		if r.Header.Get("Authorization") != "" {
			h.authorized.Add(1)
		}
		switch r.URL.Path {
		case "/cat.png":
			w.Header().Set("Content-Type", "image/png")
			_, _ = w.Write(pngBytes)
		case "/tiny.gif":
			w.Header().Set("Content-Type", "image/gif")
			_, _ = w.Write([]byte("GIF8"))
		case "/chunked.png":
			// No Content-Length: the size cap must hold while reading.
			w.Header().Set("Content-Type", "image/png; charset=binary")
			for i := 0; i < 4; i++ {
				_, _ = w.Write(pngBytes)
				w.(http.Flusher).Flush()
			}
		case "/page":
			w.Header().Set("Content-Type", "text/html")
			_, _ = w.Write([]byte("<html></html>"))
		case "/slow":
			<-r.Context().Done()
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	h.URL = srv.URL
	return h
}

func newInlineImage(t *testing.T, deps guardrails.Deps, extra map[string]any) guardrails.Check {
	t.Helper()
	p := map[string]any{"providers": []any{"bedrock", "vertex-ai"}}
	for k, v := range extra {
		p[k] = v
	}
	c, err := guardrails.NewInlineImageCheck(p, deps)
	require.NoError(t, err)
	return c
}

func imageInput(t *testing.T, provider string, urls ...any) guardrails.Input {
	parts := []any{map[string]any{"type": "text", "text": "what is <this>?"}}
	for _, u := range urls {
		switch u := u.(type) {
		case string:
			parts = append(parts, map[string]any{"type": "image_url", "image_url": map[string]any{"url": u, "detail": "high"}})
		case []string: // the bare form: "image_url": "<url>"
			parts = append(parts, map[string]any{"type": "image_url", "image_url": u[0]})
		}
	}
	in := beforeInput(t)
	in.Provider = provider
	in.Request = chatRequest(t, map[string]any{
		"model":       "anthropic.claude-3-5-sonnet",
		"temperature": 0.25,
		"messages": []any{
			map[string]any{"role": "system", "content": "be brief"},
			map[string]any{"role": "user", "content": parts},
		},
	})
	return in
}

// imageURLs returns the URLs of the image parts of a rewritten request, in order.
func imageURLs(t *testing.T, body json.RawMessage) []string {
	t.Helper()
	var req struct {
		Messages []struct {
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
	}
	require.NoError(t, json.Unmarshal(body, &req))
	var out []string
	for _, m := range req.Messages {
		var parts []map[string]json.RawMessage
		if json.Unmarshal(m.Content, &parts) != nil {
			continue
		}
		for _, p := range parts {
			var s string
			if json.Unmarshal(p["image_url"], &s) == nil {
				out = append(out, s)
				continue
			}
			var obj struct {
				URL string `json:"url"`
			}
			if json.Unmarshal(p["image_url"], &obj) == nil && obj.URL != "" {
				out = append(out, obj.URL)
			}
		}
	}
	return out
}

func TestInlineImageInlines(t *testing.T) {
	host := newImageHost(t)
	c := newInlineImage(t, guardedDeps(t), nil)
	dataURL := "data:image/png;base64," + base64.StdEncoding.EncodeToString(pngBytes)
	already := "data:image/gif;base64,R0lGODlh"

	in := imageInput(t, "bedrock", host.URL+"/cat.png", []string{host.URL + "/cat.png"}, already)
	v, err := c.Run(context.Background(), in)
	require.NoError(t, err)
	require.True(t, v.Pass)
	require.Equal(t, []string{dataURL, dataURL, already}, imageURLs(t, v.Transformed))
	require.Equal(t, int64(1), host.hits["/cat.png"].Load(), "one fetch per distinct URL")
	require.Equal(t, map[string]any{"inlined": 2}, v.Data)

	var before, after map[string]any
	require.NoError(t, json.Unmarshal(in.Request, &before))
	require.NoError(t, json.Unmarshal(v.Transformed, &after))
	require.Equal(t, before["model"], after["model"])
	require.Equal(t, before["temperature"], after["temperature"])
	require.Equal(t, before["messages"].([]any)[0], after["messages"].([]any)[0])
	part := after["messages"].([]any)[1].(map[string]any)["content"].([]any)[1].(map[string]any)
	require.Equal(t, "high", part["image_url"].(map[string]any)["detail"])
	require.Contains(t, string(v.Transformed), "what is <this>?", "the rest is not HTML-escaped")
	require.Zero(t, host.authorized.Load())
}

func TestInlineImageLeavesOtherRequestsAlone(t *testing.T) {
	host := newImageHost(t)
	c := newInlineImage(t, guardedDeps(t), nil)

	textOnly := beforeInput(t)
	textOnly.Provider = "bedrock"
	embed := imageInput(t, "bedrock", host.URL+"/cat.png")
	embed.Endpoint = "embed"
	cases := map[string]guardrails.Input{
		"provider not listed": imageInput(t, "openai", host.URL+"/cat.png"),
		"no http images":      imageInput(t, "bedrock", "data:image/png;base64,AAAA", "ftp://example.com/x.png"),
		"text content only":   textOnly,
		"not a chat request":  embed,
	}
	for name, in := range cases {
		t.Run(name, func(t *testing.T) {
			v, err := c.Run(context.Background(), in)
			require.NoError(t, err)
			require.True(t, v.Pass)
			require.Nil(t, v.Transformed)
		})
	}
	require.Zero(t, host.hits["/cat.png"].Load())

	t.Run("after hook refused", func(t *testing.T) {
		in := imageInput(t, "bedrock", host.URL+"/cat.png")
		in.Hook = guardrails.AfterRequest
		_, err := c.Run(context.Background(), in)
		require.Error(t, err)
	})
}

func TestInlineImageFetchErrors(t *testing.T) {
	host := newImageHost(t)
	deps := guardedDeps(t)
	refusedURL, refusedHits := refusedServer(t)

	cases := []struct {
		name   string
		url    string
		params map[string]any
		want   string
	}{
		{"larger than the cap", host.URL + "/cat.png", map[string]any{"maxSizeBytes": len(pngBytes) - 1}, "maxSizeBytes"},
		{"larger than the cap while reading", host.URL + "/chunked.png", map[string]any{"maxSizeBytes": 2 * len(pngBytes)}, "maxSizeBytes"},
		{"not an image", host.URL + "/page", nil, "not an image"},
		{"not found", host.URL + "/missing", nil, "404"},
		{"loopback refused", refusedURL + "/x.png", nil, "not allowed"},
		{"metadata refused", "http://169.254.169.254/latest/meta-data/iam", nil, "not allowed"},
		{"timeout", host.URL + "/slow", map[string]any{"timeoutMs": 100}, "deadline exceeded"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			in := imageInput(t, "bedrock", tc.url, host.URL+"/tiny.gif")

			lenient := newInlineImage(t, deps, tc.params)
			v, err := runWithin(t, 10*time.Second, lenient, context.Background(), in)
			require.NoError(t, err)
			require.True(t, v.Pass)
			urls := imageURLs(t, v.Transformed)
			require.Equal(t, tc.url, urls[0], "the failed URL is left as it was")
			require.Equal(t, "data:image/gif;base64,R0lGOA==", urls[1])
			raw, _ := json.Marshal(v.Data)
			require.Contains(t, string(raw), `"path":"messages[1].content[1]"`)
			require.Contains(t, string(raw), tc.want)
			require.NotContains(t, string(raw), tc.url, "Data names paths, not URLs")

			strict := newInlineImage(t, deps, merge(tc.params, map[string]any{"failOnError": true}))
			v, err = runWithin(t, 10*time.Second, strict, context.Background(), in)
			require.NoError(t, err)
			require.False(t, v.Pass)
			require.Nil(t, v.Transformed)
		})
	}
	require.Zero(t, refusedHits.Load())

	t.Run("exactly the cap", func(t *testing.T) {
		c := newInlineImage(t, deps, map[string]any{"maxSizeBytes": len(pngBytes)})
		v, err := c.Run(context.Background(), imageInput(t, "bedrock", host.URL+"/cat.png"))
		require.NoError(t, err)
		require.NotNil(t, v.Transformed)
	})

	t.Run("the caller's context ends", func(t *testing.T) {
		c := newInlineImage(t, deps, nil)
		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		defer cancel()
		v, err := runWithin(t, 10*time.Second, c, ctx, imageInput(t, "bedrock", host.URL+"/slow"))
		require.NoError(t, err)
		require.Nil(t, v.Transformed)
	})

	t.Run("a request that is not JSON", func(t *testing.T) {
		c := newInlineImage(t, deps, nil)
		in := imageInput(t, "bedrock")
		in.Request = json.RawMessage(`not json`)
		_, err := c.Run(context.Background(), in)
		require.Error(t, err)
	})
}

func TestInlineImageParams(t *testing.T) {
	deps := guardedDeps(t)
	prov := []any{"bedrock"}
	cases := []struct {
		name   string
		params map[string]any
		param  string
	}{
		{"providers missing", map[string]any{}, "providers"},
		{"providers empty", map[string]any{"providers": []any{}}, "providers"},
		{"providers not a list", map[string]any{"providers": "bedrock"}, "providers"},
		{"provider not a string", map[string]any{"providers": []any{"bedrock", 3}}, "providers[1]"},
		{"size zero", map[string]any{"providers": prov, "maxSizeBytes": 0}, "maxSizeBytes"},
		{"size over the bound", map[string]any{"providers": prov, "maxSizeBytes": 52428801}, "maxSizeBytes"},
		{"timeout zero", map[string]any{"providers": prov, "timeoutMs": 0}, "timeoutMs"},
		{"timeout over the bound", map[string]any{"providers": prov, "timeoutMs": 300001}, "timeoutMs"},
		{"failOnError not a boolean", map[string]any{"providers": prov, "failOnError": "false"}, "failOnError"},
		{"unknown", map[string]any{"providers": prov, "maxSize": 10}, "maxSize"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := guardrails.NewInlineImageCheck(tc.params, deps)
			requireParamError(t, err, tc.param)
		})
	}
	_, err := guardrails.NewInlineImageCheck(map[string]any{"providers": prov, "maxSizeBytes": json.Number("20971520"), "timeoutMs": 30000.0}, deps)
	require.NoError(t, err)
}

// A large image is read only to the cap plus one byte.
func TestInlineImageStopsReadingAtTheCap(t *testing.T) {
	var served atomic.Int64
	finished := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer close(finished)
		w.Header().Set("Content-Type", "image/jpeg")
		chunk := bytes.Repeat([]byte{0xff}, 32<<10)
		for i := 0; i < 1024; i++ { // 32 MiB if read to the end
			n, err := w.Write(chunk)
			served.Add(int64(n))
			if err != nil {
				return
			}
		}
	}))
	t.Cleanup(srv.Close)
	c := newInlineImage(t, guardedDeps(t), map[string]any{"maxSizeBytes": 64 << 10})
	v, err := c.Run(context.Background(), imageInput(t, "bedrock", srv.URL+"/big.jpg"))
	require.NoError(t, err)
	require.Nil(t, v.Transformed)
	select {
	case <-finished:
	case <-time.After(10 * time.Second):
		t.Fatal("the server was still writing: the body was not closed")
	}
	require.Less(t, served.Load(), int64(16<<20))
}

func merge(a, b map[string]any) map[string]any {
	out := map[string]any{}
	for k, v := range a {
		out[k] = v
	}
	for k, v := range b {
		out[k] = v
	}
	return out
}
