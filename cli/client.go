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
}

func newClient(base, key, userAgent string, timeout time.Duration) *client {
	return &client{base: strings.TrimRight(base, "/"), key: key, userAgent: userAgent, http: &http.Client{Timeout: timeout}}
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
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", c.userAgent)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.key != "" {
		req.Header.Set("x-gateway-api-key", c.key)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		// net/http's errors name the method and URL, which hold no credential: the key
		// travels in a header.
		return nil, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswer))
	if err != nil {
		return nil, fmt.Errorf("%s %s: reading the answer: %w", method, u, err)
	}
	if resp.StatusCode >= 200 && resp.StatusCode < 300 {
		return raw, nil
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
