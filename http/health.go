package httpapi

import (
	"context"
	"net/http"
	"sync"
	"time"
)

// Check is one backend that health reports on.
type Check struct {
	Name    string // its role: eventstore, readmodels, analytics
	Backend string // what serves the role: sqlite, postgres, esdb, memory, clickhouse
	Ping    func(ctx context.Context) error
	// ShowError puts the failure's own message in the answer: for checks whose errors name
	// nothing secret (a stopped projection and its event), never for drivers' errors.
	ShowError bool
}

// Health answers GET /v1/health with the status of each backend. It answers 200 whenever the
// process can answer at all: a backend that is down makes the status "degraded" (as the
// specification's read-only database mode does), so load balancers keep routing gateway
// traffic, which needs no database, while operators see what is wrong.
type Health struct {
	Checks  []Check
	Version string
	Timeout time.Duration // per check; default 2 s
	Started time.Time
	// Stats are counters reported beside the checks, by name (the log pipeline's).
	Stats map[string]func() any
}

type healthAnswer struct {
	Status        string                 `json:"status"`
	Version       string                 `json:"version,omitempty"`
	UptimeSeconds int64                  `json:"uptime_seconds"`
	Checks        map[string]checkAnswer `json:"checks"`
	Stats         map[string]any         `json:"stats,omitempty"`
}

type checkAnswer struct {
	Status    string  `json:"status"`
	Backend   string  `json:"backend"`
	LatencyMS float64 `json:"latency_ms"`
	Error     string  `json:"error,omitempty"`
}

// Report runs every check at once and returns the answer.
func (h *Health) Report(ctx context.Context) healthAnswer {
	timeout := h.Timeout
	if timeout <= 0 {
		timeout = 2 * time.Second
	}
	ans := healthAnswer{Status: "ok", Version: h.Version, Checks: make(map[string]checkAnswer, len(h.Checks))}
	if !h.Started.IsZero() {
		ans.UptimeSeconds = int64(time.Since(h.Started).Seconds())
	}
	var (
		mu sync.Mutex
		wg sync.WaitGroup
	)
	for _, c := range h.Checks {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cctx, cancel := context.WithTimeout(ctx, timeout)
			defer cancel()
			start := time.Now()
			err := c.Ping(cctx)
			a := checkAnswer{Status: "up", Backend: c.Backend, LatencyMS: float64(time.Since(start).Microseconds()) / 1000}
			if err != nil {
				// The kind of failure only: a driver's message may carry a host or user name.
				a.Status, a.Error = "down", "unreachable"
				if cctx.Err() != nil {
					a.Error = "timed out"
				}
				if c.ShowError {
					a.Error = err.Error()
				}
			}
			mu.Lock()
			ans.Checks[c.Name] = a
			if err != nil {
				ans.Status = "degraded"
			}
			mu.Unlock()
		}()
	}
	wg.Wait()
	if len(h.Stats) > 0 {
		ans.Stats = make(map[string]any, len(h.Stats))
		for name, f := range h.Stats {
			ans.Stats[name] = f()
		}
	}
	return ans
}

func (h *Health) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "no-store")
	WriteJSON(w, http.StatusOK, h.Report(r.Context()))
}
