package httpapi

import (
	"encoding/json"
	"math"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/causeway/causeway/analytics"
	"github.com/causeway/causeway/domain"
	"github.com/causeway/causeway/queries"
)

// The specification's display retention (LOG_RETENTION_DISPLAY, METRICS_RETENTION_DISPLAY),
// and the range a request without time_of_generation_min covers.
const (
	defaultLogRetention    = 90 * 24 * time.Hour
	defaultMetricRetention = 365 * 24 * time.Hour
	defaultTrafficRange    = 7 * 24 * time.Hour
)

// trafficView is what a traffic route shows: the scope it needs, how far back it reaches, and
// whether the analytics security settings (membersViewAnalytics, managersViewAnalytics) apply.
type trafficView struct {
	scope     string
	logs      bool // log retention; metric retention otherwise
	analytics bool
}

var (
	analyticsView = trafficView{scope: "analytics.view", analytics: true}
	logGroupsView = trafficView{scope: "logs.view", logs: true, analytics: true}
	logView       = trafficView{scope: "logs.view", logs: true}
	logListView   = trafficView{scope: "logs.list", logs: true}
)

// retentionFloor is the oldest start time the view shows.
func (a *Admin) retentionFloor(v trafficView) time.Time {
	keep := a.Retention.Metrics
	if keep <= 0 {
		keep = defaultMetricRetention
	}
	if v.logs {
		keep = a.Retention.Logs
		if keep <= 0 {
			keep = defaultLogRetention
		}
	}
	return a.Now().Add(-keep)
}

// trafficStore is the request log store, refusing first an actor without the view's scope and
// then a deployment that has none.
func (a *Admin) trafficStore(r *http.Request, v trafficView) (AnalyticsStore, domain.Actor, error) {
	actor := actorFrom(r.Context())
	if err := requireScope(actor, v.scope); err != nil {
		return nil, actor, err
	}
	if a.Analytics == nil {
		return nil, actor, domain.Errorf(domain.CodeNotFound, "analytics is not configured on this deployment")
	}
	return a.Analytics, actor, nil
}

// trafficWorkspaces is the set of workspaces whose rows the actor may read (nil: every
// workspace of the organisation), narrowed by workspace_slug: the read side's decision
// (queries.TrafficWorkspaces), with the analytics settings applied to the analytics views.
func (a *Admin) trafficWorkspaces(r *http.Request, actor domain.Actor, v trafficView) ([]string, error) {
	return a.reads().TrafficWorkspaces(r.Context(), actor, r.URL.Query().Get("workspace_slug"), v.analytics)
}

// trafficFilter reads the reference's filters from the query into a Filter of the actor's
// organisation and visible workspaces, within the view's retention.
func (a *Admin) trafficFilter(r *http.Request, actor domain.Actor, v trafficView) (analytics.Filter, error) {
	workspaces, err := a.trafficWorkspaces(r, actor, v)
	if err != nil {
		return analytics.Filter{}, err
	}
	q := r.URL.Query()
	f := analytics.Filter{OrganisationID: actor.OrganisationID, WorkspaceIDs: workspaces}
	if f.From, f.To, err = a.timeRange(q, v); err != nil {
		return analytics.Filter{}, err
	}
	if f.MinTokens, f.MaxTokens, err = intRange(q, "total_units"); err != nil {
		return analytics.Filter{}, err
	}
	if f.MinPromptTokens, f.MaxPromptTokens, err = intRange(q, "prompt_token"); err != nil {
		return analytics.Filter{}, err
	}
	if f.MinCompletionTokens, f.MaxCompletionTokens, err = intRange(q, "completion_token"); err != nil {
		return analytics.Filter{}, err
	}
	if f.MinCost, f.MaxCost, err = costRange(q); err != nil {
		return analytics.Filter{}, err
	}
	if f.StatusCodes, err = statusCodes(q); err != nil {
		return analytics.Filter{}, err
	}
	if f.APIKeyIDs, err = apiKeyIDs(q); err != nil {
		return analytics.Filter{}, err
	}
	if f.Metadata, err = metadataFilter(q); err != nil {
		return analytics.Filter{}, err
	}
	if f.ConfigIDs, err = a.reads().ConfigIDs(r.Context(), actor.OrganisationID, queryList(q, "configs")); err != nil {
		return analytics.Filter{}, err
	}
	f.Providers = providerSlugs(append(queryList(q, "providers"), queryList(q, "virtual_keys")...))
	f.Models = queryList(q, "models")
	if err := aiOrgModels(q, &f); err != nil {
		return analytics.Filter{}, err
	}
	if f.TraceID, err = singleValue(q, "trace_id"); err != nil {
		return analytics.Filter{}, err
	}
	if f.SpanID, err = singleValue(q, "span_id"); err != nil {
		return analytics.Filter{}, err
	}
	if f.PromptIDs, err = a.reads().PromptIDs(r.Context(), actor.OrganisationID, queryList(q, "prompt_slug")); err != nil {
		return analytics.Filter{}, err
	}
	if v.logs {
		own, only, err := a.reads().OwnKeysOnly(r.Context(), actor, workspaces)
		if err != nil {
			return analytics.Filter{}, err
		}
		if only {
			if f.APIKeyIDs, err = queries.OwnKeys(f.APIKeyIDs, own); err != nil {
				return analytics.Filter{}, err
			}
		}
	}
	return f, nil
}

