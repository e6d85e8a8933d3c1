package guardrails_test

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/causeway/causeway/gateway/egress"
	"github.com/causeway/causeway/guardrails"
)

var testSecret = []byte("signing-secret-for-tests")

// guardedDeps are the gateway's Deps: an egress guard that allows the loopback address the
// stand-ins listen on (127.0.0.1) and refuses everything else private, 127.0.0.2 included.
func guardedDeps(t *testing.T) guardrails.Deps {
	t.Helper()
	g, err := egress.New([]string{"127.0.0.1"})
	require.NoError(t, err)
	c := g.Client(0)
	t.Cleanup(c.CloseIdleConnections)
	return guardrails.Deps{Client: c, CheckURL: g.CheckURL, Secret: testSecret, Now: time.Now}
}

// lenientCheck lets every URL through at creation, so that the call's own guard is tested.
func lenientCheck(string) error { return nil }

// refusedServer listens on 127.0.0.2, which guardedDeps refuse, and counts what reaches it.
func refusedServer(t *testing.T) (string, *atomic.Int64) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.2:0")
	if err != nil {
		t.Skipf("cannot listen on 127.0.0.2: %v", err)
	}
	var hits atomic.Int64
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"verdict":true,"allow":true,"violations_detected":false}`))
	}))
	_ = srv.Listener.Close()
	srv.Listener = ln
	srv.Start()
	t.Cleanup(srv.Close)
	return srv.URL, &hits
}

// requireParamError asserts err is a *ParamError naming param.
func requireParamError(t *testing.T, err error, param string) {
	t.Helper()
	var pe *guardrails.ParamError
	require.ErrorAs(t, err, &pe)
	require.Equal(t, param, pe.Param, "message: %s", pe.Message)
	require.NotEmpty(t, pe.Message)
}

// requireNoSecret asserts none of secrets appears in err or in the verdict as JSON.
func requireNoSecret(t *testing.T, v guardrails.Verdict, err error, secrets ...string) {
	t.Helper()
	raw, jerr := json.Marshal(v)
	require.NoError(t, jerr)
	for _, s := range secrets {
		require.NotContains(t, string(raw), s)
		if err != nil {
			require.NotContains(t, err.Error(), s)
		}
	}
}

// runWithin runs c and fails if it does not return within bound: a check must give up when
// its timeout or ctx ends, not when the stand-in does.
func runWithin(t *testing.T, bound time.Duration, c guardrails.Check, ctx context.Context, in guardrails.Input) (guardrails.Verdict, error) {
	t.Helper()
	type result struct {
		v   guardrails.Verdict
		err error
	}
	done := make(chan result, 1)
	go func() {
		v, err := c.Run(ctx, in)
		done <- result{v, err}
	}()
	select {
	case r := <-done:
		return r.v, r.err
	case <-time.After(bound):
		t.Fatalf("did not return within %v", bound)
		return guardrails.Verdict{}, nil
	}
}

// chatRequest encodes v as a client would, without escaping <, > and &.
func chatRequest(t *testing.T, v any) json.RawMessage {
	t.Helper()
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	require.NoError(t, enc.Encode(v))
	return json.RawMessage(strings.TrimSpace(b.String()))
}

type recordingRegistry struct{ ids []string }

func (r *recordingRegistry) Add(id string, f guardrails.Factory) {
	if f != nil {
		r.ids = append(r.ids, id)
	}
}

func TestAddNetworkChecks(t *testing.T) {
	var r recordingRegistry
	guardrails.AddNetworkChecks(&r)
	require.Equal(t, []string{"default.externalPolicy", "default.inlineImage", "default.jwt", "default.webhook", "lasso.classify"}, r.ids)
}

// Every network check refuses Deps it cannot work without, with an error that is not a
// parameter error (it is the gateway's fault, not the admin's).
func TestNetworkChecksRefuseMissingDeps(t *testing.T) {
	factories := map[string]guardrails.Factory{
		"webhook": guardrails.NewWebhookCheck,
		"policy":  guardrails.NewExternalPolicyCheck,
		"lasso":   guardrails.NewLassoClassifyCheck,
		"image":   guardrails.NewInlineImageCheck,
		"jwt":     guardrails.NewJWTCheck,
	}
	for name, f := range factories {
		t.Run(name, func(t *testing.T) {
			_, err := f(map[string]any{}, guardrails.Deps{})
			require.Error(t, err)
			var pe *guardrails.ParamError
			require.False(t, errors.As(err, &pe))
		})
	}
}

// Every network check accepts failOnError, which the runner reads, and refuses it when it is
// not a boolean.
func TestNetworkChecksFailOnErrorParam(t *testing.T) {
	deps := guardedDeps(t)
	base := map[string]map[string]any{
		"webhook": {"webhookURL": "http://127.0.0.1:1/hook"},
		"policy":  {"policyId": "p", "url": "http://127.0.0.1:1/decide"},
		"lasso":   {"credentials": map[string]any{"apiKey": "k"}},
		"image":   {"providers": []any{"bedrock"}},
		"jwt":     {"jwksUri": "http://127.0.0.1:1/jwks"},
	}
	factories := map[string]guardrails.Factory{
		"webhook": guardrails.NewWebhookCheck,
		"policy":  guardrails.NewExternalPolicyCheck,
		"lasso":   guardrails.NewLassoClassifyCheck,
		"image":   guardrails.NewInlineImageCheck,
		"jwt":     guardrails.NewJWTCheck,
	}
	for name, f := range factories {
		t.Run(name, func(t *testing.T) {
			p := map[string]any{}
			for k, v := range base[name] {
				p[k] = v
			}
			_, err := f(p, deps)
			require.NoError(t, err)
			p["failOnError"] = true
			_, err = f(p, deps)
			require.NoError(t, err)
			p["failOnError"] = "yes"
			_, err = f(p, deps)
			requireParamError(t, err, "failOnError")
			delete(p, "failOnError")
			p["nope"] = 1
			_, err = f(p, deps)
			requireParamError(t, err, "nope")
		})
	}
}

// blockingServer answers only when its caller gives up or the test ends.
func blockingServer(t *testing.T) string {
	t.Helper()
	stop := make(chan struct{})
	var once sync.Once
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-stop:
		}
	}))
	t.Cleanup(func() { once.Do(func() { close(stop) }); srv.Close() })
	return srv.URL
}

func cancelled() context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	return ctx
}
