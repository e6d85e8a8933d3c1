package httpapi

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestHealthReportsEachBackend(t *testing.T) {
	up := func(context.Context) error { return nil }
	refused := func(context.Context) error {
		return errors.New("dial tcp 10.0.0.5:5432: connection refused (user=admin)")
	}
	hangs := func(ctx context.Context) error { <-ctx.Done(); return ctx.Err() }

	cases := []struct {
		name   string
		checks []Check
		status string
		down   map[string]string
	}{
		{"all up", []Check{{Name: "eventstore", Backend: "sqlite", Ping: up}, {Name: "readmodels", Backend: "memory", Ping: up}}, "ok", nil},
		{"one refused", []Check{{Name: "eventstore", Backend: "postgres", Ping: up}, {Name: "readmodels", Backend: "postgres", Ping: refused}}, "degraded",
			map[string]string{"readmodels": "unreachable"}},
		{"one hangs", []Check{{Name: "eventstore", Backend: "esdb", Ping: hangs}, {Name: "analytics", Backend: "clickhouse", Ping: up}}, "degraded",
			map[string]string{"eventstore": "timed out"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := &Health{Checks: tc.checks, Timeout: 100 * time.Millisecond, Version: "v"}
			rec := httptest.NewRecorder()
			start := time.Now()
			h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/v1/health", nil))
			assert.Less(t, time.Since(start), 2*time.Second, "a hanging backend is bounded by the timeout")
			require.Equal(t, http.StatusOK, rec.Code, "health answers 200 even when degraded")
			var ans healthAnswer
			require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &ans))
			assert.Equal(t, tc.status, ans.Status)
			require.Len(t, ans.Checks, len(tc.checks))
			for _, c := range tc.checks {
				got := ans.Checks[c.Name]
				assert.Equal(t, c.Backend, got.Backend)
				if reason, isDown := tc.down[c.Name]; isDown {
					assert.Equal(t, "down", got.Status)
					assert.Equal(t, reason, got.Error)
				} else {
					assert.Equal(t, "up", got.Status)
				}
			}
			assert.NotContains(t, rec.Body.String(), "10.0.0.5", "driver messages are not returned")
			assert.NotContains(t, rec.Body.String(), "admin")
		})
	}
}