// timeRange reads time_of_generation_min and _max: [min, max), by default the last seven days
// up to now; as_of, when given, bounds max (a max after it is lowered to it). A min older than the retention floor is raised to it, as older rows are not
// shown, and a max after now is lowered to now, as no row is newer (which also bounds the
// buckets of a graph); a range that ends at or before the floor shows nothing and is refused.
func (a *Admin) timeRange(q url.Values, v trafficView) (time.Time, time.Time, error) {
	parse := func(name string) (time.Time, error) {
		raw := strings.TrimSpace(q.Get(name))
		if raw == "" {
			return time.Time{}, nil
		}
		t, err := time.Parse(time.RFC3339Nano, raw)
		if err != nil && strings.Contains(raw, " ") {
			// An unescaped "+05:30" arrives as " 05:30": read it as the client meant it.
			t, err = time.Parse(time.RFC3339Nano, strings.ReplaceAll(raw, " ", "+"))
		}
		if err != nil {
			return time.Time{}, domain.Invalid(name, "%s must be an RFC 3339 time such as 2026-02-23T14:20:31+05:30", name)
		}
		return t, nil
	}
	from, err := parse("time_of_generation_min")
	if err != nil {
		return time.Time{}, time.Time{}, err
	}
	to, err := parse("time_of_generation_max")
	if err != nil {
		return time.Time{}, time.Time{}, err
	}
	if q.Has(asOfParam) {
		// The traffic as it was then: rows generated up to the instant.
		at, err := parseAsOf(q.Get(asOfParam))
		if err != nil {
			return time.Time{}, time.Time{}, err
		}
		if to.IsZero() || to.After(at) {
			to = at
		}
	}
	if to.IsZero() {
		to = a.Now()
	}
	if from.IsZero() {
		from = to.Add(-defaultTrafficRange)
	}
	if !from.Before(to) {
		return time.Time{}, time.Time{}, domain.Invalid("time_of_generation_min", "time_of_generation_min must be before time_of_generation_max")
	}
	floor := a.retentionFloor(v)
	if !to.After(floor) {
		return time.Time{}, time.Time{}, domain.Invalid("time_of_generation_max",
			"time_of_generation_max must be after %s: %s are shown for %s", floor.UTC().Format(time.RFC3339), retentionNoun(v), retentionDays(a.Now().Sub(floor)))
	}
	if from.Before(floor) {
		from = floor
	}
	if now := a.Now(); to.After(now) {
		if !from.Before(now) {
			return time.Time{}, time.Time{}, domain.Invalid("time_of_generation_min", "time_of_generation_min must be in the past")
		}
		to = now
	}
	return from.UTC(), to.UTC(), nil
}

func retentionNoun(v trafficView) string {
	if v.logs {
		return "logs"
	}
	return "analytics"
}

func retentionDays(d time.Duration) string {
	return strconv.Itoa(int(math.Round(d.Hours()/24))) + " days"
}

// queryList reads a list parameter given comma-separated, repeated, or both.
func queryList(q url.Values, name string) []string {
	var out []string
	for _, raw := range q[name] {
		for _, s := range strings.Split(raw, ",") {
			if s = strings.TrimSpace(s); s != "" && !slices.Contains(out, s) {
				out = append(out, s)
			}
		}
	}
	return out
}

// singleValue reads a parameter that takes one value: the store matches one trace (span).
func singleValue(q url.Values, name string) (string, error) {
	vals := queryList(q, name)
	if len(vals) > 1 {
		return "", domain.Invalid(name, "%s takes one value, not %d", name, len(vals))
	}
	if len(vals) == 0 {
		return "", nil
	}
	return vals[0], nil
}

// intRange reads <name>_min and <name>_max: whole numbers at least 0, min at most max.
func intRange(q url.Values, name string) (*int, *int, error) {
	read := func(param string) (*int, error) {
		raw := strings.TrimSpace(q.Get(param))
		if raw == "" {
			return nil, nil
		}
		n, err := strconv.ParseInt(raw, 10, 32)
		if err != nil || n < 0 {
			return nil, domain.Invalid(param, "%s must be a whole number from 0 to %d", param, math.MaxInt32)
		}
		i := int(n)
		return &i, nil
	}
	lo, err := read(name + "_min")
	if err != nil {
		return nil, nil, err
	}
	hi, err := read(name + "_max")
	if err != nil {
		return nil, nil, err
	}
	if lo != nil && hi != nil && *lo > *hi {
		return nil, nil, domain.Invalid(name+"_min", "%s_min must be at most %s_max", name, name)
	}
	return lo, hi, nil
}

