// Package analyticstest is the contract every analytics.Store is held to: the same generated
// rows are loaded into the store once, and every answer (groups, graphs, summaries, log pages,
// single logs, scans) is compared with a plain Go computation over those rows.
//
// Floats compare within a relative 1e-6: the engines add in their own order. Percentiles
// compare exactly: both engines are exact (ClickHouse's quantileExact, not the sampling
// quantile; SQLite an aggregate of the same definition), the value at 0-based position
// floor(p·n) of the latencies in ascending order, which the reference computes too, so the
// approximation bound is zero.
//
// It imports package analytics (the contract and its types), domain/ and testify; never a
// store nor a driver (each store's tests open their own), and never gateway/, commands/,
// projections/ or http/.
package analyticstest

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/causeway/causeway/analytics"
)

// NumRows is how many rows the suite loads.
const NumRows = 10_000

// Org is the organisation most rows belong to; the others prove the organisation filter.
const Org = "org-1"

// DupOrg's rows are inserted three times, in different batches; every query must count them
// once.
const DupOrg = "org-dup"

// OddKey is a metadata key with the characters a query could trip on: a dot, a quote, a
// backslash, a space. Some rows hold it with an empty value, which is not the same as not
// holding it.
const OddKey = `team "a.b" \x`

// Start is the first generated timestamp; rows spread over 30 days from it.
var Start = time.Date(2026, 10, 1, 0, 0, 0, 0, time.UTC)

// tie is a run of rows that share one started_at, so that ordering by (started_at, id) and
// paging through it depend on the id.
const tieFrom, tieTo = 5000, 5300

