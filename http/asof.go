package httpapi

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/gorilla/mux"

	"github.com/causeway/causeway/domain"
	"github.com/causeway/causeway/eventstore"
	"github.com/causeway/causeway/gateway"
	"github.com/causeway/causeway/projections"
	"github.com/causeway/causeway/projections/memory"
	"github.com/causeway/causeway/queries"
)

// Audit time travel: every control-plane resource can be read as it was at an instant
// (?as_of= on its GET), and its whole history read event by event. Both fold the resource's
// own event stream, not the read model, which knows only the present.

// AsOfHeader says since when the state an as_of read answers has held: the time the last
// event folded into it was recorded.
const AsOfHeader = "x-gateway-as-of"

const asOfParam = "as_of"

// asOfRequested reports whether a read asks for a resource's past state.
func asOfRequested(r *http.Request) bool { return r.URL.Query().Has(asOfParam) }

// asOfSkew is how far ahead of this server's clock an as_of may be and still mean now: a
// client's "now", or its clock a little ahead of ours, must not be refused.
const asOfSkew = 5 * time.Second

// asOfTime reads as_of: an RFC 3339 time, at most asOfSkew after now; a time after now is read
// as now. Now is the wall clock, not the admin clock, because the event store stamps
// RecordedAt with the wall clock.
func asOfTime(r *http.Request) (time.Time, error) { return parseAsOf(r.URL.Query().Get(asOfParam)) }

// parseAsOf is asOfTime of the parameter's value.
func parseAsOf(raw string) (time.Time, error) {
	// An unencoded "+01:00" offset arrives as " 01:00"; a space is never valid in the time.
	at, err := time.Parse(time.RFC3339Nano, strings.ReplaceAll(raw, " ", "+"))
	if err != nil {
		return time.Time{}, domain.Invalid(asOfParam, "as_of must be an RFC 3339 time, such as 2026-01-02T15:04:05Z (got %q)", raw)
	}
	now := time.Now()
	if bound := now.Add(asOfSkew); at.After(bound) {
		return time.Time{}, domain.Invalid(asOfParam, "as_of must not be after now plus %s (%s; got %s)",
			asOfSkew, bound.UTC().Format(time.RFC3339Nano), at.UTC().Format(time.RFC3339Nano))
	}
	if at.After(now) {
		at = now
	}
	return at, nil
}

// aggregate is a resource's state folded from its stream, P being the pointer that Apply
// takes.
type aggregate[A any] interface {
	*A
	domain.Aggregate
}

// asOfTarget is how one resource's GET answers ?as_of: the normal read's id, authorisation
// and view, applied to the state folded from the resource's stream up to the instant.
type asOfTarget[A any, P aggregate[A]] struct {
	noun   string // names the resource in messages
	prefix string // of its stream
	// authorise is the normal read's check of the actor alone (kind, scope), before any read.
	authorise func(domain.Actor) error
	// id reads the resource's id from the request as the normal read does.
	id func(a *Admin, r *http.Request) (string, error)
	// exists is whether the folded state is a resource the normal read would show at all (a
	// deleted key or a removed user is not).
	exists func(P) bool
	// view checks that the actor may see the resource as it was (a resource out of sight is
	// not found) and renders it with the normal read's view, at the instant.
	view func(a *Admin, r *http.Request, v A, at time.Time) (any, error)
}

// asOf answers a GET with ?as_of=: the resource as it was then, or 404 when it did not exist
// then. The answer has the normal read's shape and says in AsOfHeader since when it held.
func asOf[A any, P aggregate[A]](a *Admin, w http.ResponseWriter, r *http.Request, t asOfTarget[A, P]) (int, any, error) {
	actor := actorFrom(r.Context())
	if t.authorise != nil {
		if err := t.authorise(actor); err != nil {
			return 0, nil, err
		}
	}
	id, err := t.id(a, r)
	if err != nil {
		return 0, nil, err
	}
	at, err := asOfTime(r)
	if err != nil {
		return 0, nil, err
	}
	agg, last, ok, err := queries.LoadAsOfEvent(r.Context(), a.reads(), domain.Stream(t.prefix, id), func() P { return P(new(A)) }, at)
	if err != nil {
		return 0, nil, err
	}
	if ok && queries.OrganisationOf(agg) != actor.OrganisationID {
		return 0, nil, domain.Errorf(domain.CodeNotFound, "%s %s not found", t.noun, id)
	}
	if !ok || !t.exists(agg) {
		return 0, nil, domain.Errorf(domain.CodeNotFound, "%s %s did not exist at %s", t.noun, id, at.UTC().Format(time.RFC3339Nano))
	}
	body, err := t.view(a, r, *agg, at)
	if err != nil {
		return 0, nil, err
	}
	w.Header().Set(AsOfHeader, last.RecordedAt.UTC().Format(time.RFC3339Nano))
	return http.StatusOK, body, nil
}

