package httpapi

import (
	"context"
	"encoding/json"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/gorilla/mux"

	"github.com/causeway/causeway/commands"
	"github.com/causeway/causeway/domain"
	"github.com/causeway/causeway/projections"
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

// asOfTime reads as_of: an RFC 3339 time, not after now. Now is the wall clock, not the
// admin clock, because the event store stamps RecordedAt with the wall clock.
func asOfTime(r *http.Request) (time.Time, error) {
	raw := r.URL.Query().Get(asOfParam)
	// An unencoded "+01:00" offset arrives as " 01:00"; a space is never valid in the time.
	at, err := time.Parse(time.RFC3339Nano, strings.ReplaceAll(raw, " ", "+"))
	if err != nil {
		return time.Time{}, domain.Invalid(asOfParam, "as_of must be an RFC 3339 time, such as 2026-01-02T15:04:05Z (got %q)", raw)
	}
	if now := time.Now(); at.After(now) {
		return time.Time{}, domain.Invalid(asOfParam, "as_of must not be after now (%s; got %s)",
			now.UTC().Format(time.RFC3339), at.UTC().Format(time.RFC3339Nano))
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
	agg, last, ok, err := commands.LoadAsOfEvent(r.Context(), a.Deps, domain.Stream(t.prefix, id), func() P { return P(new(A)) }, at)
	if err != nil {
		return 0, nil, err
	}
	if ok && organisationOf(agg) != actor.OrganisationID {
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

// organisationOf is the organisation a resource belongs to ("" for none).
func organisationOf(agg domain.Aggregate) string {
	switch v := agg.(type) {
	case *domain.Organisation:
		return v.ID
	case *domain.Workspace:
		return v.OrganisationID
	case *domain.User:
		return v.OrganisationID
	case *domain.Invite:
		return v.OrganisationID
	case *domain.APIKey:
		return v.OrganisationID
	case *domain.RateLimitPolicy:
		return v.OrganisationID
	case *domain.UsageLimitPolicy:
		return v.OrganisationID
	case *domain.Notification:
		return v.OrganisationID
	}
	return ""
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
		if ws, ok := a.Read.WorkspaceBySlug(actorFrom(r.Context()).OrganisationID, ref); ok {
			return ws.ID, nil
		}
		return "", notFound("workspace", ref)
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

// workspaceMembersAsOf lists a workspace's members as they were at the instant, each user as
// they were then, in the order the read model lists them.
func (a *Admin) workspaceMembersAsOf(ctx context.Context, ws domain.Workspace, at time.Time) ([]workspaceMemberAnswer, error) {
	members := make([]projections.WorkspaceMember, 0, len(ws.Members))
	for id, role := range ws.Members {
		u, _, ok, err := commands.LoadAsOf(ctx, a.Deps, domain.Stream(domain.UserPrefix, id), func() *domain.User { return &domain.User{} }, at)
		if err != nil {
			return nil, err
		}
		if !ok || !u.Exists() || u.OrganisationID != ws.OrganisationID {
			continue
		}
		members = append(members, projections.WorkspaceMember{User: *u, Role: role, CreatedAt: ws.MemberSince[id], LastUpdatedAt: ws.MemberChanged[id]})
	}
	sort.Slice(members, func(i, j int) bool {
		if !members[i].CreatedAt.Equal(members[j].CreatedAt) {
			return members[i].CreatedAt.Before(members[j].CreatedAt)
		}
		return members[i].User.ID < members[j].User.ID
	})
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
		v := a.userView(u)
		ids, err := a.memberWorkspacesAsOf(r.Context(), u, at)
		v.WorkspaceIDs = ids
		return v, err
	},
}

// memberWorkspacesAsOf is the user's workspaces at the instant. Memberships live in the
// workspace streams, so every workspace of the organisation is folded to the instant;
// workspaces are archived, never removed, so the read model lists every one there was.
func (a *Admin) memberWorkspacesAsOf(ctx context.Context, u domain.User, at time.Time) ([]string, error) {
	out := []string{}
	all := a.Read.Workspaces(projections.WorkspaceFilter{OrganisationID: u.OrganisationID,
		Statuses: map[string]bool{domain.StatusActive: true, domain.StatusArchived: true}})
	for _, ws := range all {
		past, _, ok, err := commands.LoadAsOf(ctx, a.Deps, domain.Stream(domain.WorkspacePrefix, ws.ID), func() *domain.Workspace { return &domain.Workspace{} }, at)
		if err != nil {
			return nil, err
		}
		if _, member := past.Members[u.ID]; ok && member {
			out = append(out, ws.ID)
		}
	}
	sort.Strings(out)
	return out, nil
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
		// As the read model's notification filter: outside the organisation admins, only
		// notifications of a workspace the actor belongs to.
		if v := visibleWorkspaces(actorFrom(r.Context())); v != nil && (n.WorkspaceID == "" || !v[n.WorkspaceID]) {
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

// historyStreams maps the history path's resource types, the stream prefixes and friendly
// aliases (the audit log's resource names among them), to stream prefixes.
var historyStreams = map[string]string{
	domain.WorkspacePrefix: domain.WorkspacePrefix, "workspaces": domain.WorkspacePrefix,
	domain.UserPrefix: domain.UserPrefix, "users": domain.UserPrefix,
	domain.InvitePrefix: domain.InvitePrefix, "invites": domain.InvitePrefix,
	domain.APIKeyPrefix: domain.APIKeyPrefix, "api-keys": domain.APIKeyPrefix, "api_key": domain.APIKeyPrefix, "api_keys": domain.APIKeyPrefix,
	domain.RateLimitPolicyPrefix: domain.RateLimitPolicyPrefix, "rate-limits": domain.RateLimitPolicyPrefix, "rate_limit_policy": domain.RateLimitPolicyPrefix,
	domain.UsageLimitPolicyPrefix: domain.UsageLimitPolicyPrefix, "usage-limits": domain.UsageLimitPolicyPrefix, "usage_limit_policy": domain.UsageLimitPolicyPrefix,
	domain.OrganisationPrefix: domain.OrganisationPrefix, "organisations": domain.OrganisationPrefix,
	domain.NotificationPrefix: domain.NotificationPrefix, "notifications": domain.NotificationPrefix,
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
		prefix, ok := historyStreams[strings.ToLower(typ)]
		if !ok {
			return 0, nil, domain.Invalid("type", "type must be workspace, user, invite, apikey, ratelimitpolicy, usagelimitpolicy, organisation or notification (or workspaces, users, invites, api-keys, rate-limits, usage-limits; got %q)", typ)
		}
		if prefix == domain.WorkspacePrefix && !isUUID(id) {
			if ws, found := a.Read.WorkspaceBySlug(actor.OrganisationID, id); found {
				id = ws.ID
			}
		}
		// Only the requested page's states are encoded; page validates the paging first.
		win, err := page[historyEntry](r, nil)
		if err != nil {
			return 0, nil, err
		}
		from := win.CurrentPage * win.PageSize
		changes, final, err := commands.History(r.Context(), a.Deps, domain.Stream(prefix, id),
			func(i int) bool { return i >= from && i < from+win.PageSize })
		if err != nil {
			return 0, nil, err
		}
		if final == nil || organisationOf(final) != actor.OrganisationID {
			return 0, nil, domain.Errorf(domain.CodeNotFound, "%s %s not found", prefix, id)
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