// Rows generates the suite's rows, the same ones for every call.
func Rows() []analytics.LogRecord {
	r := rand.New(rand.NewPCG(6, 6))
	pick := func(xs ...string) string { return xs[r.IntN(len(xs))] }
	providers := []struct{ provider, service string }{
		{"@openai-prod", "openai"}, {"@anthropic", "anthropic"}, {"@azure", "azure-openai"}, {"@groq", "groq"},
	}
	codes := []int{200, 200, 200, 200, 201, 400, 401, 429, 500, 502}
	rows := make([]analytics.LogRecord, NumRows)
	for i := range rows {
		p := providers[r.IntN(len(providers))]
		prompt := r.IntN(40)
		total := r.IntN(4000)
		in := r.IntN(total + 1)
		start := Start.Add(time.Duration(r.Int64N(int64(30*24*time.Hour/time.Millisecond))) * time.Millisecond)
		if i > tieFrom && i < tieTo {
			start = rows[tieFrom].StartedAt
		}
		latency := float64(r.IntN(30_000)) / 10
		meta := map[string]string{}
		if r.IntN(4) > 0 {
			meta["env"] = pick("prod", "dev", "staging")
		}
		if r.IntN(2) == 0 {
			meta[analytics.UserMetadataKey] = "u" + strconv.Itoa(r.IntN(7))
		}
		if r.IntN(3) == 0 {
			meta[OddKey] = pick("red", "blue", "")
		}
		row := analytics.LogRecord{
			ID:               fmt.Sprintf("req-%05d", i),
			TraceID:          fmt.Sprintf("trace-%04d", i/3),
			SpanID:           fmt.Sprintf("span-%04d", i%1500),
			OrganisationID:   pick(Org, Org, Org, Org, "org-2", "org-3"),
			WorkspaceID:      pick("ws-a", "ws-b", "ws-c", "ws-d"),
			APIKeyID:         pick("key-1", "key-2", "key-3", "key-4", "key-5", "key-6", "key-7"),
			Provider:         p.provider,
			AIService:        p.service,
			Model:            pick("gpt-4o", "gpt-4o-mini", "claude-sonnet", "claude-haiku", "llama-70b", "o3", "embed-3"),
			ConfigID:         pick("", "cfg-1", "cfg-2", "cfg-3"),
			Endpoint:         pick("chatComplete", "complete", "embed"),
			Method:           "POST",
			Path:             "/v1/chat/completions",
			StatusCode:       codes[r.IntN(len(codes))],
			PromptTokens:     in,
			CompletionTokens: total - in,
			TotalTokens:      total,
			CachedTokens:     r.IntN(in + 1),
			ReasoningTokens:  r.IntN(total - in + 1),
			Cost:             float64(r.IntN(1_000_000)) / 1e5,
			LatencyMS:        latency,
			CacheStatus: pick(analytics.CacheHit, analytics.CacheSemanticHit, analytics.CacheMiss, analytics.CacheMiss,
				analytics.CacheDisabled),
			RetryCount: r.IntN(3),
			LogFormat:  "v1",
			StartedAt:  start,
			// Sub-millisecond on purpose: the stores keep milliseconds.
			EndedAt: start.Add(time.Duration(latency * float64(time.Millisecond))),
		}
		if p.service == "anthropic" && i%2 == 0 {
			// Cache writes as Anthropic reports them: part of the prompt, beside the reads. Set
			// without drawing from r, so that the other columns stay what they were.
			row.CacheWriteTokens = (in - row.CachedTokens) / 2
		}
		// What a hit saved, and forced refreshes among the misses, set without drawing from r.
		// The savings are multiples of 1/256 and 1/8, which add up exactly in any order, so
		// their sums compare exactly.
		switch row.CacheStatus {
		case analytics.CacheHit, analytics.CacheSemanticHit:
			row.CacheSavedCost = float64(i%64+1) / 256
			row.CacheSavedMS = float64(i%2000) / 8
		case analytics.CacheMiss:
			if i%3 == 0 {
				row.CacheStatus = analytics.CacheRefresh
			}
		}
		if prompt < 5 {
			// The version and label that served, set without drawing from r.
			row.PromptID, row.PromptVersion = "prompt-"+strconv.Itoa(prompt), 1+i%3
			if i%2 == 0 {
				row.PromptLabel = "production"
			}
		}
		if len(meta) > 0 {
			row.Metadata = meta
		}
		if i%4 == 0 {
			row.Stream = true
			row.TTFTMS = latency / 4
		}
		if i%5 == 0 {
			row.ParentSpanID = fmt.Sprintf("span-%04d", (i+7)%1500)
			row.SpanName = pick("llm", "retrieval")
		}
		if i%7 == 0 {
			row.FallbackTarget = "targets[1]"
			row.Target = pick("@openai-prod", "@groq")
		}
		if row.StatusCode >= 400 {
			row.Error = "upstream said " + strconv.Itoa(row.StatusCode) + ` "quoted" ü`
		}
		if i%3 == 0 {
			req, _ := json.Marshal(map[string]any{"model": row.Model, "messages": []map[string]string{
				{"role": "user", "content": "hello ü \" \\ " + strconv.Itoa(i)}}})
			row.RequestBody = req
			row.ResponseBody = json.RawMessage(`{"id":"` + row.ID + `","choices":[]}`)
		}
		switch {
		case i%1000 == 13:
			// A row stored before bodies had an encoding: the bytes as they came, not UTF-8.
			// It reads back as the base64 of those bytes (see stored).
			row.RequestBody = json.RawMessage("{\"content\":\"caf\xe9 " + strconv.Itoa(i) + "\"}")
			row.ResponseBody = json.RawMessage("{\"ok\":\"\xed\xa0\x80\"}") // a lone surrogate, in UTF-8's spelling
		case i%9 == 3:
			// A body whose bytes were not valid UTF-8, stored as the gateway stores it: a JSON
			// string of its base64, marked so.
			row.RequestBody, row.RequestBodyEncoding = base64Body([]byte("{\"content\":\"\xff\xfe "+strconv.Itoa(i)+"\"}")), "base64"
		case i%9 == 6:
			row.ResponseBody, row.ResponseBodyEncoding = base64Body([]byte{0xc3, 0x28, byte(i)}), "base64"
		}
		if i%1000 == 7 {
			row.EndedAt = time.Time{}
		}
		switch i % 7 {
		case 2: // refused by a policy
			row.Provenance = &analytics.Provenance{RefusedBy: &analytics.Decider{Kind: "rate_limit_policy", ID: "p-" + strconv.Itoa(i%5), Version: uint64(i%3 + 1), Limit: 10}}
		case 4: // charged to two budgets, routed by a saved config
			row.Provenance = &analytics.Provenance{
				Charged: []analytics.Charge{{Decider: analytics.Decider{Kind: "api_key", ID: "k", Version: 2, Limit: 5, Used: 1.5}, Amount: 0.25},
					{Decider: analytics.Decider{Kind: "usage_limit_policy", ID: "u", Sub: "metadata._user:ann", Version: 1, Limit: 3}, Amount: 0.25}},
				Config: &analytics.Decider{Kind: "config", ID: "c", VersionID: "v-" + strconv.Itoa(i%4)}}
		}
		rows[i] = row
	}
	return rows
}

// base64Body is b as a body that is not valid UTF-8 is stored: a JSON string of its base64.
func base64Body(b []byte) json.RawMessage {
	raw, _ := json.Marshal(base64.StdEncoding.EncodeToString(b))
	return raw
}