// pathID adapts a normal read's id parser to asOfTarget.id.
func pathID(parse func(*http.Request) (string, error)) func(*Admin, *http.Request) (string, error) {
	return func(_ *Admin, r *http.Request) (string, error) { return parse(r) }
}

func notFound(noun, id string) error {
	return domain.Errorf(domain.CodeNotFound, "%s %s not found", noun, id)
}

var rateLimitPolicyAsOf = asOfTarget[domain.RateLimitPolicy, *domain.RateLimitPolicy]{
	noun: "rate limit policy", prefix: domain.RateLimitPolicyPrefix,
	authorise: func(actor domain.Actor) error { return requireScope(actor, "policies.read") },
	id: func(_ *Admin, r *http.Request) (string, error) {
		id := mux.Vars(r)["id"]
		if !isUUID(id) {
			return "", domain.Invalid("rateLimitsPolicyId", "rateLimitsPolicyId must be a UUID")
		}
		return id, nil
	},
	exists: (*domain.RateLimitPolicy).Exists,
	view: func(_ *Admin, r *http.Request, p domain.RateLimitPolicy, _ time.Time) (any, error) {
		if !canSee(actorFrom(r.Context()), p.WorkspaceID) {
			return nil, notFound("rate limit policy", p.ID)
		}
		return rateLimitPolicyView(p), nil
	},
}

var usageLimitPolicyAsOf = asOfTarget[domain.UsageLimitPolicy, *domain.UsageLimitPolicy]{
	noun: "usage limit policy", prefix: domain.UsageLimitPolicyPrefix,
	authorise: func(actor domain.Actor) error { return requireScope(actor, "policies.read") },
	id:        pathID(usageLimitPolicyID),
	exists:    (*domain.UsageLimitPolicy).Exists,
	view: func(_ *Admin, r *http.Request, p domain.UsageLimitPolicy, _ time.Time) (any, error) {
		withUsage := false
		if raw := r.URL.Query().Get("include_usage"); raw != "" {
			var err error
			if withUsage, err = strconv.ParseBool(raw); err != nil {
				return nil, domain.Invalid("include_usage", "include_usage must be true or false (got %q)", raw)
			}
		}
		if !canSee(actorFrom(r.Context()), p.WorkspaceID) {
			return nil, notFound("usage limit policy", p.ID)
		}
		return usageLimitPolicyView(p, withUsage), nil
	},
}

var workspaceAsOf = asOfTarget[domain.Workspace, *domain.Workspace]{
	noun: "workspace", prefix: domain.WorkspacePrefix,
	authorise: func(actor domain.Actor) error { return requireScope(actor, "workspaces.read") },
	id: func(a *Admin, r *http.Request) (string, error) {
		ref := mux.Vars(r)["id"]
		if isUUID(ref) {
			return ref, nil
		}
		// Slugs never change, so today's slug names the same workspace in the past.
		ws, err := a.reads().WorkspaceByRef(r.Context(), actorFrom(r.Context()).OrganisationID, ref)
		return ws.ID, err
	},
	exists: (*domain.Workspace).Exists,
	view: func(a *Admin, r *http.Request, ws domain.Workspace, at time.Time) (any, error) {
		if !canSee(actorFrom(r.Context()), ws.ID) {
			return nil, notFound("workspace", ws.ID)
		}
		users, err := a.workspaceMembersAsOf(r.Context(), ws, at)
		if err != nil {
			return nil, err
		}
		return workspaceWithUsers{workspaceAnswer: workspaceView(ws), Users: users}, nil
	},
}

// workspaceMembersAsOf renders a workspace's members as they were at the instant
// (queries.WorkspaceMembersAsOf).
func (a *Admin) workspaceMembersAsOf(ctx context.Context, ws domain.Workspace, at time.Time) ([]workspaceMemberAnswer, error) {
	members, err := a.reads().WorkspaceMembersAsOf(ctx, ws, at)
	if err != nil {
		return nil, err
	}
	out := make([]workspaceMemberAnswer, 0, len(members))
	for _, m := range members {
		out = append(out, workspaceMemberView(ws.ID, m))
	}
	return out, nil
}

