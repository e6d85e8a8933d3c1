package gateway

import (
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/causeway/causeway/analytics"
	"github.com/causeway/causeway/domain"
	"github.com/causeway/causeway/ledger"
)

// Limit is one rate limit that applies to a request: which counter (Bucket), of what (requests
// or tokens), how many per window.
type Limit struct {
	Bucket string // e.g. "key:<id>:requests:rpm" or "policy:<id>:<group values>"
	Type   string // domain.LimitRequests or domain.LimitTokens
	Unit   string // rpm, rph, rpd, rpw
	Value  float64
	By     analytics.Decider // what set it, named in the 429
}

var unitWords = map[string]string{"rpm": "minute", "rph": "hour", "rpd": "day", "rpw": "week"}

// Describe says the limit in words: "50 requests per minute", "1000 tokens per hour", "1
// request per day".
func (l Limit) Describe() string {
	what := l.Type
	if l.Value == 1 {
		what = strings.TrimSuffix(what, "s")
	}
	return strconv.FormatFloat(l.Value, 'f', -1, 64) + " " + what + " per " + unitWords[l.Unit]
}

// Limiter counts requests and tokens in fixed windows aligned to their unit (the minute, the
// hour, the UTC day, the week from Monday). Each window is a transient counter of the usage
// ledger (ledger.KindRateLimit), so it is exact as the ledger's budgets are: within one
// process, every limit of a request is checked before any is consumed, under one lock, so a
// refused request consumes nothing; across instances sharing a ledger, through its leases.
// Request limits are consumed on admission. Token limits admit a request while the window has
// room for one more token, and are charged with the answer's actual usage (Charge).
type Limiter struct {
	counters *ledger.Ledger
	now      func() time.Time
}

// NewLimiter returns a limiter on the given clock (time.Now when nil), counting in counters,
// the ledger shared with the budgets; nil: a ledger of its own that keeps nothing.
func NewLimiter(now func() time.Time, counters *ledger.Ledger) *Limiter {
	if now == nil {
		now = time.Now
	}
	if counters == nil {
		counters = ledger.New(ledger.Discard, ledger.Options{})
	}
	return &Limiter{counters: counters, now: now}
}

// Decision is the outcome of Allow: whether the request may go, and the figures for the
// x-ratelimit headers of the tightest limit.
type Decision struct {
	Allowed   bool
	Limit     Limit     // the tightest limit (the refusing one when refused)
	Remaining float64   // what is left in its window after this request
	Reset     time.Time // when its window ends
}

// RetryAfter is how long a refused request should wait: until the refusing limit's window
// ends, in whole seconds, at least one.
func (d Decision) RetryAfter(now time.Time) time.Duration {
	return time.Duration(max(1, int(math.Ceil(d.Reset.Sub(now).Seconds())))) * time.Second
}

// Refusal is a refused request's message, naming the limit in its unit and kind, what set it
// and when to retry: "rate limit of 50 tokens per minute reached (rate_limit_policy:<id>@v3);
// retry after 12s". on, when not empty, says what the limit is on ("@openai-main").
func (d Decision) Refusal(now time.Time, on string) string {
	msg := "rate limit of " + d.Limit.Describe()
	if on != "" {
		msg += " on " + on
	}
	return msg + " reached (" + d.Limit.By.String() + "); retry after " + shortDuration(d.RetryAfter(now))
}

// shortDuration writes whole seconds without empty units: "12s", "5m", "1h2m3s".
func shortDuration(d time.Duration) string {
	s := d.Round(time.Second).String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

// windowStart is the start of the unit's window that contains t.
func windowStart(unit string, t time.Time) time.Time {
	t = t.UTC()
	switch unit {
	case "rpm":
		return t.Truncate(time.Minute)
	case "rph":
		return t.Truncate(time.Hour)
	case "rpd":
		return time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.UTC)
	case "rpw":
		day := time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.UTC)
		return day.AddDate(0, 0, -((int(day.Weekday()) + 6) % 7)) // back to Monday
	}
	return t.Truncate(time.Minute)
}

// subs names a limit's counter within its bucket: its unit and type.
var subs = func() map[[2]string]string {
	out := map[[2]string]string{}
	for unit := range unitWords {
		for _, typ := range []string{domain.LimitRequests, domain.LimitTokens} {
			out[[2]string{unit, typ}] = unit + "." + typ
		}
	}
	return out
}()

// budgets are the ledger counters of limits' windows at now.
func budgets(limits []Limit, now time.Time) []ledger.Budget {
	out := make([]ledger.Budget, len(limits))
	for i, lim := range limits {
		start := windowStart(lim.Unit, now)
		sub, ok := subs[[2]string{lim.Unit, lim.Type}]
		if !ok {
			sub = lim.Unit + "." + lim.Type
		}
		typ := ledger.TypeRequests
		if lim.Type == domain.LimitTokens {
			typ = ledger.TypeTokens
		}
		out[i] = ledger.Budget{Kind: ledger.KindRateLimit, ID: ledger.EscapeID(lim.Bucket), Sub: sub,
			Period: start.Format(time.RFC3339), Type: typ, Limit: lim.Value, Until: windowEnd(lim.Unit, start)}
	}
	return out
}

