package httpapi

import (
	"net/http"
	"strconv"
	"time"

	"github.com/gorilla/mux"

	"github.com/causeway/causeway/domain"
	"github.com/causeway/causeway/projections"
)

// The audit log is the event stream itself, read back: every change with who, what, where,
// and the resource's state before and after, plus every refused attempt.
func (a *Admin) registerAuditLogs(r *mux.Router) {
	on := func(h handler) http.Handler {
		return a.route("audit_log", func(w http.ResponseWriter, r *http.Request) (int, any, error) {
			if !a.Features.AuditLogs {
				return 0, nil, domain.Errorf(domain.CodeDisabled, "audit logs are turned off (AUDIT_LOGS_ENABLED=OFF)")
			}
			actor := actorFrom(r.Context())
			if !actor.IsOrgAdmin() {
				return 0, nil, domain.Errorf(domain.CodeForbidden, "only organisation owners and admins may read the audit log")
			}
			if err := requireScope(actor, "audit_logs.list"); err != nil {
				return 0, nil, err
			}
			return h(w, r)
		})
	}
	r.Handle("/audit-logs", on(func(w http.ResponseWriter, r *http.Request) (int, any, error) {
		f, err := auditFilter(r, actorFrom(r.Context()).OrganisationID)
		if err != nil {
			return 0, nil, err
		}
		list, err := page(r, a.Read.AuditLog(f))
		return http.StatusOK, list, err
	})).Methods(http.MethodGet)
	r.Handle("/audit-logs/{id}", on(func(w http.ResponseWriter, r *http.Request) (int, any, error) {
		rec, ok := a.Read.AuditRecord(actorFrom(r.Context()).OrganisationID, mux.Vars(r)["id"])
		if !ok {
			return 0, nil, domain.Errorf(domain.CodeNotFound, "audit log record %s not found", mux.Vars(r)["id"])
		}
		return http.StatusOK, rec, nil
	})).Methods(http.MethodGet)
	a.registerAuditHistory(r)
}

// auditFilter reads the reference's filters: start_time, end_time, user_id, user_type,
// workspace_id, resource_type, action, method, response_status_code, request_id, client_ip.
func auditFilter(r *http.Request, orgID string) (projections.AuditFilter, error) {
	q := r.URL.Query()
	f := projections.AuditFilter{OrganisationID: orgID, ActorID: q.Get("user_id"), ActorType: q.Get("user_type"),
		WorkspaceID: q.Get("workspace_id"), ResourceType: q.Get("resource_type"), ResourceID: q.Get("resource_id"),
		Action: q.Get("action"), Method: q.Get("method"), RequestID: q.Get("request_id"), ClientIP: q.Get("client_ip")}
	for name, dst := range map[string]*time.Time{"start_time": &f.From, "end_time": &f.To} {
		if v := q.Get(name); v != "" {
			t, err := time.Parse(time.RFC3339Nano, v)
			if err != nil {
				return f, domain.Invalid(name, "%s must be an RFC 3339 time, such as 2026-01-02T15:04:05Z", name)
			}
			*dst = t
		}
	}
	if !f.From.IsZero() && !f.To.IsZero() && f.To.Before(f.From) {
		return f, domain.Invalid("end_time", "end_time must not be before start_time")
	}
	if v := q.Get("response_status_code"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 100 || n > 599 {
			return f, domain.Invalid("response_status_code", "response_status_code must be an HTTP status from 100 to 599")
		}
		f.StatusCode = n
	}
	switch f.ActorType {
	case "", "user", "api_key", "system":
	default:
		return f, domain.Invalid("user_type", "user_type must be user, api_key or system")
	}
	return f, nil
}