var userAsOf = asOfTarget[domain.User, *domain.User]{
	noun: "user", prefix: domain.UserPrefix,
	authorise: func(actor domain.Actor) error { return requireUserAdmin(actor, "organisation_users.read") },
	id:        pathID(userID),
	exists:    (*domain.User).Exists,
	view: func(a *Admin, r *http.Request, u domain.User, at time.Time) (any, error) {
		ids, err := a.reads().MemberWorkspacesAsOf(r.Context(), u, at)
		return userView(u, ids), err
	},
}

var inviteAsOf = asOfTarget[domain.Invite, *domain.Invite]{
	noun: "invite", prefix: domain.InvitePrefix,
	authorise: func(actor domain.Actor) error { return requireScope(actor, "invites.read") },
	id:        pathID(inviteID),
	exists:    (*domain.Invite).Exists,
	view: func(_ *Admin, r *http.Request, i domain.Invite, at time.Time) (any, error) {
		if !canSeeInvite(actorFrom(r.Context()), i) {
			return nil, notFound("invite", i.ID)
		}
		return inviteView(i, at), nil
	},
}

var apiKeyAsOf = asOfTarget[domain.APIKey, *domain.APIKey]{
	noun: "api key", prefix: domain.APIKeyPrefix,
	id:     pathID(keyID),
	exists: (*domain.APIKey).Exists,
	view: func(_ *Admin, r *http.Request, k domain.APIKey, at time.Time) (any, error) {
		if err := keyReadable(actorFrom(r.Context()), k); err != nil {
			return nil, err
		}
		return apiKeyView(k, at), nil
	},
}

var notificationAsOf = asOfTarget[domain.Notification, *domain.Notification]{
	noun: "notification", prefix: domain.NotificationPrefix,
	id: func(_ *Admin, r *http.Request) (string, error) {
		id := mux.Vars(r)["id"]
		if !isUUID(id) {
			return "", domain.Invalid("notificationId", "notificationId must be a UUID")
		}
		return id, nil
	},
	exists: func(n *domain.Notification) bool { return n.ID != "" },
	view: func(_ *Admin, r *http.Request, n domain.Notification, _ time.Time) (any, error) {
		if !queries.CanSeeNotification(actorFrom(r.Context()), n) {
			return nil, notFound("notification", n.ID)
		}
		return notificationView(n), nil
	},
}

// organisationAsOf reads the actor's own organisation settings; view is the normal read's.
func organisationAsOf(view func(domain.Organisation) organisationSettingsAnswer) asOfTarget[domain.Organisation, *domain.Organisation] {
	return asOfTarget[domain.Organisation, *domain.Organisation]{
		noun: "organisation", prefix: domain.OrganisationPrefix,
		authorise: func(actor domain.Actor) error { return requireOrgSettingsReader(actor, "organisations.read") },
		id: func(_ *Admin, r *http.Request) (string, error) {
			own := actorFrom(r.Context()).OrganisationID
			if id, given := mux.Vars(r)["orgId"]; given && id != own {
				return "", notFound("organisation", id)
			}
			return own, nil
		},
		exists: (*domain.Organisation).Exists,
		view: func(_ *Admin, _ *http.Request, o domain.Organisation, _ time.Time) (any, error) {
			return view(o), nil
		},
	}
}

// historyEntry is one event of a resource's history: what happened, who did it and from
// where, and the resource's state before and after (null before its first event).
type historyEntry struct {
	Position  uint64          `json:"position"`
	Revision  uint64          `json:"revision"`
	Timestamp time.Time       `json:"timestamp"`
	Action    string          `json:"action"`
	Actor     historyActor    `json:"actor"`
	RequestID string          `json:"request_id"`
	ClientIP  string          `json:"client_ip"`
	Method    string          `json:"method"`
	URI       string          `json:"uri"`
	Before    json.RawMessage `json:"before"`
	After     json.RawMessage `json:"after"`
}

type historyActor struct {
	ID   string `json:"id"`
	Kind string `json:"kind"`
}

