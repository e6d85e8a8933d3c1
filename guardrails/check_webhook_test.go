package guardrails_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/causeway/causeway/gateway/egress"
	"github.com/causeway/causeway/guardrails"
	"github.com/causeway/causeway/guardrails/guardrailstest"
)

const webhookHeaderSecret = "Bearer hook-header-secret-7f3a"

func beforeInput(t *testing.T) guardrails.Input {
	return guardrails.Input{
		Hook:     guardrails.BeforeRequest,
		Endpoint: "chatComplete",
		Provider: "openai",
		Model:    "gpt-4o",
		Metadata: map[string]string{"team": "search"},
		Request: chatRequest(t, map[string]any{
			"model":    "gpt-4o",
			"messages": []any{map[string]any{"role": "user", "content": "hello <there> & you"}},
		}),
		Text:  "hello <there> & you",
		Final: true,
	}
}

func newWebhook(t *testing.T, hook *guardrailstest.Webhook, extra map[string]any) guardrails.Check {
	t.Helper()
	p := map[string]any{"webhookURL": hook.URL + "/guard", "headers": map[string]any{"Authorization": webhookHeaderSecret}}
	for k, v := range extra {
		p[k] = v
	}
	c, err := guardrails.NewWebhookCheck(p, guardedDeps(t))
	require.NoError(t, err)
	return c
}

func TestWebhookPassSendsSignedEvent(t *testing.T) {
	hook := guardrailstest.NewWebhook(t, testSecret)
	c := newWebhook(t, hook, nil)

	v, err := c.Run(context.Background(), beforeInput(t))
	require.NoError(t, err)
	require.True(t, v.Pass)
	require.Nil(t, v.Transformed)
	requireNoSecret(t, v, err, webhookHeaderSecret, string(testSecret))

	calls := hook.Calls()
	require.Len(t, calls, 1)
	call := calls[0]
	require.Equal(t, webhookHeaderSecret, call.Header.Get("Authorization"))
	require.NoError(t, guardrailstest.VerifySignature(testSecret, call.Header.Get(guardrails.SignatureHeader), call.Body, time.Now(), time.Minute))
	require.NotContains(t, string(call.Body), string(testSecret))
	require.NotContains(t, string(call.Body), webhookHeaderSecret)

	var ev map[string]any
	require.NoError(t, json.Unmarshal(call.Body, &ev))
	require.Equal(t, "beforeRequestHook", ev["eventType"])
	require.Equal(t, "chatComplete", ev["requestType"])
	require.Equal(t, "openai", ev["provider"])
	require.Equal(t, map[string]any{"team": "search"}, ev["metadata"])
	req := ev["request"].(map[string]any)
	require.Equal(t, "hello <there> & you", req["text"])
	require.Equal(t, "gpt-4o", req["json"].(map[string]any)["model"])
	require.NotContains(t, req, "headers")
	require.NotContains(t, ev, "response")
	require.Contains(t, string(call.Body), "<there> & you", "bodies are not HTML-escaped")
}

func TestWebhookVerdictDataAndTransformed(t *testing.T) {
	hook := guardrailstest.NewWebhook(t, testSecret)
	c := newWebhook(t, hook, nil)

	t.Run("deny with data", func(t *testing.T) {
		hook.Answer(func(map[string]any) (int, any) {
			return 200, map[string]any{"verdict": false, "data": map[string]any{"reason": "pii"}}
		})
		v, err := c.Run(context.Background(), beforeInput(t))
		require.NoError(t, err)
		require.False(t, v.Pass)
		raw, _ := json.Marshal(v.Data)
		require.JSONEq(t, `{"responseData":{"reason":"pii"},"transformed":false}`, string(raw))
	})

	t.Run("request rewritten on the before hook", func(t *testing.T) {
		hook.Answer(func(map[string]any) (int, any) {
			return 200, map[string]any{"verdict": true, "transformedData": map[string]any{
				"request":  map[string]any{"json": map[string]any{"model": "gpt-4o-mini"}},
				"response": map[string]any{"json": map[string]any{"ignored": true}},
			}}
		})
		v, err := c.Run(context.Background(), beforeInput(t))
		require.NoError(t, err)
		require.True(t, v.Pass)
		require.JSONEq(t, `{"model":"gpt-4o-mini"}`, string(v.Transformed))
	})

	t.Run("answer rewritten on the after hook", func(t *testing.T) {
		hook.Answer(func(ev map[string]any) (int, any) {
			resp := ev["response"].(map[string]any)
			return 200, map[string]any{"verdict": resp["text"] == "the answer", "transformedData": map[string]any{
				"response": map[string]any{"json": map[string]any{"id": "rewritten"}},
			}}
		})
		in := beforeInput(t)
		in.Hook = guardrails.AfterRequest
		in.Response = json.RawMessage(`{"id":"chatcmpl-1"}`)
		in.Text = "the answer"
		v, err := c.Run(context.Background(), in)
		require.NoError(t, err)
		require.True(t, v.Pass)
		require.JSONEq(t, `{"id":"rewritten"}`, string(v.Transformed))
	})
}

