package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// maxAnswer bounds what the CLI reads of one answer (a page of a thousand log rows fits).
const maxAnswer = 64 << 20

// client calls the admin API at base (ending in /v1) with one API key.
type client struct {
	base      string
	key       string
	userAgent string
	http      *http.Client
	// streaming bounds only the wait for an answer's headers, for answers read as they
	// arrive.
	streaming *http.Client
}

func newClient(base, key, userAgent string, timeout time.Duration) *client {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.ResponseHeaderTimeout = timeout
	return &client{base: strings.TrimRight(base, "/"), key: key, userAgent: userAgent, http: &http.Client{Timeout: timeout},
		streaming: &http.Client{Transport: t}}
}

// APIError is an error answer of the API: its status and the fields of its error body.
type APIError struct {
	Status  int
	Message string
	Type    string
	Code    string
	Param   string
}

func (e *APIError) Error() string {
	var detail []string
	if e.Code != "" {
		detail = append(detail, "code "+e.Code)
	}
	if e.Param != "" {
		detail = append(detail, "param "+e.Param)
	}
	detail = append(detail, fmt.Sprintf("HTTP %d", e.Status))
	return fmt.Sprintf("%s (%s)", e.Message, strings.Join(detail, ", "))
}

// do sends one request and returns the answer's body when its status is 2xx; any other status
// is an *APIError. body, when not nil, is sent as JSON.
func (c *client) do(ctx context.Context, method, path string, query url.Values, body []byte) ([]byte, error) {
	return c.doWith(ctx, method, path, query, body, nil)
}

// doWith is do with headers of the command's beside the CLI's own (a gateway route's
// x-gateway-config, say).
func (c *client) doWith(ctx context.Context, method, path string, query url.Values, body []byte, header http.Header) ([]byte, error) {
	resp, err := c.send(ctx, c.http, method, path, query, body, header)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswer))
	if err != nil {
		return nil, fmt.Errorf("%s %s: reading the answer: %w", method, path, err)
	}
	return raw, nil
}

// stream sends one request whose answer is read as it arrives: --timeout bounds the wait for
// the answer's headers, not the whole of it, which lasts as long as the model writes. The
// caller closes the answer's body.
func (c *client) stream(ctx context.Context, method, path string, body []byte, header http.Header) (*http.Response, error) {
	return c.send(ctx, c.streaming, method, path, nil, body, header)
}

// send sends one request with hc; an answer whose status is not 2xx is read and returned as
// an *APIError.
func (c *client) send(ctx context.Context, hc *http.Client, method, path string, query url.Values, body []byte, header http.Header) (*http.Response, error) {
	u := c.base + path
	if len(query) > 0 {
		u += "?" + query.Encode()
	}
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, u, rd)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", method, u, err)
	}
	for k, v := range header {
		req.Header[k] = v
	}
	if req.Header.Get("Accept") == "" {
		req.Header.Set("Accept", "application/json")
	}
	req.Header.Set("User-Agent", c.userAgent)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.key != "" {
		req.Header.Set("x-gateway-api-key", c.key)
	}
	resp, err := hc.Do(req)
	if err != nil {
		// net/http's errors name the method and URL, which hold no credential: the key
		// travels in a header.
		return nil, err
	}
	if resp.StatusCode >= 200 && resp.StatusCode < 300 {
		return resp, nil
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswer))
	if err != nil {
		return nil, fmt.Errorf("%s %s: reading the answer: %w", method, u, err)
	}
	return nil, c.apiError(resp.StatusCode, raw)
}

// apiError reads an error answer: the API's error shape, or, from something else answering
// (a proxy's page), its status and the start of its text.
func (c *client) apiError(status int, raw []byte) error {
	var body struct {
		Error *struct {
			Message string  `json:"message"`
			Type    string  `json:"type"`
			Code    *string `json:"code"`
			Param   *string `json:"param"`
		} `json:"error"`
	}
	e := &APIError{Status: status}
	if json.Unmarshal(raw, &body) == nil && body.Error != nil {
		e.Message, e.Type = body.Error.Message, body.Error.Type
		if body.Error.Code != nil {
			e.Code = *body.Error.Code
		}
		if body.Error.Param != nil {
			e.Param = *body.Error.Param
		}
	} else {
		text := strings.TrimSpace(string(raw))
		if len(text) > 200 {
			text = text[:200] + "..."
		}
		e.Message = http.StatusText(status)
		if text != "" {
			e.Message += ": " + text
		}
	}
	if status == http.StatusUnauthorized && c.key == "" {
		e.Message += " (no API key given: set --api-key or CAUSEWAY_API_KEY)"
	}
	return e
}

// getJSON is do for a GET, decoded into v.
func (c *client) getJSON(ctx context.Context, path string, query url.Values, v any) error {
	raw, err := c.do(ctx, http.MethodGet, path, query, nil)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return fmt.Errorf("GET %s: the answer is not the JSON expected: %w", path, err)
	}
	return nil
}
