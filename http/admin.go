package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/causeway/causeway/cluster"
	"github.com/causeway/causeway/commands"
	"github.com/causeway/causeway/domain"
	"github.com/causeway/causeway/eventstore"
	"github.com/causeway/causeway/gateway"
	"github.com/causeway/causeway/queries"
)

// Admin is what the admin routes need: the read model, the command handlers, and how to
// record a refusal.
type Admin struct {
	Log  *slog.Logger
	Read ReadModel
	// Commands are the write side's handlers, assembled once at start (commands.NewApp).
	Commands *commands.App
	// Deps read the event store for past states (?as_of=, history); Secret is the server
	// secret export links are signed with.
	Deps     commands.Deps
	Secret   []byte
	Now      func() time.Time
	Features Features
	// RecordDenial appends a refused attempt to the audit log (asynchronously is fine).
	RecordDenial func(ctx context.Context, d domain.AccessDenied, md eventstore.Metadata)
	// Organisation is the deployment's organisation (there is one per deployment): a refusal
	// whose key did not resolve (missing, unknown, expired) is recorded under it, so that its
	// admins see it in the audit log.
	Organisation string
	// Idempotency finds the first request of an idempotency key on any resource; nil: a key
	// reused for another request is refused only on the resource it first wrote.
	Idempotency IdempotencyIndex
	// PublicURL is how clients reach this service (CAUSEWAY_PUBLIC_URL), for links such as
	// invites; empty: taken from each request's Host.
	PublicURL string
	// Instances is the registry of the deployment's instances (server mode: cluster/postgres);
	// nil embedded.
	Instances cluster.Registry
	// WriteWait bounds read-your-writes: a write answers once the read model has its events.
	WriteWait time.Duration
	// Analytics is the request log store (SQLite or ClickHouse); nil: no analytics or logs routes.
	Analytics AnalyticsStore
	// Retention bounds what analytics and logs show (LOG_RETENTION_DISPLAY,
	// METRICS_RETENTION_DISPLAY); zero fields take the specification's 90 and 365 days.
	Retention Retention
	// Exports is where export jobs write their files; empty: DATA_DIR/exports is not set up.
	ExportDir string
	// Pricing answers model prices; nil: no pricing routes.
	Pricing PricingReader
}

// Retention is how far back analytics and logs reach.
type Retention struct {
	Logs    time.Duration
	Metrics time.Duration
}

// Features are the self-hosting switches that turn admin areas off.
type Features struct {
	APIAccess   bool
	Policy      bool
	UsageLimits bool
	AuditLogs   bool
	DataExports bool
	// Guardrails serves /guardrails (GUARDRAILS_ENABLED).
	Guardrails bool
}

// PositionHeader carries the global position of a write's last event; reads accept it as
// min_position to wait until the read model has reached it.
const PositionHeader = "x-gateway-position"

type actorKey struct{}

func actorFrom(ctx context.Context) domain.Actor {
	a, _ := ctx.Value(actorKey{}).(domain.Actor)
	return a
}

// handler is an admin endpoint: it returns the status and body to answer, or an error.
type handler func(w http.ResponseWriter, r *http.Request) (int, any, error)

// route wraps an admin endpoint: authenticate from memory, put who and where in the context
// for the commands, answer JSON or the error shape, and record refusals in the audit log.
func (a *Admin) route(resource string, h handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !a.Features.APIAccess {
			WriteError(w, r, a.Log, domain.Errorf(domain.CodeDisabled, "the admin API is turned off (API_ACCESS_ENABLED=OFF)"))
			return
		}
		// The same rule as the gateway's: exactly one key, compared exactly.
		presented, err := gateway.PresentedKey(r.Header)
		if err != nil {
			WriteError(w, r, a.Log, err)
			return
		}
		actor, err := a.Read.Authenticate(presented, a.Now())
		if err != nil {
			a.deny(r, resource, domain.Actor{}, err)
			WriteError(w, r, a.Log, err)
			return
		}
		req := commands.Request{
			Actor: actor, RequestID: TraceID(r.Context()), ClientIP: clientIP(r), UserAgent: r.UserAgent(),
			Method: r.Method, Path: r.URL.Path, IdempotencyKey: strings.TrimSpace(r.Header.Get(IdempotencyHeader)),
		}
		if err := a.idempotent(r, &req); err != nil {
			WriteError(w, r, a.Log, err)
			return
		}
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			// Refused before the write, so that a header the write cannot honour leaves
			// nothing half done.
			if _, err := instancesWait(r); err != nil {
				WriteError(w, r, a.Log, err)
				return
			}
			if req.IfMatch, err = ifMatch(r); err != nil {
				WriteError(w, r, a.Log, err)
				return
			}
		}
		ctx := context.WithValue(r.Context(), actorKey{}, actor)
		r = r.WithContext(commands.WithRequest(ctx, req))
		if err := a.waitForMinPosition(r); err != nil {
			WriteError(w, r, a.Log, err)
			return
		}
		status, body, err := h(w, r)
		if err != nil {
			if code := domain.ErrorCode(err); code == domain.CodeForbidden || code == domain.CodeUnauthorized {
				a.deny(r, resource, actor, err)
			}
			WriteError(w, r, a.Log, err)
			return
		}
		if status == http.StatusNoContent {
			w.WriteHeader(status)
			return
		}
		WriteJSON(w, status, body)
	})
}