func TestWebhookParams(t *testing.T) {
	deps := guardedDeps(t)
	ok := "http://127.0.0.1:9/hook"
	cases := []struct {
		name   string
		params map[string]any
		param  string
	}{
		{"missing URL", map[string]any{}, "webhookURL"},
		{"URL not a string", map[string]any{"webhookURL": 5}, "webhookURL"},
		{"not http", map[string]any{"webhookURL": "ftp://127.0.0.1/x"}, "webhookURL"},
		{"credentials in URL", map[string]any{"webhookURL": "http://u:p@127.0.0.1/x"}, "webhookURL"},
		{"refused host", map[string]any{"webhookURL": "http://127.0.0.2:8080/x"}, "webhookURL"},
		{"metadata host", map[string]any{"webhookURL": "http://169.254.169.254/latest"}, "webhookURL"},
		{"timeout zero", map[string]any{"webhookURL": ok, "timeout": 0}, "timeout"},
		{"timeout too long", map[string]any{"webhookURL": ok, "timeout": 60001}, "timeout"},
		{"timeout fraction", map[string]any{"webhookURL": ok, "timeout": 1.5}, "timeout"},
		{"timeout string", map[string]any{"webhookURL": ok, "timeout": "3000"}, "timeout"},
		{"headers not an object", map[string]any{"webhookURL": ok, "headers": "x"}, "headers"},
		{"header not a string", map[string]any{"webhookURL": ok, "headers": map[string]any{"X-A": 1}}, "headers.X-A"},
		{"header name invalid", map[string]any{"webhookURL": ok, "headers": map[string]any{"bad name": "v"}}, "headers.bad name"},
		{"content type reserved", map[string]any{"webhookURL": ok, "headers": map[string]any{"content-type": "text/plain"}}, "headers.content-type"},
		{"signature reserved", map[string]any{"webhookURL": ok, "headers": map[string]any{"X-Causeway-Signature": "t=1,v1=00"}}, "headers.X-Causeway-Signature"},
		{"header with a line break", map[string]any{"webhookURL": ok, "headers": map[string]any{"X-A": "a\r\nX-B: b"}}, "headers.X-A"},
		{"unknown", map[string]any{"webhookURL": ok, "webhookUrl": ok}, "webhookUrl"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := guardrails.NewWebhookCheck(tc.params, deps)
			requireParamError(t, err, tc.param)
			require.NotContains(t, err.Error(), "a\r\nX-B")
		})
	}

	t.Run("header values never in the message", func(t *testing.T) {
		_, err := guardrails.NewWebhookCheck(map[string]any{"webhookURL": ok, "headers": map[string]any{"X-A": "secret\nvalue"}}, deps)
		requireParamError(t, err, "headers.X-A")
		require.NotContains(t, err.Error(), "secret")
	})

	t.Run("defaults", func(t *testing.T) {
		_, err := guardrails.NewWebhookCheck(map[string]any{"webhookURL": ok, "timeout": nil}, deps)
		require.NoError(t, err)
	})

	t.Run("no secret to sign with", func(t *testing.T) {
		d := deps
		d.Secret = nil
		_, err := guardrails.NewWebhookCheck(map[string]any{"webhookURL": ok}, d)
		require.Error(t, err)
	})
}

func TestWebhookErrors(t *testing.T) {
	hook := guardrailstest.NewWebhook(t, testSecret)
	c := newWebhook(t, hook, nil)
	cases := []struct {
		name   string
		status int
		body   any
	}{
		{"server error", 500, map[string]any{"error": "boom", "echo": webhookHeaderSecret}},
		{"not JSON", 200, guardrailstest.RawBody("<html>ok</html>")},
		{"no verdict", 200, map[string]any{"data": 1}},
		{"verdict not a boolean", 200, map[string]any{"verdict": "true"}},
		{"transformed body not an object", 200, map[string]any{"verdict": true, "transformedData": map[string]any{"request": map[string]any{"json": "x"}}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			hook.Answer(func(map[string]any) (int, any) { return tc.status, tc.body })
			v, err := c.Run(context.Background(), beforeInput(t))
			require.Error(t, err)
			requireNoSecret(t, v, err, webhookHeaderSecret, hook.URL+"/guard")
		})
	}

	t.Run("wrong signing secret refused by the receiver", func(t *testing.T) {
		d := guardedDeps(t)
		d.Secret = []byte("another secret")
		c, err := guardrails.NewWebhookCheck(map[string]any{"webhookURL": hook.URL}, d)
		require.NoError(t, err)
		hook.Answer(nil)
		_, err = c.Run(context.Background(), beforeInput(t))
		require.ErrorContains(t, err, "401")
	})
}