// windowEnd is the end of the unit's window that starts at start.
func windowEnd(unit string, start time.Time) time.Time {
	if unit == "rpd" {
		return start.AddDate(0, 0, 1)
	}
	if unit == "rpw" {
		return start.AddDate(0, 0, 7)
	}
	return start.Add(domain.RateUnitWindow[unit])
}

// Allow decides a request against every limit that applies to it. Request limits are
// consumed only when every limit allows it; token limits are checked (the window must have
// room) and charged later.
func (l *Limiter) Allow(limits []Limit) Decision {
	if len(limits) == 0 {
		return Decision{Allowed: true, Remaining: math.Inf(1)}
	}
	now := l.now()
	bs := budgets(limits, now)
	// A request limit takes the request; a token limit, room for one token, given back at once.
	r, refused := l.counters.Reserve(bs, ledger.Amount{Requests: 1, Tokens: 1})
	if refused != nil {
		return Decision{Allowed: false, Limit: limits[refused.Index], Remaining: 0, Reset: bs[refused.Index].Until}
	}
	tightest := Decision{Allowed: true, Remaining: math.Inf(1)}
	for i, c := range r.Settle(ledger.Amount{Requests: 1}) {
		if left := limits[i].Value - c.Used; left < tightest.Remaining {
			tightest = Decision{Allowed: true, Limit: limits[i], Remaining: max(0, left), Reset: bs[i].Until}
		}
	}
	return tightest
}

// Charge adds a finished request's tokens to its token limits, in their windows now.
func (l *Limiter) Charge(limits []Limit, tokens int) {
	if tokens <= 0 {
		return
	}
	var toks []Limit
	for _, lim := range limits {
		if lim.Type == domain.LimitTokens {
			toks = append(toks, lim)
		}
	}
	if len(toks) > 0 {
		l.counters.Charge(budgets(toks, l.now()), ledger.Amount{Tokens: float64(tokens)})
	}
}

// RequestFacts are what rate-limit conditions and group_by read of a request.
type RequestFacts struct {
	OrganisationID string
	WorkspaceID    string
	APIKeyID       string
	EndpointType   string
	Metadata       map[string]string
}

func (f RequestFacts) value(key string) (string, bool) {
	switch key {
	case "api_key":
		return f.APIKeyID, true
	case "organisation_id":
		return f.OrganisationID, true
	case "workspace_id":
		return f.WorkspaceID, true
	case "endpoint_type":
		return f.EndpointType, true
	}
	if field, ok := strings.CutPrefix(key, "metadata."); ok {
		v, present := f.Metadata[field]
		return v, present
	}
	return "", false
}

// PolicyLimits returns the limits of the active policies whose every condition matches the
// request, each counted in the partition its group_by values name.
func PolicyLimits(policies []Versioned[domain.RateLimitPolicy], f RequestFacts) []Limit {
	var out []Limit
	for _, v := range policies {
		p := &v.Value
		if p.Status != domain.StatusActive || p.OrganisationID != f.OrganisationID || p.WorkspaceID != f.WorkspaceID {
			continue
		}
		if !f.matches(p.Conditions) {
			continue
		}
		group := make([]string, 0, len(p.GroupBy))
		for _, g := range p.GroupBy {
			v, _ := f.value(g.Key)
			group = append(group, g.Key+"="+v)
		}
		sort.Strings(group)
		out = append(out, Limit{Bucket: "policy:" + p.ID + ":" + strings.Join(group, "&"), Type: p.Type, Unit: p.Unit,
			Value: p.Value, By: analytics.Decider{Kind: "rate_limit_policy", ID: p.ID, Version: v.Version, Limit: p.Value}})
	}
	return out
}

// matches reports whether the request meets every condition.
func (f RequestFacts) matches(conds []domain.Condition) bool {
	for _, c := range conds {
		if v, ok := f.value(c.Key); !ok || v != c.Value {
			return false
		}
	}
	return true
}

// OwnLimits are the rate_limits set on a key, a workspace, a managed provider or an
// integration's workspace; kind is the resource kind as decisions name it.
func OwnLimits(kind, id string, version uint64, limits []domain.RateLimit) []Limit {
	out := make([]Limit, 0, len(limits))
	for _, r := range limits {
		out = append(out, Limit{Bucket: kind + ":" + id, Type: r.Type, Unit: r.Unit, Value: r.Value,
			By: analytics.Decider{Kind: kind, ID: id, Sub: r.Type + "/" + r.Unit, Version: version, Limit: r.Value}})
	}
	return out
}
