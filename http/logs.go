package httpapi

import (
	"context"
	"encoding/json"
	"math"
	"net/http"
	"path"
	"slices"
	"strconv"
	"time"

	"github.com/gorilla/mux"

	"github.com/causeway/causeway/analytics"
	"github.com/causeway/causeway/domain"
)

// logAnswer is the reference's LogObject: the request and response as the gateway saw them,
// and metrics with the reference's names where a row has the figure (ai_org, ai_model,
// req_units, ...) and the row's own names for what the reference does not name.
type logAnswer struct {
	ID             string      `json:"_id"`
	Object         string      `json:"object"`
	Request        logRequest  `json:"request"`
	Response       logResponse `json:"response"`
	OrganisationID string      `json:"organisation_id"`
	CreatedAt      time.Time   `json:"created_at"`
	LogFormat      string      `json:"log_format"`
	Metrics        logMetrics  `json:"metrics"`
	// Provenance is what decided the request: the policy or budget that refused it (with its
	// version), the budgets charged, the config version that routed it.
	Provenance *analytics.Provenance `json:"provenance,omitempty"`
}

// logRequest carries the gateway's own headers under gatewayHeaders, the reference's
// portkeyHeaders spelled as the specification spells the headers (x-gateway-).
type logRequest struct {
	URL    string          `json:"url"`
	Method string          `json:"method"`
	Body   json.RawMessage `json:"body,omitempty"`
	// BodyEncoding is "base64" when the body's bytes were not valid UTF-8 and Body is a JSON
	// string of their base64; empty when Body is the JSON as sent.
	BodyEncoding   string            `json:"body_encoding,omitempty"`
	GatewayHeaders map[string]string `json:"gatewayHeaders"`
}

type logResponse struct {
	Status       int             `json:"status"`
	Body         json.RawMessage `json:"body,omitempty"`
	BodyEncoding string          `json:"body_encoding,omitempty"` // as logRequest's
	// ResponseTime is the reference's LogResponse.responseTime: the same figure as
	// metrics.response_time, which the reference also has.
	ResponseTime           latency `json:"responseTime"`
	LastUsedOptionJSONPath string  `json:"lastUsedOptionJsonPath"`
}

// latency is a duration as logs answer it: milliseconds, to the microsecond (0.443 is 443 µs).
// The reference types its latencies as whole milliseconds; a whole number would answer 0 for
// a sub-millisecond request, so the fraction is kept.
type latency float64

func (v latency) MarshalJSON() ([]byte, error) {
	ms := float64(v)
	if math.IsNaN(ms) || math.IsInf(ms, 0) {
		ms = 0
	}
	return strconv.AppendFloat(nil, math.Round(ms*1000)/1000, 'f', -1, 64), nil
}

type logMetrics struct {
	ID                 string    `json:"id"`
	OrganisationID     string    `json:"organisation_id"`
	WorkspaceID        string    `json:"workspace_id"`
	WorkspaceSlug      string    `json:"workspace_slug"`
	APIKeyID           string    `json:"api_key_id"`
	ConfigID           string    `json:"config_id"`
	PromptID           string    `json:"prompt_id"`
	PromptVersion      int       `json:"prompt_version,omitempty"`
	PromptLabel        string    `json:"prompt_label,omitempty"`
	CreatedAt          time.Time `json:"created_at"`
	EndedAt            time.Time `json:"ended_at"`
	IsSuccess          bool      `json:"is_success"`
	AIOrg              string    `json:"ai_org"`
	AIModel            string    `json:"ai_model"`
	Provider           string    `json:"provider"`
	Endpoint           string    `json:"endpoint"`
	ReqUnits           int       `json:"req_units"`
	ResUnits           int       `json:"res_units"`
	TotalUnits         int       `json:"total_units"`
	CachedUnits        int       `json:"cached_units"`
	CacheWriteUnits    int       `json:"cache_write_units"`
	ReasoningUnits     int       `json:"reasoning_units"`
	Cost               amount    `json:"cost"` // USD, see amount
	RequestURL         string    `json:"request_url"`
	RequestMethod      string    `json:"request_method"`
	ResponseStatusCode int       `json:"response_status_code"`
	ResponseTime       latency   `json:"response_time"`
	TimeToFirstToken   latency   `json:"time_to_first_token"`
	IsProxyCall        bool      `json:"is_proxy_call"`
	CacheStatus        string    `json:"cache_status"`
	// CacheSavedCost and CacheSavedLatency are what a cache hit saved: the cost (USD) and the
	// time of the answer it replayed.
	CacheSavedCost    amount            `json:"cache_saved_cost"`
	CacheSavedLatency latency           `json:"cache_saved_latency"`
	StreamMode        int               `json:"stream_mode"`
	RetryCount        int               `json:"retry_count"`
	FallbackTarget    string            `json:"fallback_target"`
	TraceID           string            `json:"trace_id"`
	SpanID            string            `json:"span_id"`
	SpanName          string            `json:"span_name"`
	ParentSpanID      string            `json:"parent_span_id"`
	Metadata          map[string]string `json:"metadata"`
	Error             string            `json:"error,omitempty"`
}

