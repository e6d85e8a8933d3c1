package providers

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/url"
	"strings"
)

// HasDotSegment reports a path with a . or .. segment, escaped or not, or one that does not
// unescape: a pass-through path that could climb out of the API's base.
func HasDotSegment(path string) bool {
	for _, seg := range strings.Split(path, "/") {
		if unescaped, err := url.PathUnescape(seg); err != nil || unescaped == "." || unescaped == ".." {
			return true
		}
	}
	return false
}

// NewPassThroughRequest builds the request of a pass-through call to u: the call's method (GET
// when unset) and body, with the client's forwarded headers (keepEncoding: Accept-Encoding too,
// for an answer returned unread), and JSON's Content-Type when a body names none. The adapter
// adds its credential.
func NewPassThroughRequest(ctx context.Context, u string, c Call, keepEncoding bool) (*http.Request, error) {
	method := c.Method
	if method == "" {
		method = http.MethodGet
	}
	var body io.Reader = http.NoBody
	if len(c.Body) > 0 {
		body = bytes.NewReader(c.Body)
	}
	req, err := http.NewRequestWithContext(ctx, method, u, body)
	if err != nil {
		return nil, err
	}
	ForwardHeaders(req.Header, c.Header, keepEncoding)
	if len(c.Body) > 0 && req.Header.Get("Content-Type") == "" {
		req.Header.Set("Content-Type", "application/json")
	}
	return req, nil
}
