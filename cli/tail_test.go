package cli

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// logStore stands in for the logs route: rows newest first, from time_of_generation_min, in
// pages of at most two (fewer than the CLI asks for, as a server may answer).
type logStore struct {
	mu    sync.Mutex
	rows  []logRow
	mins  []time.Time
	fail  []int // statuses to answer, one per request, before answering rows again
	polls int
}

type logRow struct {
	ID        string    `json:"_id"`
	Object    string    `json:"object"`
	CreatedAt time.Time `json:"created_at"`
	Metrics   struct {
		Status int    `json:"response_status_code"`
		Model  string `json:"ai_model"`
	} `json:"metrics"`
}

func (s *logStore) add(id string, at time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := logRow{ID: id, Object: "log", CreatedAt: at}
	r.Metrics.Status, r.Metrics.Model = 200, "model-"+id
	s.rows = append(s.rows, r)
}

func (s *logStore) serve(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	q := r.URL.Query()
	if q.Get("current_page") == "0" {
		s.polls++
	}
	if len(s.fail) > 0 {
		status := s.fail[0]
		s.fail = s.fail[1:]
		w.WriteHeader(status)
		fmt.Fprintf(w, `{"error":{"message":"scripted %d","type":"api_error","param":null,"code":"scripted"}}`, status)
		return
	}
	from, err := time.Parse(time.RFC3339Nano, q.Get("time_of_generation_min"))
	if err != nil {
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	if q.Get("current_page") == "0" {
		s.mins = append(s.mins, from)
	}
	var in []logRow
	for _, row := range s.rows {
		if !row.CreatedAt.Before(from) {
			in = append(in, row)
		}
	}
	slices.SortFunc(in, func(a, b logRow) int { return b.CreatedAt.Compare(a.CreatedAt) })
	page, _ := strconv.Atoi(q.Get("current_page"))
	start, end := min(page*2, len(in)), min(page*2+2, len(in))
	raw, _ := json.Marshal(map[string]any{"object": "list", "total": len(in), "current_page": page, "page_size": 2, "data": in[start:end]})
	_, _ = w.Write(raw)
}

func (s *logStore) pollCount() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.polls
}

func TestTailPrintsEachRowOnceOldestFirstInAMovingWindow(t *testing.T) {
	a := newAPI(t)
	store := &logStore{}
	a.handle("GET /logs", store.serve)
	now := time.Now().UTC()
	store.add("too-old", now.Add(-10*time.Minute)) // before the default window of 5 minutes
	store.add("r1", now.Add(-3*time.Minute))
	store.add("r2", now.Add(-150*time.Second))
	store.add("r3", now.Add(-2*time.Minute))

	// After the first poll, two more rows, one older than the newest seen (stored late, within
	// the overlap), and one stored later than the overlap allows.
	go func() {
		for store.pollCount() < 2 {
			time.Sleep(5 * time.Millisecond)
		}
		store.add("r5", now.Add(-time.Minute))
		store.add("r4", now.Add(-130*time.Second))
		store.add("lost", now.Add(-4*time.Minute))
	}()
	r := run(t, envFor(a), "", "logs", "tail", "--count", "5", "--interval", "10ms", "--overlap", "1m", "-o", "json")
	require.Equal(t, 0, r.code, r.stderr)
	var ids []string
	for _, line := range strings.Split(strings.TrimRight(r.stdout, "\n"), "\n") {
		var row map[string]any
		require.NoError(t, json.Unmarshal([]byte(line), &row), "one JSON object a line: %q", line)
		assert.NotContains(t, line, " ", "compact JSON")
		ids = append(ids, row["_id"].(string))
	}
	assert.Equal(t, []string{"r1", "r2", "r3", "r4", "r5"}, ids, "each row once, oldest first within a poll")

	store.mu.Lock()
	mins := slices.Clone(store.mins)
	store.mu.Unlock()
	require.GreaterOrEqual(t, len(mins), 2)
	assert.WithinDuration(t, now.Add(-tailSince), mins[0], 5*time.Second, "the first window starts --since (default 5m) ago")
	for _, m := range mins[1:] {
		assert.Equal(t, now.Add(-3*time.Minute), m.UTC(), "then at the newest row seen (r3) less --overlap")
	}

	// Without --follow or --count: the window's rows, once, oldest first, under a heading; the
	// row the moving window missed is in it.
	r = run(t, envFor(a), "", "logs", "tail")
	require.Equal(t, 0, r.code, r.stderr)
	lines := strings.Split(strings.TrimRight(r.stdout, "\n"), "\n")
	require.Len(t, lines, 7, r.stdout)
	assert.Equal(t, []string{"TIME", "STATUS", "MODEL"}, strings.Fields(lines[0])[:3])
	var order []string
	for _, l := range lines[1:] {
		f := strings.Fields(l)
		id := f[len(f)-1]
		order = append(order, id)
		assert.Equal(t, "model-"+id, f[2], "a table line's columns")
	}
	assert.Equal(t, []string{"lost", "r1", "r2", "r4", "r3", "r5"}, order)
}

func TestTailStopsOnARefusalAndRetriesAnOutageWhileFollowing(t *testing.T) {
	a := newAPI(t)
	store := &logStore{fail: []int{http.StatusForbidden}}
	a.handle("GET /logs", store.serve)
	r := run(t, envFor(a), "", "logs", "tail", "--follow", "--interval", "10ms")
	assert.Equal(t, 1, r.code, "a refusal does not go away by asking again")
	assert.Contains(t, r.stderr, "scripted 403")

	store = &logStore{fail: []int{http.StatusServiceUnavailable, http.StatusBadGateway}}
	a.handle("GET /logs", store.serve)
	store.add("r1", time.Now().Add(-time.Minute))
	r = run(t, envFor(a), "", "logs", "tail", "--count", "1", "--interval", "10ms", "-o", "json")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Equal(t, 2, strings.Count(r.stderr, "trying again"), r.stderr)
	assert.Contains(t, r.stdout, `"_id":"r1"`)

	store = &logStore{fail: []int{http.StatusServiceUnavailable}}
	a.handle("GET /logs", store.serve)
	r = run(t, envFor(a), "", "logs", "tail")
	assert.Equal(t, 1, r.code, "a tail that does not follow fails at once")
}