// costRange reads cost_min and cost_max: finite numbers at least 0, min at most max.
func costRange(q url.Values) (*float64, *float64, error) {
	read := func(param string) (*float64, error) {
		raw := strings.TrimSpace(q.Get(param))
		if raw == "" {
			return nil, nil
		}
		f, err := strconv.ParseFloat(raw, 64)
		if err != nil || f < 0 || math.IsNaN(f) || math.IsInf(f, 0) {
			return nil, domain.Invalid(param, "%s must be a number at least 0", param)
		}
		return &f, nil
	}
	lo, err := read("cost_min")
	if err != nil {
		return nil, nil, err
	}
	hi, err := read("cost_max")
	if err != nil {
		return nil, nil, err
	}
	if lo != nil && hi != nil && *lo > *hi {
		return nil, nil, domain.Invalid("cost_min", "cost_min must be at most cost_max")
	}
	return lo, hi, nil
}

// statusCodes reads status_code: HTTP status codes from 100 to 599.
func statusCodes(q url.Values) ([]int, error) {
	var out []int
	for _, s := range queryList(q, "status_code") {
		n, err := strconv.Atoi(s)
		if err != nil || n < 100 || n > 599 {
			return nil, domain.Invalid("status_code", "status_code must list HTTP status codes from 100 to 599 (got %q)", s)
		}
		out = append(out, n)
	}
	return out, nil
}

// apiKeyIDs reads api_key_ids: key UUIDs.
func apiKeyIDs(q url.Values) ([]string, error) {
	ids := queryList(q, "api_key_ids")
	for _, id := range ids {
		if !isUUID(id) {
			return nil, domain.Invalid("api_key_ids", "api_key_ids must list API key UUIDs (got %q)", id)
		}
	}
	return ids, nil
}

// metadataFilter reads metadata: a JSON object whose values are strings (numbers and booleans
// are matched as their text, as the gateway stores them).
func metadataFilter(q url.Values) (map[string]string, error) {
	raw := strings.TrimSpace(q.Get("metadata"))
	if raw == "" {
		return nil, nil
	}
	var obj map[string]any
	if err := json.Unmarshal([]byte(raw), &obj); err != nil || obj == nil {
		return nil, domain.Invalid("metadata", `metadata must be a JSON object such as {"_user":"user_1"}`)
	}
	out := make(map[string]string, len(obj))
	for k, v := range obj {
		switch val := v.(type) {
		case string:
			out[k] = val
		case bool:
			out[k] = strconv.FormatBool(val)
		case float64:
			out[k] = strconv.FormatFloat(val, 'f', -1, 64)
		default:
			return nil, domain.Invalid("metadata", "metadata values must be strings, numbers or booleans (%q is not)", k)
		}
	}
	return out, nil
}

// providerSlugs spells managed providers (and virtual keys, their legacy name) as rows carry
// them: "@slug".
func providerSlugs(slugs []string) []string {
	var out []string
	for _, s := range slugs {
		s = "@" + strings.TrimPrefix(s, "@")
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}

// aiOrgModels reads ai_org_model: either a list of models, or, as the reference spells it, a
// list of "ai_org__model" pairs (the AI service, e.g. openai, and a model). One list is one
// or the other: mixing them has no single meaning (any service's model, or that pair?). It
// cannot be combined with models, which it spells differently.
func aiOrgModels(q url.Values, f *analytics.Filter) error {
	items := queryList(q, "ai_org_model")
	if len(items) == 0 {
		return nil
	}
	if len(f.Models) > 0 {
		return domain.Invalid("ai_org_model", "ai_org_model and models cannot be combined: use one of them")
	}
	var models []string
	var pairs []analytics.ServiceModel
	for _, it := range items {
		service, model, ok := strings.Cut(it, "__")
		if !ok {
			models = append(models, it)
			continue
		}
		if service == "" || model == "" {
			return domain.Invalid("ai_org_model", "ai_org_model pairs are ai_org__model with both parts (got %q)", it)
		}
		pairs = append(pairs, analytics.ServiceModel{AIService: strings.ToLower(service), Model: model})
	}
	if len(models) > 0 && len(pairs) > 0 {
		return domain.Invalid("ai_org_model", "ai_org_model must list either models or ai_org__model pairs, not both")
	}
	f.Models, f.ServiceModels = models, pairs
	return nil
}
