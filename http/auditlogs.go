package httpapi

import (
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gorilla/mux"

	"github.com/causeway/causeway/domain"
	"github.com/causeway/causeway/projections"
	"github.com/causeway/causeway/queries"
)

// The audit log is the event stream itself, read back: every change with who, what, where,
// and the resource's state before and after, plus every refused attempt.
func (a *Admin) registerAuditLogs(r *mux.Router) {
	on := func(h handler) http.Handler {
		return a.route("audit_log", func(w http.ResponseWriter, r *http.Request) (int, any, error) {
			if !a.Features.AuditLogs {
				return 0, nil, domain.Errorf(domain.CodeDisabled, "audit logs are turned off (AUDIT_LOGS_ENABLED=OFF)")
			}
			if err := queries.RequireAuditReader(actorFrom(r.Context())); err != nil {
				return 0, nil, err
			}
			return h(w, r)
		})
	}
	r.Handle("/audit-logs", on(func(w http.ResponseWriter, r *http.Request) (int, any, error) {
		f, err := a.auditFilter(r, actorFrom(r.Context()).OrganisationID)
		if err != nil {
			return 0, nil, err
		}
		// page validates the paging; the read model answers only the page asked for.
		win, err := page[projections.AuditRecord](r, nil)
		if err != nil {
			return 0, nil, err
		}
		recs, total, err := a.reads().AuditRecords(r.Context(), actorFrom(r.Context()), f, win.CurrentPage*win.PageSize, win.PageSize)
		if err != nil {
			return 0, nil, err
		}
		win.Total, win.Data = total, recs
		return http.StatusOK, win, nil
	})).Methods(http.MethodGet)
	r.Handle("/audit-logs/{id}", on(func(w http.ResponseWriter, r *http.Request) (int, any, error) {
		// With as_of, the record as the log held it then: there, or not yet.
		at := time.Time{}
		if asOfRequested(r) {
			var err error
			if at, err = asOfTime(r); err != nil {
				return 0, nil, err
			}
		}
		id := mux.Vars(r)["id"]
		rec, err := a.reads().AuditRecord(r.Context(), actorFrom(r.Context()), id, at)
		if err != nil {
			return 0, nil, err
		}
		return http.StatusOK, rec, nil
	})).Methods(http.MethodGet)
	a.registerAuditHistory(r)
}

// The audit filters' enumerations: each value in the spelling the audit log answers, and the
// other spellings accepted for it.
var (
	auditUserTypes = map[string]string{"user": "user", "api_key": "api_key", "apikey": "api_key", "api-key": "api_key",
		"system": "system"}
	auditMethods = []string{http.MethodGet, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete}
)

// auditFilter reads the reference's filters: start_time, end_time, user_id, user_type,
// workspace_id, resource_type, action, method, response_status_code, request_id, client_ip;
// and order (desc, the default, or asc) and as_of. Enumerated filters take any spelling of
// their values and refuse an unknown one, listing the valid ones.
func (a *Admin) auditFilter(r *http.Request, orgID string) (projections.AuditFilter, error) {
	q := r.URL.Query()
	f := projections.AuditFilter{OrganisationID: orgID, ActorID: q.Get("user_id"), WorkspaceID: q.Get("workspace_id"),
		ResourceID: q.Get("resource_id"), RequestID: q.Get("request_id"), ClientIP: q.Get("client_ip")}
	for name, dst := range map[string]*time.Time{"start_time": &f.From, "end_time": &f.To} {
		if v := q.Get(name); v != "" {
			t, err := time.Parse(time.RFC3339Nano, strings.ReplaceAll(v, " ", "+"))
			if err != nil {
				return f, domain.Invalid(name, "%s must be an RFC 3339 time, such as 2026-01-02T15:04:05Z", name)
			}
			*dst = t
		}
	}
	if !f.From.IsZero() && !f.To.IsZero() && f.To.Before(f.From) {
		return f, domain.Invalid("end_time", "end_time must not be before start_time")
	}
	if asOfRequested(r) {
		// The log as it was then: the records of events recorded by then.
		at, err := asOfTime(r)
		if err != nil {
			return f, err
		}
		if f.To.IsZero() || f.To.After(at) {
			f.To = at
		}
	}
	if v := q.Get("response_status_code"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 100 || n > 599 {
			return f, domain.Invalid("response_status_code", "response_status_code must be an HTTP status from 100 to 599")
		}
		f.StatusCode = n
	}
	if v := q.Get("user_type"); v != "" {
		typ, ok := auditUserTypes[strings.ToLower(strings.TrimSpace(v))]
		if !ok {
			return f, domain.Invalid("user_type", "user_type must be one of api_key, system, user (got %q)", v)
		}
		f.ActorType = typ
	}
	if v := q.Get("resource_type"); v != "" {
		typ, ok := projections.AuditResourceType(v)
		if !ok {
			return f, domain.Invalid("resource_type", "resource_type must be one of %s (got %q)",
				strings.Join(projections.AuditResourceTypes(), ", "), v)
		}
		f.ResourceType = typ
	}
	if v := q.Get("method"); v != "" {
		i := slices.IndexFunc(auditMethods, func(m string) bool { return strings.EqualFold(m, strings.TrimSpace(v)) })
		if i < 0 {
			return f, domain.Invalid("method", "method must be one of %s (got %q)", strings.Join(auditMethods, ", "), v)
		}
		f.Method = auditMethods[i]
	}
	if v := q.Get("action"); v != "" {
		actions := a.auditActions()
		i := slices.IndexFunc(actions, func(t string) bool { return strings.EqualFold(t, strings.TrimSpace(v)) })
		if i < 0 {
			return f, domain.Invalid("action", "action must be one of %s (got %q)", strings.Join(actions, ", "), v)
		}
		f.Action = actions[i]
	}
	switch v := strings.ToLower(strings.TrimSpace(q.Get("order"))); v {
	case "", "desc":
		f.NewestFirst = true
	case "asc":
	default:
		return f, domain.Invalid("order", "order must be desc (newest first, the default) or asc (got %q)", q.Get("order"))
	}
	return f, nil
}

// auditActions are the actions a record can name: every event type, sorted.
func (a *Admin) auditActions() []string {
	types := a.Deps.Registry.Types()
	slices.Sort(types)
	return types
}
