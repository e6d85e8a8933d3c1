package guardrails_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/causeway/causeway/gateway/egress"
	"github.com/causeway/causeway/guardrails"
	"github.com/causeway/causeway/guardrails/guardrailstest"
)

const policyHeaderSecret = "policy-service-key-91c2"

func newPolicyCheck(t *testing.T, svc *guardrailstest.PolicyService, extra map[string]any) guardrails.Check {
	t.Helper()
	p := map[string]any{"policyId": "no-secrets", "url": svc.URL + "/v1/decide", "headers": map[string]any{"X-Api-Key": policyHeaderSecret}}
	for k, v := range extra {
		p[k] = v
	}
	c, err := guardrails.NewExternalPolicyCheck(p, guardedDeps(t))
	require.NoError(t, err)
	return c
}

func TestExternalPolicyDecides(t *testing.T) {
	svc := guardrailstest.NewPolicyService(t, testSecret)
	svc.SetPolicy("no-secrets", func(r guardrailstest.PolicyRequest) (bool, string) {
		if strings.Contains(r.Text, "password") {
			return false, "the text holds a password"
		}
		return true, ""
	})
	c := newPolicyCheck(t, svc, nil)

	t.Run("allowed", func(t *testing.T) {
		v, err := c.Run(context.Background(), beforeInput(t))
		require.NoError(t, err)
		require.True(t, v.Pass)
		require.Equal(t, "policy no-secrets allowed", v.Explanation)
		requireNoSecret(t, v, err, policyHeaderSecret)
	})

	t.Run("denied with the service's reason", func(t *testing.T) {
		in := beforeInput(t)
		in.Text = "my password is hunter2"
		v, err := c.Run(context.Background(), in)
		require.NoError(t, err)
		require.False(t, v.Pass)
		require.Equal(t, "the text holds a password", v.Explanation)
		raw, _ := json.Marshal(v.Data)
		require.JSONEq(t, `{"policyId":"no-secrets","allow":false,"reason":"the text holds a password"}`, string(raw))
	})

	t.Run("after hook sends the answer", func(t *testing.T) {
		in := beforeInput(t)
		in.Hook = guardrails.AfterRequest
		in.Response = json.RawMessage(`{"id":"chatcmpl-1"}`)
		in.Text = "fine"
		v, err := c.Run(context.Background(), in)
		require.NoError(t, err)
		require.True(t, v.Pass)
	})

	calls := svc.Calls()
	require.Len(t, calls, 3)
	for _, call := range calls {
		require.Equal(t, policyHeaderSecret, call.Header.Get("X-Api-Key"))
		require.NoError(t, guardrailstest.VerifySignature(testSecret, call.Header.Get(guardrails.SignatureHeader), call.Body, time.Now(), time.Minute))
	}
	var last guardrailstest.PolicyRequest
	require.NoError(t, json.Unmarshal(calls[2].Body, &last))
	require.Equal(t, "no-secrets", last.PolicyID)
	require.Equal(t, "afterRequestHook", last.Hook)
	require.Equal(t, "chatComplete", last.Endpoint)
	require.Equal(t, "openai", last.Provider)
	require.JSONEq(t, `{"id":"chatcmpl-1"}`, string(last.Response))
	require.Contains(t, string(last.Request), "gpt-4o")
	var first map[string]any
	require.NoError(t, json.Unmarshal(calls[0].Body, &first))
	require.NotContains(t, first, "response")
}

func TestExternalPolicyParams(t *testing.T) {
	deps := guardedDeps(t)
	u := "http://127.0.0.1:9/decide"
	cases := []struct {
		name   string
		params map[string]any
		param  string
	}{
		{"policy id missing", map[string]any{"url": u}, "policyId"},
		{"policy id empty", map[string]any{"url": u, "policyId": ""}, "policyId"},
		{"policy id too long", map[string]any{"url": u, "policyId": strings.Repeat("p", 257)}, "policyId"},
		{"url missing", map[string]any{"policyId": "p"}, "url"},
		{"url refused", map[string]any{"policyId": "p", "url": "http://10.0.0.8/decide"}, "url"},
		{"timeout zero", map[string]any{"policyId": "p", "url": u, "timeout": 0}, "timeout"},
		{"timeout too long", map[string]any{"policyId": "p", "url": u, "timeout": 60001}, "timeout"},
		{"headers reserved", map[string]any{"policyId": "p", "url": u, "headers": map[string]any{"Host": "x"}}, "headers.Host"},
		{"unknown", map[string]any{"policyId": "p", "url": u, "policy": "p"}, "policy"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := guardrails.NewExternalPolicyCheck(tc.params, deps)
			requireParamError(t, err, tc.param)
		})
	}
}

func TestExternalPolicyErrors(t *testing.T) {
	svc := guardrailstest.NewPolicyService(t, testSecret)

	t.Run("unknown policy", func(t *testing.T) {
		c := newPolicyCheck(t, svc, map[string]any{"policyId": "missing"})
		v, err := c.Run(context.Background(), beforeInput(t))
		require.ErrorContains(t, err, "404")
		requireNoSecret(t, v, err, policyHeaderSecret, svc.URL)
	})

	t.Run("timeout", func(t *testing.T) {
		svc.SetPolicy("slow", func(guardrailstest.PolicyRequest) (bool, string) { return true, "" })
		svc.SetDelay(time.Minute)
		defer svc.SetDelay(0)
		c := newPolicyCheck(t, svc, map[string]any{"policyId": "slow", "timeout": 100})
		_, err := runWithin(t, 10*time.Second, c, context.Background(), beforeInput(t))
		require.ErrorIs(t, err, context.DeadlineExceeded)
	})

	t.Run("answer without allow", func(t *testing.T) {
		hook := guardrailstest.NewWebhook(t, testSecret) // answers {"verdict": true}: no allow
		c, err := guardrails.NewExternalPolicyCheck(map[string]any{"policyId": "p", "url": hook.URL}, guardedDeps(t))
		require.NoError(t, err)
		_, err = c.Run(context.Background(), beforeInput(t))
		require.ErrorContains(t, err, "allow")
	})

	t.Run("refused at call", func(t *testing.T) {
		url, hits := refusedServer(t)
		deps := guardedDeps(t)
		deps.CheckURL = lenientCheck
		c, err := guardrails.NewExternalPolicyCheck(map[string]any{"policyId": "p", "url": url}, deps)
		require.NoError(t, err)
		_, err = c.Run(context.Background(), beforeInput(t))
		var refused *egress.RefusedError
		require.True(t, errors.As(err, &refused), "error: %v", err)
		require.Zero(t, hits.Load())
	})
}