// registerAuditHistory adds GET /audit/resources/{type}/{id}/history: a resource's every
// event, oldest first, a page at a time. Like the audit log it is for organisation owners and
// admins with audit_logs.list, and only while audit logs are on.
func (a *Admin) registerAuditHistory(r *mux.Router) {
	r.Handle("/audit/resources/{type}/{id}/history", a.route("audit_log", func(w http.ResponseWriter, r *http.Request) (int, any, error) {
		if !a.Features.AuditLogs {
			return 0, nil, domain.Errorf(domain.CodeDisabled, "audit logs are turned off (AUDIT_LOGS_ENABLED=OFF)")
		}
		actor := actorFrom(r.Context())
		if !actor.IsOrgAdmin() || workspaceKeyActor(actor) {
			return 0, nil, domain.Errorf(domain.CodeForbidden, "only organisation owners and admins may read a resource's history")
		}
		if err := requireScope(actor, "audit_logs.list"); err != nil {
			return 0, nil, err
		}
		typ, id := mux.Vars(r)["type"], mux.Vars(r)["id"]
		prefix, ok := projections.HistoryStreamPrefix(typ)
		noun, _ := projections.AuditResourceType(typ)
		if !ok {
			return 0, nil, domain.Invalid("type", "type must be one of %s, or another spelling of one (its stream prefix, such as apikey, or its path, such as api-keys; got %q)",
				strings.Join(projections.HistoryResourceTypes(), ", "), typ)
		}
		var cut *time.Time
		if asOfRequested(r) {
			at, err := asOfTime(r)
			if err != nil {
				return 0, nil, err
			}
			cut = &at
		}
		id, err := a.reads().HistoryID(r.Context(), actor.OrganisationID, prefix, id, isUUID)
		if err != nil {
			return 0, nil, err
		}
		// Only the requested page's states are encoded; page validates the paging first.
		win, err := page[historyEntry](r, nil)
		if err != nil {
			return 0, nil, err
		}
		from := win.CurrentPage * win.PageSize
		changes, final, err := a.reads().History(r.Context(), domain.Stream(prefix, id),
			func(i int) bool { return i >= from && i < from+win.PageSize })
		if err != nil {
			return 0, nil, err
		}
		if final == nil || queries.OrganisationOf(final) != actor.OrganisationID {
			return 0, nil, domain.Errorf(domain.CodeNotFound, "%s %s not found", noun, id)
		}
		if cut != nil {
			// The history as it was then: the stream up to its last event recorded by then,
			// cut as a read as of the instant cuts it.
			n := len(changes)
			for n > 0 && changes[n-1].Event.RecordedAt.After(*cut) {
				n--
			}
			if n == 0 {
				return 0, nil, domain.Errorf(domain.CodeNotFound, "%s %s did not exist at %s", noun, id, cut.UTC().Format(time.RFC3339Nano))
			}
			changes = changes[:n]
		}
		entries := make([]historyEntry, len(changes))
		for i, c := range changes {
			md := c.Event.Metadata
			entries[i] = historyEntry{Position: uint64(c.Event.Position), Revision: c.Event.Revision,
				Timestamp: c.Event.RecordedAt.UTC(), Action: c.Event.Type, Actor: historyActor{ID: md.ActorID, Kind: string(md.ActorKind)},
				RequestID: md.RequestID, ClientIP: md.ClientIP, Method: md.Extra["method"], URI: md.Extra["path"],
				Before: c.Before, After: c.After}
		}
		list, err := page(r, entries)
		return http.StatusOK, list, err
	})).Methods(http.MethodGet)
}

// Lists as of an instant. A list's filters, authorisation and views are its normal read's; as
// of an instant they run against the read model as it was then (queries.PastModel), served by
// a router of its own whose admin reads that model, and which authenticates and waits on the
// live one. The reads that answer as_of themselves (single resources, the audit log, history,
// request logs and analytics) are left to do so.