// logView renders a row; bodies only when asked for, as list pages would otherwise carry up
// to a thousand of them.
func (a *Admin) logView(ctx context.Context, rec analytics.LogRecord, withBodies bool) (logAnswer, error) {
	headers := map[string]string{}
	for name, v := range map[string]string{"x-gateway-trace-id": rec.TraceID, "x-gateway-span-id": rec.SpanID,
		"x-gateway-parent-span-id": rec.ParentSpanID, "x-gateway-span-name": rec.SpanName} {
		if v != "" {
			headers[name] = v
		}
	}
	meta := rec.Metadata
	if meta == nil {
		meta = map[string]string{}
	}
	if len(rec.Metadata) > 0 {
		raw, _ := json.Marshal(rec.Metadata)
		headers["x-gateway-metadata"] = string(raw)
	}
	slug, err := a.reads().WorkspaceSlug(ctx, rec.OrganisationID, rec.WorkspaceID)
	if err != nil {
		return logAnswer{}, err
	}
	started, ended := rec.StartedAt.UTC().Truncate(time.Millisecond), rec.EndedAt.UTC().Truncate(time.Millisecond)
	stream := 0
	if rec.Stream {
		stream = 1
	}
	ans := logAnswer{ID: rec.ID, Object: "log", OrganisationID: rec.OrganisationID, CreatedAt: started, LogFormat: rec.LogFormat,
		Request:  logRequest{URL: rec.Path, Method: rec.Method, GatewayHeaders: headers},
		Response: logResponse{Status: rec.StatusCode, ResponseTime: latency(rec.LatencyMS), LastUsedOptionJSONPath: rec.Target},
		Metrics: logMetrics{ID: rec.ID, OrganisationID: rec.OrganisationID, WorkspaceID: rec.WorkspaceID, WorkspaceSlug: slug,
			APIKeyID: rec.APIKeyID, ConfigID: rec.ConfigID, PromptID: rec.PromptID, PromptVersion: rec.PromptVersion,
			PromptLabel: rec.PromptLabel, CreatedAt: started, EndedAt: ended,
			IsSuccess: rec.StatusCode >= 200 && rec.StatusCode < 300, AIOrg: rec.AIService, AIModel: rec.Model,
			Provider: rec.Provider, Endpoint: rec.Endpoint, ReqUnits: rec.PromptTokens, ResUnits: rec.CompletionTokens,
			TotalUnits: rec.TotalTokens, CachedUnits: rec.CachedTokens,
			CacheWriteUnits: rec.CacheWriteTokens, ReasoningUnits: rec.ReasoningTokens, Cost: amount(rec.Cost),
			RequestURL: rec.Path, RequestMethod: rec.Method, ResponseStatusCode: rec.StatusCode, ResponseTime: latency(rec.LatencyMS),
			TimeToFirstToken: latency(rec.TTFTMS), IsProxyCall: rec.Endpoint == "proxy", CacheStatus: rec.CacheStatus, StreamMode: stream,
			CacheSavedCost: amount(rec.CacheSavedCost), CacheSavedLatency: latency(rec.CacheSavedMS),
			RetryCount: rec.RetryCount, FallbackTarget: rec.FallbackTarget, TraceID: rec.TraceID, SpanID: rec.SpanID,
			SpanName: rec.SpanName, ParentSpanID: rec.ParentSpanID, Metadata: meta, Error: rec.Error},
	}
	if withBodies {
		ans.Request.Body, ans.Response.Body = jsonBody(rec.RequestBody), jsonBody(rec.ResponseBody)
		ans.Request.BodyEncoding, ans.Response.BodyEncoding = rec.RequestBodyEncoding, rec.ResponseBodyEncoding
	}
	ans.Provenance = rec.Provenance
	return ans, nil
}