// dupRows are DupOrg's rows: copies of some generated rows under ids of their own.
func dupRows(rows []analytics.LogRecord) []analytics.LogRecord {
	var out []analytics.LogRecord
	for i := 0; i < len(rows) && len(out) < 60; i += 151 {
		r := rows[i]
		r.ID = "dup-" + r.ID
		r.OrganisationID = DupOrg
		out = append(out, r)
	}
	return out
}

// CacheOrg's rows are cacheRows: a few of known cache savings, whose figures the suite states
// as numbers rather than computing them.
const CacheOrg = "org-cache"

// cacheRows are CacheOrg's rows: on Start's first day a simple hit, a semantic hit and a miss;
// none on the second; on the third a simple hit, a semantic hit, a forced refresh and a row
// with the cache off. Models gpt and claude split them for the groups.
func cacheRows() []analytics.LogRecord {
	row := func(id string, at time.Duration, model, status string, cost, latency, savedCost, savedMS float64) analytics.LogRecord {
		return analytics.LogRecord{ID: "cache-" + id, TraceID: "trace-cache-" + id, OrganisationID: CacheOrg,
			WorkspaceID: "ws-a", Model: model, Endpoint: "chatComplete", Method: "POST", Path: "/v1/chat/completions",
			StatusCode: 200, Cost: cost, LatencyMS: latency, CacheStatus: status, CacheSavedCost: savedCost,
			CacheSavedMS: savedMS, LogFormat: "v1", StartedAt: Start.Add(at), EndedAt: Start.Add(at + time.Second)}
	}
	return []analytics.LogRecord{
		row("1", 1*time.Hour, "gpt", analytics.CacheHit, 0, 20, 0.5, 300),
		row("2", 2*time.Hour, "gpt", analytics.CacheSemanticHit, 0, 40, 0.25, 150),
		row("3", 3*time.Hour, "gpt", analytics.CacheMiss, 0.75, 400, 0, 0),
		row("4", 2*day+1*time.Hour, "claude", analytics.CacheHit, 0, 10, 1.25, 500),
		row("5", 2*day+2*time.Hour, "claude", analytics.CacheRefresh, 1, 900, 0, 0),
		row("6", 2*day+3*time.Hour, "claude", analytics.CacheSemanticHit, 0, 30, 0.125, 60),
		row("7", 2*day+4*time.Hour, "claude", analytics.CacheDisabled, 0.5, 200, 0, 0),
	}
}

// suite is the loaded store and the rows it holds, each once.
type suite struct {
	store analytics.Store
	rows  []analytics.LogRecord
}

// Run opens a store, loads the rows into it once (some batches twice, as a retried insert
// does), and checks its answers in parallel subtests.
func Run(t *testing.T, open func(t *testing.T) analytics.Store) {
	store := open(t)
	ctx := context.Background()
	rows := Rows()
	const batch = 1000
	for i := 0; i < len(rows); i += batch {
		require.NoError(t, store.Insert(ctx, rows[i:i+batch]))
	}
	// A redelivered batch, and one straddling two batches: each row must still count once.
	require.NoError(t, store.Insert(ctx, rows[3*batch:4*batch]))
	require.NoError(t, store.Insert(ctx, rows[batch/2:batch+batch/2]))
	dups := dupRows(rows)
	require.NoError(t, store.Insert(ctx, dups))
	require.NoError(t, store.Insert(ctx, dups))
	require.NoError(t, store.Insert(ctx, append(append([]analytics.LogRecord{}, dups[10:20]...), rows[0:5]...)))
	cache := cacheRows()
	require.NoError(t, store.Insert(ctx, cache))

	s := suite{store: store, rows: append(append(rows, dups...), cache...)}
	for _, tc := range []struct {
		name string
		run  func(*testing.T)
	}{
		{"groups", s.groups},
		{"group filters", s.groupFilters},
		{"group pagination", s.groupPagination},
		{"group sorting", s.groupSorting},
		{"invalid groups", s.invalidGroups},
		{"invalid filters", s.invalidFilters},
		{"graphs", s.graphs},
		{"graph buckets", s.graphBuckets},
		{"invalid graphs", s.invalidGraphs},
		{"summaries", s.summaries},
		{"cache savings", s.cacheSavings},
		{"logs pages", s.logsPages},
		{"log", s.log},
		{"bodies", s.bodies},
		{"scan logs", s.scanLogs},
		{"duplicates count once", s.duplicates},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tc.run(t)
		})
	}
}