// deny records a refused attempt: who (when known), what, from where; never the key nor its
// hash. A refusal before any key resolved is the deployment organisation's.
func (a *Admin) deny(r *http.Request, resource string, actor domain.Actor, err error) {
	if a.RecordDenial == nil {
		return
	}
	status := statusOf[domain.ErrorCode(err)]
	var appErr *domain.Error
	reason := "refused"
	if errors.As(err, &appErr) {
		reason = appErr.Message
	}
	org := actor.OrganisationID
	if org == "" {
		org = a.Organisation
	}
	md := eventstore.Metadata{ActorID: actor.ID, ActorKind: eventstore.ActorKind(actor.Kind), OrganisationID: org,
		WorkspaceID: actor.WorkspaceID, RequestID: TraceID(r.Context()), ClientIP: clientIP(r), UserAgent: r.UserAgent(),
		Extra: map[string]string{"method": r.Method, "path": r.URL.Path}}
	a.RecordDenial(context.WithoutCancel(r.Context()), domain.AccessDenied{Status: status, Reason: reason,
		Method: r.Method, Path: r.URL.Path, ResourceType: resource, At: a.Now()}, md)
}

// clientIP is the peer's address. X-Forwarded-For is not trusted: a client could forge it.
func clientIP(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

// written passes on a command's error, or lets a successful write answer once the read model
// has reached its position, so the client can read what it wrote at once; it says the
// position in a header.
func (a *Admin) written(w http.ResponseWriter, r *http.Request, res commands.Result, cmdErr error) error {
	if cmdErr != nil {
		return cmdErr
	}
	if res.Position == 0 {
		return nil
	}
	w.Header().Set(PositionHeader, strconv.FormatUint(uint64(res.Position), 10))
	if res.Replayed {
		w.Header().Set("Idempotent-Replayed", "true")
	}
	wait := a.WriteWait
	if wait <= 0 {
		wait = 5 * time.Second
	}
	ctx, cancel := context.WithTimeout(r.Context(), wait)
	defer cancel()
	if err := a.Read.WaitFor(ctx, res.Position); err != nil {
		return &domain.Error{Code: domain.CodeUnavailable, Err: err, Message: fmt.Sprintf(
			"the change was saved (position %d) but the read model has not caught up within %s; retry the read with min_position", res.Position, wait)}
	}
	all, err := instancesWait(r)
	if err != nil {
		return err
	}
	return a.waitForInstances(r, res.Position, all)
}

// waitForMinPosition honours ?min_position= (or the position header) on reads.
func (a *Admin) waitForMinPosition(r *http.Request) error {
	raw := r.URL.Query().Get("min_position")
	if raw == "" {
		raw = r.Header.Get(PositionHeader)
	}
	if raw == "" || r.Method != http.MethodGet {
		return nil
	}
	pos, err := strconv.ParseUint(raw, 10, 64)
	if err != nil {
		return domain.Invalid("min_position", "min_position must be a whole number")
	}
	wait := a.WriteWait
	if wait <= 0 {
		wait = 5 * time.Second
	}
	ctx, cancel := context.WithTimeout(r.Context(), wait)
	defer cancel()
	if err := a.Read.WaitFor(ctx, eventstore.Position(pos)); err != nil {
		return &domain.Error{Code: domain.CodeUnavailable, Err: err, Message: fmt.Sprintf("the read model has not reached position %d within %s", pos, wait)}
	}
	return nil
}

// maxAdminBody bounds admin request bodies.
const maxAdminBody = 1 << 20

func tooLargeAdminBody() error {
	return domain.Errorf(domain.CodeTooLarge, "the request body is larger than the admin API's limit of %d bytes", maxAdminBody)
}

// decode reads a JSON body into v strictly: unknown fields, trailing data and bodies over
// 1 MiB are refused with a 4xx that says what was wrong.
func decode(r *http.Request, v any) error {
	body, err := io.ReadAll(io.LimitReader(r.Body, maxAdminBody+1))
	if err != nil {
		return domain.Invalid("", "the request body could not be read")
	}
	if len(body) > maxAdminBody {
		return tooLargeAdminBody()
	}
	if len(bytes.TrimSpace(body)) == 0 {
		return domain.Invalid("", "the request body is empty; send a JSON object")
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return jsonError(err)
	}
	if dec.More() {
		return domain.Invalid("", "the request body holds more than one JSON value")
	}
	return nil
}

// jsonError turns a decoding error into a message that names the field.
func jsonError(err error) error {
	var typeErr *json.UnmarshalTypeError
	var syntaxErr *json.SyntaxError
	switch {
	case errors.As(err, &typeErr):
		return domain.Invalid(typeErr.Field, "%s must be %s, not %s", typeErr.Field, jsonKind(typeErr.Type.Kind().String()), typeErr.Value)
	case errors.As(err, &syntaxErr):
		return domain.Invalid("", "the request body is not valid JSON (at byte %d)", syntaxErr.Offset)
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		field := strings.Trim(strings.TrimPrefix(err.Error(), "json: unknown field "), `"`)
		return domain.Invalid(field, "unknown field %q", field)
	}
	var appErr *domain.Error
	if errors.As(err, &appErr) {
		return appErr
	}
	return domain.Invalid("", "the request body is not valid: %v", err)
}

func jsonKind(k string) string {
	switch k {
	case "float64", "int", "int64", "int32":
		return "a number"
	case "slice":
		return "an array"
	case "map", "struct", "ptr":
		return "an object"
	}
	return "a " + k
}

// listAnswer is the list shape of the reference.
type listAnswer[T any] struct {
	Object      string `json:"object"`
	Total       int    `json:"total"`
	CurrentPage int    `json:"current_page"`
	PageSize    int    `json:"page_size"`
	Data        []T    `json:"data"`
}

const (
	defaultPageSize = 50
	maxPageSize     = 1000
)

// page cuts items to the requested page: current_page (0-based) and page_size, also spelled
// currentPage and pageSize.
func page[T any](r *http.Request, items []T) (listAnswer[T], error) {
	q := r.URL.Query()
	num := func(names []string, def, max int) (int, error) {
		for _, n := range names {
			if v := q.Get(n); v != "" {
				i, err := strconv.Atoi(v)
				if err != nil || i < 0 || i > max {
					return 0, domain.Invalid(n, "%s must be a whole number from 0 to %d", n, max)
				}
				return i, nil
			}
		}
		return def, nil
	}
	size, err := num([]string{"page_size", "pageSize"}, defaultPageSize, maxPageSize)
	if err != nil {
		return listAnswer[T]{}, err
	}
	if size == 0 {
		size = defaultPageSize
	}
	cur, err := num([]string{"current_page", "currentPage"}, 0, 1_000_000)
	if err != nil {
		return listAnswer[T]{}, err
	}
	start := min(cur*size, len(items))
	end := min(start+size, len(items))
	data := items[start:end]
	if data == nil {
		data = []T{}
	}
	return listAnswer[T]{Object: "list", Total: len(items), CurrentPage: cur, PageSize: size, Data: data}, nil
}

// statuses parses a comma-separated status filter; def when absent.
func statuses(r *http.Request, def string, allowed ...string) (map[string]bool, error) {
	raw := r.URL.Query().Get("status")
	if raw == "" {
		raw = def
	}
	out := map[string]bool{}
	for _, s := range strings.Split(raw, ",") {
		s = strings.ToLower(strings.TrimSpace(s))
		ok := false
		for _, a := range allowed {
			ok = ok || s == a
		}
		if !ok {
			return nil, domain.Invalid("status", "status must be %s (got %q)", strings.Join(allowed, " or "), s)
		}
		out[s] = true
	}
	return out, nil
}

// visibleWorkspaces, requireScope and canSee are the read side's authorisation
// (queries.VisibleWorkspaces, queries.RequireScope, queries.CanSee), as the routes call it.
func visibleWorkspaces(a domain.Actor) map[string]bool { return queries.VisibleWorkspaces(a) }

func requireScope(a domain.Actor, scope string) error { return queries.RequireScope(a, scope) }

func canSee(a domain.Actor, workspaceID string) bool { return queries.CanSee(a, workspaceID) }