func TestWebhookTimeout(t *testing.T) {
	hook := guardrailstest.NewWebhook(t, testSecret)
	hook.SetDelay(time.Minute)
	c := newWebhook(t, hook, map[string]any{"timeout": 100})

	_, err := runWithin(t, 10*time.Second, c, context.Background(), beforeInput(t))
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.NotContains(t, err.Error(), webhookHeaderSecret)
	require.NotContains(t, err.Error(), hook.URL)

	t.Run("the caller's context ends first", func(t *testing.T) {
		c := newWebhook(t, hook, map[string]any{"timeout": 60000})
		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		defer cancel()
		_, err := runWithin(t, 10*time.Second, c, ctx, beforeInput(t))
		require.ErrorIs(t, err, context.DeadlineExceeded)
	})
}

// A webhook URL the egress guard refuses fails at creation; one that slips past it (here a
// CheckURL that allows everything) is refused by the client's dialer, and nothing reaches it.
func TestWebhookEgressRefusedAtCall(t *testing.T) {
	url, hits := refusedServer(t)
	deps := guardedDeps(t)

	_, err := guardrails.NewWebhookCheck(map[string]any{"webhookURL": url}, deps)
	requireParamError(t, err, "webhookURL")

	deps.CheckURL = lenientCheck
	c, err := guardrails.NewWebhookCheck(map[string]any{"webhookURL": url + "/hook?token=q-secret", "headers": map[string]any{"X-Key": webhookHeaderSecret}}, deps)
	require.NoError(t, err)
	v, err := c.Run(context.Background(), beforeInput(t))
	require.Error(t, err)
	var refused *egress.RefusedError
	require.True(t, errors.As(err, &refused), "error: %v", err)
	require.Zero(t, hits.Load())
	requireNoSecret(t, v, err, webhookHeaderSecret, "q-secret")
}

func TestWebhookRunsOnCancelledContextWithoutCalling(t *testing.T) {
	hook := guardrailstest.NewWebhook(t, testSecret)
	c := newWebhook(t, hook, nil)
	_, err := c.Run(cancelled(), beforeInput(t))
	require.ErrorIs(t, err, context.Canceled)
	require.Empty(t, hook.Calls())
}

// A redirect would carry the admin's headers to another URL: it is an error, not followed.
func TestWebhookDoesNotFollowRedirects(t *testing.T) {
	hook := guardrailstest.NewWebhook(t, testSecret)
	redirector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, hook.URL, http.StatusTemporaryRedirect)
	}))
	t.Cleanup(redirector.Close)
	c, err := guardrails.NewWebhookCheck(map[string]any{"webhookURL": redirector.URL, "headers": map[string]any{"X-Key": webhookHeaderSecret}}, guardedDeps(t))
	require.NoError(t, err)
	_, err = c.Run(context.Background(), beforeInput(t))
	require.ErrorContains(t, err, "307")
	require.Empty(t, hook.Calls())
}

// The signature binds the body, the time and the secret: a receiver's check refuses a body
// changed in transit, a replay past the tolerance and another secret.
func TestWebhookSignatureBindsBodyTimeAndSecret(t *testing.T) {
	hook := guardrailstest.NewWebhook(t, testSecret)
	at := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	deps := guardedDeps(t)
	deps.Now = func() time.Time { return at }
	c, err := guardrails.NewWebhookCheck(map[string]any{"webhookURL": hook.URL}, deps)
	require.NoError(t, err)
	_, err = c.Run(context.Background(), beforeInput(t))
	require.ErrorContains(t, err, "401", "the receiver refuses a signature from the past")

	call := hook.Calls()[0]
	sig := call.Header.Get(guardrails.SignatureHeader)
	require.Regexp(t, `^t=\d+,v1=[0-9a-f]{64}$`, sig)
	require.NoError(t, guardrailstest.VerifySignature(testSecret, sig, call.Body, at.Add(time.Minute), 5*time.Minute))
	tampered := append([]byte(nil), call.Body...)
	tampered[len(tampered)-2] ^= 1
	require.Error(t, guardrailstest.VerifySignature(testSecret, sig, tampered, at, 5*time.Minute))
	require.Error(t, guardrailstest.VerifySignature(testSecret, sig, call.Body, at.Add(10*time.Minute), 5*time.Minute))
	require.Error(t, guardrailstest.VerifySignature([]byte("other"), sig, call.Body, at, 5*time.Minute))
}