// pastReadRoutes are the GET routes answered from the read model as it was: every list, and
// the single reads that have no as_of of their own.
var pastReadRoutes = func() map[string]bool {
	out := map[string]bool{}
	for _, r := range []string{
		"/workspaces",
		"/workspaces/{id}/users",
		"/workspaces/{id}/users/{userId}",
		"/workspaces/{id}/settings",
		"/users",
		"/users/invites",
		"/api-keys",
		"/policies/rate-limits",
		"/policies/usage-limits",
		"/policies/usage-limits/{id}/entities",
		"/notifications",
		"/webhooks",
		"/configs",
		"/configs/{slug}/versions",
		"/guardrails",
		"/guardrails/{guardrailId}/versions",
		"/integrations",
		"/integrations/{slug}/workspaces",
		"/providers",
		"/virtual-keys",
		"/logs/exports",
		"/logs/exports/{exportId}",
		"/model-configs/pricing/{provider}/{model:.+}",
		"/prompts",
		"/prompts/{promptId}/versions",
		"/prompts/partials",
		"/prompts/partials/{promptPartialId}/versions",
		"/labels",
		"/collections",
		"/collections/{collectionId}",
	} {
		out[r] = true
	}
	return out
}()

// noPastRoutes are the GET routes that refuse as_of: they act now (a download link, a file)
// rather than read a state.
var noPastRoutes = map[string]string{
	"/logs/exports/{exportId}/download": "a download link is issued now, for the file the export holds now",
	"/logs/exports/{exportId}/file":     "an export's file is served as it is now",
	"/instances":                        "the instances are listed as their heartbeats say now; the event store keeps no past of them",
}

type pastKey struct{}

// pastReads is the middleware that serves GETs with ?as_of= of pastReadRoutes from the read
// model as it was, and refuses as_of on noPastRoutes. An unauthenticated request is passed on,
// to be refused (and recorded) as any other, before the store is read.
func (a *Admin) pastReads(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet || !asOfRequested(r) || r.Context().Value(pastKey{}) != nil {
			next.ServeHTTP(w, r)
			return
		}
		route := mux.CurrentRoute(r)
		if route == nil {
			next.ServeHTTP(w, r)
			return
		}
		tmpl, _ := route.GetPathTemplate()
		tmpl = strings.TrimPrefix(tmpl, BasePath)
		if why, refused := noPastRoutes[tmpl]; refused {
			WriteError(w, r, a.Log, domain.Invalid(asOfParam, "as_of is not supported on GET %s: %s", tmpl, why))
			return
		}
		if !pastReadRoutes[tmpl] || !a.Features.APIAccess {
			next.ServeHTTP(w, r)
			return
		}
		presented, err := gateway.PresentedKey(r.Header)
		if err != nil {
			next.ServeHTTP(w, r)
			return
		}
		if _, err := a.Read.Authenticate(presented, a.Now()); err != nil {
			next.ServeHTTP(w, r)
			return
		}
		at, err := asOfTime(r)
		if err != nil {
			WriteError(w, r, a.Log, err)
			return
		}
		past, since, ok, err := a.reads().PastModel(r.Context(), at)
		if err != nil {
			WriteError(w, r, a.Log, err)
			return
		}
		if !ok {
			WriteError(w, r, a.Log, domain.Invalid(asOfParam, "as_of is not supported on lists here: the event store cannot be read whole"))
			return
		}
		if !since.IsZero() {
			w.Header().Set(AsOfHeader, since.UTC().Format(time.RFC3339Nano))
		}
		a.pastRouter(past, at).ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), pastKey{}, true)))
	})
}

// pastRouter is the admin API reading past instead of the live read model, its clock stopped
// at the instant, so that what a view derives from the time (a key expired, an invite
// pending) is derived as of the instant too, as a single resource's as_of view derives it.
func (a *Admin) pastRouter(past *memory.Model, at time.Time) http.Handler {
	then := *a
	then.Read = pastReadModel{Model: past, live: a.Read, now: a.Now}
	then.Now = func() time.Time { return at }
	if record := a.RecordDenial; record != nil {
		// A refusal happens now, whatever instant was read.
		then.RecordDenial = func(ctx context.Context, d domain.AccessDenied, md eventstore.Metadata) {
			d.At = a.Now()
			record(ctx, d, md)
		}
	}
	root := mux.NewRouter()
	then.Register(root.PathPrefix(BasePath).Subrouter())
	return root
}

// pastReadModel reads the past, and authenticates and waits on the live read model: the key
// that asks is judged as it is now, as on any as_of read.
type pastReadModel struct {
	*memory.Model
	live ReadModel
	now  func() time.Time // the live clock
}

func (p pastReadModel) Authenticate(presented string, _ time.Time) (domain.Actor, error) {
	return p.live.Authenticate(presented, p.now())
}

func (p pastReadModel) WaitFor(ctx context.Context, pos eventstore.Position) error {
	return p.live.WaitFor(ctx, pos)
}