// jsonBody passes a stored body on as JSON: as it is when it is JSON, else as a string.
func jsonBody(b json.RawMessage) json.RawMessage {
	if len(b) == 0 {
		return nil
	}
	if json.Valid(b) {
		return b
	}
	raw, _ := json.Marshal(string(b))
	return raw
}

// registerLogs adds GET /v1/logs/{logId} and GET /v1/logs. POST /v1/logs (custom logs) and
// the export routes under /v1/logs/exports are not these: {logId} leaves "exports" to them.
func (a *Admin) registerLogs(r *mux.Router) {
	notExports := func(r *http.Request, _ *mux.RouteMatch) bool { return path.Base(r.URL.Path) != "exports" }
	r.Handle("/logs/{logId}", a.route("log", a.getLog)).Methods(http.MethodGet).MatcherFunc(notExports)
	r.Handle("/logs", a.route("log", a.listLogs)).Methods(http.MethodGet)
}

// getLog answers one row: 404 when it is missing, of a workspace the caller cannot see, or
// older than the log retention.
func (a *Admin) getLog(w http.ResponseWriter, r *http.Request) (int, any, error) {
	store, actor, err := a.trafficStore(r, logView)
	if err != nil {
		return 0, nil, err
	}
	// With as_of, the row as it was then: there, or not yet.
	var asOf *time.Time
	if asOfRequested(r) {
		at, err := asOfTime(r)
		if err != nil {
			return 0, nil, err
		}
		asOf = &at
	}
	id := mux.Vars(r)["logId"]
	rec, ok, err := store.Log(r.Context(), actor.OrganisationID, id)
	if err != nil {
		return 0, nil, err
	}
	if !ok || rec.OrganisationID != actor.OrganisationID || !canSee(actor, rec.WorkspaceID) || rec.StartedAt.Before(a.retentionFloor(logView)) {
		return 0, nil, domain.Errorf(domain.CodeNotFound, "log %s not found", id)
	}
	own, only, err := a.reads().OwnKeysOnly(r.Context(), actor, []string{rec.WorkspaceID})
	if err != nil {
		return 0, nil, err
	}
	if only && !slices.Contains(own, rec.APIKeyID) {
		return 0, nil, domain.Errorf(domain.CodeNotFound, "log %s not found", id)
	}
	if asOf != nil && rec.StartedAt.After(*asOf) {
		return 0, nil, domain.Errorf(domain.CodeNotFound, "log %s did not exist at %s", id, asOf.UTC().Format(time.RFC3339Nano))
	}
	v, err := a.logView(r.Context(), rec, true)
	return http.StatusOK, v, err
}

// listLogs answers a page of rows, newest first, without their bodies.
func (a *Admin) listLogs(w http.ResponseWriter, r *http.Request) (int, any, error) {
	store, actor, err := a.trafficStore(r, logListView)
	if err != nil {
		return 0, nil, err
	}
	f, err := a.trafficFilter(r, actor, logListView)
	if err != nil {
		return 0, nil, err
	}
	cur, size, err := trafficPage(r)
	if err != nil {
		return 0, nil, err
	}
	p, err := store.Logs(r.Context(), analytics.LogsQuery{Filter: f, Page: cur, PageSize: size})
	if err != nil {
		return 0, nil, err
	}
	data := make([]logAnswer, 0, len(p.Rows))
	for _, rec := range p.Rows {
		v, err := a.logView(r.Context(), rec, false)
		if err != nil {
			return 0, nil, err
		}
		data = append(data, v)
	}
	return http.StatusOK, listAnswer[logAnswer]{Object: "list", Total: p.Total, CurrentPage: cur, PageSize: size, Data: data}, nil
}
