package httpapi

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/gorilla/mux"

	"github.com/causeway/causeway/commands"
	"github.com/causeway/causeway/domain"
	"github.com/causeway/causeway/projections"
	"github.com/causeway/causeway/queries"
)

// userAnswer is the reference's User: the organisation member and the workspaces they belong to.
type userAnswer struct {
	Object         string      `json:"object"`
	ID             string      `json:"id"`
	OrganisationID string      `json:"organisation_id"`
	FirstName      string      `json:"first_name"`
	LastName       string      `json:"last_name"`
	Role           domain.Role `json:"role"`
	Email          string      `json:"email"`
	CreatedAt      time.Time   `json:"created_at"`
	LastUpdatedAt  time.Time   `json:"last_updated_at"`
	WorkspaceIDs   []string    `json:"workspace_ids"`
}

func userView(u domain.User, workspaceIDs []string) userAnswer {
	return userAnswer{Object: "user", ID: u.ID, OrganisationID: u.OrganisationID, FirstName: u.FirstName,
		LastName: u.LastName, Role: u.Role, Email: u.Email, CreatedAt: u.CreatedAt.UTC().Truncate(time.Millisecond),
		LastUpdatedAt: u.LastUpdatedAt.UTC().Truncate(time.Millisecond),
		WorkspaceIDs:  workspaceIDs}
}

// userView renders a user with the workspaces they are a member of now.
func (a *Admin) userView(ctx context.Context, u domain.User) (userAnswer, error) {
	ids, err := a.reads().MemberWorkspaceIDs(ctx, u)
	return userView(u, ids), err
}

// userBody is the update body: the organisation role and the names.
type userBody struct {
	Role      *string `json:"role"`
	FirstName *string `json:"first_name"`
	LastName  *string `json:"last_name"`
}

// workspaceKeyActor, requireUserAdmin and canSeeInvite are the read side's
// (queries.WorkspaceKeyActor, queries.RequireUserAdmin, queries.CanSeeInvite).
func workspaceKeyActor(a domain.Actor) bool { return queries.WorkspaceKeyActor(a) }

func requireUserAdmin(a domain.Actor, scope string) error { return queries.RequireUserAdmin(a, scope) }

func userID(r *http.Request) (string, error) {
	id := mux.Vars(r)["id"]
	if !isUUID(id) {
		return "", domain.Invalid("userId", "userId must be a UUID")
	}
	return id, nil
}

// registerUsers adds the users, invites and notifications routes. Invites come first: their
// paths would otherwise be taken for a user id.
func (a *Admin) registerUsers(r *mux.Router) {
	a.registerInvites(r)
	a.registerNotifications(r)
	on := func(h handler) http.Handler { return a.route("user", h) }

	r.Handle("/users", on(func(w http.ResponseWriter, r *http.Request) (int, any, error) {
		actor := actorFrom(r.Context())
		if err := requireUserAdmin(actor, "organisation_users.list"); err != nil {
			return 0, nil, err
		}
		f := projections.UserFilter{OrganisationID: actor.OrganisationID, Email: r.URL.Query().Get("email")}
		if raw := r.URL.Query().Get("role"); raw != "" {
			role, ok := domain.ParseOrgRole(raw)
			if !ok {
				return 0, nil, domain.Invalid("role", "role must be owner, admin or member (got %q)", raw)
			}
			f.Role = role
		}
		users, err := a.reads().Users(r.Context(), actor, f)
		if err != nil {
			return 0, nil, err
		}
		var views []userAnswer
		for _, u := range users {
			v, err := a.userView(r.Context(), u)
			if err != nil {
				return 0, nil, err
			}
			views = append(views, v)
		}
		list, err := page(r, views)
		return http.StatusOK, list, err
	})).Methods(http.MethodGet)

	r.Handle("/users/{id}", on(func(w http.ResponseWriter, r *http.Request) (int, any, error) {
		if asOfRequested(r) {
			return asOf(a, w, r, userAsOf)
		}
		actor := actorFrom(r.Context())
		if err := requireUserAdmin(actor, "organisation_users.read"); err != nil {
			return 0, nil, err
		}
		id, err := userID(r)
		if err != nil {
			return 0, nil, err
		}
		u, err := a.reads().User(r.Context(), actor, id)
		if err != nil {
			return 0, nil, err
		}
		v, err := a.userView(r.Context(), u)
		return http.StatusOK, v, err
	})).Methods(http.MethodGet)

	r.Handle("/users/{id}", on(write(a, a.Commands.UpdateUser, userID,
		func(_ *http.Request, id string, b userBody) (commands.UpdateUser, error) {
			return commands.UpdateUser{UserID: id, Role: b.Role, FirstName: b.FirstName, LastName: b.LastName}, nil
		},
		func(r *http.Request, id string, _ commands.UpdateUser, _ commands.Result) (int, any, error) {
			u, _, err := a.Read.User(r.Context(), actorFrom(r.Context()).OrganisationID, id)
			if err != nil {
				return 0, nil, err
			}
			v, err := a.userView(r.Context(), u)
			return http.StatusOK, v, err
		}))).Methods(http.MethodPut)

	r.Handle("/users/{id}", on(pathWrite(a, a.Commands.RemoveUser, userID,
		func(id string) commands.RemoveUser { return commands.RemoveUser{UserID: id} },
		func(id string) any { return map[string]any{"id": id, "object": "user", "deleted": true} },
	))).Methods(http.MethodDelete)
}

// inviteAnswer is the reference's Invite, with the status a reader sees now (a pending invite
// past its expiry is expired). The token is never part of it.
type inviteAnswer struct {
	Object                 string                   `json:"object"`
	ID                     string                   `json:"id"`
	OrganisationID         string                   `json:"organisation_id"`
	Email                  string                   `json:"email"`
	Role                   domain.Role              `json:"role"`
	Status                 string                   `json:"status"`
	InvitedBy              string                   `json:"invited_by"`
	UserID                 string                   `json:"user_id,omitempty"`
	Workspaces             []domain.InviteWorkspace `json:"workspaces"`
	WorkspaceAPIKeyDetails *domain.InviteKeyDetails `json:"workspace_api_key_details"`
	CreatedAt              time.Time                `json:"created_at"`
	ExpiresAt              time.Time                `json:"expires_at"`
	AcceptedAt             *time.Time               `json:"accepted_at"`
	CancelledAt            *time.Time               `json:"cancelled_at"`
	LastUpdatedAt          time.Time                `json:"last_updated_at"`
}

func inviteView(i domain.Invite, now time.Time) inviteAnswer {
	ms := func(t time.Time) time.Time { return t.UTC().Truncate(time.Millisecond) }
	msp := func(t *time.Time) *time.Time {
		if t == nil {
			return nil
		}
		v := ms(*t)
		return &v
	}
	ws := i.Workspaces
	if ws == nil {
		ws = []domain.InviteWorkspace{}
	}
	return inviteAnswer{Object: "invite", ID: i.ID, OrganisationID: i.OrganisationID, Email: i.Email, Role: i.Role,
		Status: i.StatusAt(now), InvitedBy: i.InvitedBy, UserID: i.UserID, Workspaces: ws,
		WorkspaceAPIKeyDetails: i.WorkspaceAPIKeyDetails, CreatedAt: ms(i.CreatedAt), ExpiresAt: ms(i.ExpiresAt),
		AcceptedAt: msp(i.AcceptedAt), CancelledAt: msp(i.CancelledAt), LastUpdatedAt: ms(i.LastUpdatedAt)}
}

// inviteBody is the reference's CreateInvite. A workspace is named by its id or its slug.
type inviteBody struct {
	Email      string `json:"email"`
	Role       string `json:"role"`
	Workspaces []struct {
		ID   string `json:"id"`
		Role string `json:"role"`
	} `json:"workspaces"`
	WorkspaceAPIKeyDetails *struct {
		Scopes []string `json:"scopes"`
	} `json:"workspace_api_key_details"`
}

// acceptBody is what the invitee sends; the token may come in the link's query instead.
type acceptBody struct {
	Token     string `json:"token"`
	FirstName string `json:"first_name"`
	LastName  string `json:"last_name"`
}

// inviteLink is where the invitee accepts: this server's accept route with the token.
func (a *Admin) inviteLink(r *http.Request, token string) string {
	if a.PublicURL != "" {
		return strings.TrimSuffix(a.PublicURL, "/") + BasePath + "/users/invites/accept?token=" + url.QueryEscape(token)
	}
	scheme := "http"
	if r.TLS != nil || strings.EqualFold(r.Header.Get("X-Forwarded-Proto"), "https") {
		scheme = "https"
	}
	return scheme + "://" + r.Host + BasePath + "/users/invites/accept?token=" + url.QueryEscape(token)
}

func canSeeInvite(a domain.Actor, i domain.Invite) bool { return queries.CanSeeInvite(a, i) }

func inviteID(r *http.Request) (string, error) {
	id := mux.Vars(r)["id"]
	if !isUUID(id) {
		return "", domain.Invalid("inviteId", "inviteId must be a UUID")
	}
	return id, nil
}

// resolveWorkspace turns a workspace slug into its id; an id, or a name that matches
// nothing, is passed on for the command to judge.
func (a *Admin) resolveWorkspace(ctx context.Context, orgID, ref string) (string, error) {
	ref = strings.TrimSpace(ref)
	if ref == "" {
		return ref, nil
	}
	if _, ok, err := a.Read.Workspace(ctx, orgID, ref); ok || err != nil {
		return ref, err
	}
	ws, ok, err := a.Read.WorkspaceBySlug(ctx, orgID, ref)
	if ok {
		return ws.ID, err
	}
	return ref, err
}

func (a *Admin) registerInvites(r *mux.Router) {
	on := func(h handler) http.Handler { return a.route("invite", h) }

	r.Handle("/users/invites/accept", a.acceptInvite(a.Commands.AcceptInvite)).Methods(http.MethodPost)

	r.Handle("/users/invites", on(write(a, a.Commands.CreateInvite, nowhere,
		func(r *http.Request, _ struct{}, b inviteBody) (commands.CreateInvite, error) {
			actor := actorFrom(r.Context())
			c := commands.CreateInvite{Email: b.Email, Role: b.Role}
			for _, ws := range b.Workspaces {
				id, err := a.resolveWorkspace(r.Context(), actor.OrganisationID, ws.ID)
				if err != nil {
					return c, err
				}
				c.Workspaces = append(c.Workspaces, domain.InviteWorkspace{WorkspaceID: id, Role: domain.Role(ws.Role)})
			}
			if b.WorkspaceAPIKeyDetails != nil {
				c.KeyDetails = &domain.InviteKeyDetails{Scopes: b.WorkspaceAPIKeyDetails.Scopes}
			}
			return c, nil
		},
		func(r *http.Request, _ struct{}, _ commands.CreateInvite, res commands.CreatedInvite) (int, any, error) {
			return http.StatusOK, map[string]any{"id": res.ID, "object": "invite", "invite_link": a.inviteLink(r, res.Token),
				"expires_at": res.ExpiresAt.UTC().Truncate(time.Millisecond)}, nil
		}))).Methods(http.MethodPost)

	r.Handle("/users/invites", on(func(w http.ResponseWriter, r *http.Request) (int, any, error) {
		actor := actorFrom(r.Context())
		if err := requireScope(actor, "invites.list"); err != nil {
			return 0, nil, err
		}
		st, err := statuses(r, "pending,accepted,cancelled,expired", domain.InviteStatusPending,
			domain.InviteStatusAccepted, domain.InviteStatusCancelled, domain.InviteStatusExpired)
		if err != nil {
			return 0, nil, err
		}
		now := a.Now()
		f := projections.InviteFilter{Email: r.URL.Query().Get("email"), Statuses: st, Now: now}
		if raw := r.URL.Query().Get("role"); raw != "" {
			role, ok := domain.ParseOrgRole(raw)
			if !ok || role == domain.RoleOwner {
				return 0, nil, domain.Invalid("role", "role must be admin or member (got %q)", raw)
			}
			f.Role = role
		}
		invites, err := a.reads().Invites(r.Context(), actor, f)
		if err != nil {
			return 0, nil, err
		}
		var views []inviteAnswer
		for _, i := range invites {
			views = append(views, inviteView(i, now))
		}
		list, err := page(r, views)
		return http.StatusOK, list, err
	})).Methods(http.MethodGet)

	r.Handle("/users/invites/{id}", on(func(w http.ResponseWriter, r *http.Request) (int, any, error) {
		if asOfRequested(r) {
			return asOf(a, w, r, inviteAsOf)
		}
		actor := actorFrom(r.Context())
		if err := requireScope(actor, "invites.read"); err != nil {
			return 0, nil, err
		}
		id, err := inviteID(r)
		if err != nil {
			return 0, nil, err
		}
		i, err := a.reads().Invite(r.Context(), actor, id)
		if err != nil {
			return 0, nil, err
		}
		return http.StatusOK, inviteView(i, a.Now()), nil
	})).Methods(http.MethodGet)

	r.Handle("/users/invites/{id}", on(pathWrite(a, a.Commands.CancelInvite, inviteID,
		func(id string) commands.CancelInvite { return commands.CancelInvite{InviteID: id} },
		func(id string) any {
			return map[string]any{"id": id, "object": "invite", "status": domain.InviteStatusCancelled}
		},
	))).Methods(http.MethodDelete)

	r.Handle("/users/invites/{id}/resend", on(write(a, a.Commands.ResendInvite, inviteID,
		func(_ *http.Request, id string, _ noBody) (commands.ResendInvite, error) {
			return commands.ResendInvite{InviteID: id}, nil
		},
		func(r *http.Request, id string, _ commands.ResendInvite, res commands.CreatedInvite) (int, any, error) {
			link := a.inviteLink(r, res.Token)
			// The reference answers inviteLink; invite_link matches the create answer.
			return http.StatusOK, map[string]any{"id": id, "object": "invite", "invite_link": link, "inviteLink": link,
				"expires_at": res.ExpiresAt.UTC().Truncate(time.Millisecond)}, nil
		}))).Methods(http.MethodPost)
}

// acceptInvite serves the one admin route without an API key: the invite's token is the
// credential, and the invitee acts as the user they become.
func (a *Admin) acceptInvite(accept commands.Handler[commands.AcceptInvite, commands.AcceptedInvite]) http.Handler {
	h := write(a, accept, nowhere,
		func(r *http.Request, _ struct{}, b optionalBody[acceptBody]) (commands.AcceptInvite, error) {
			token := b.V.Token
			if token == "" {
				token = r.URL.Query().Get("token")
			}
			return commands.AcceptInvite{Token: token, FirstName: b.V.FirstName, LastName: b.V.LastName}, nil
		},
		func(r *http.Request, _ struct{}, _ commands.AcceptInvite, res commands.AcceptedInvite) (int, any, error) {
			u, _, err := a.Read.User(r.Context(), res.OrganisationID, res.UserID)
			if err != nil {
				return 0, nil, err
			}
			keys := make([]map[string]string, 0, len(res.Keys))
			for _, k := range res.Keys {
				keys = append(keys, map[string]string{"id": k.KeyID, "object": "api-key", "key": k.Key, "workspace_id": k.WorkspaceID})
			}
			view, err := a.userView(r.Context(), u)
			if err != nil {
				return 0, nil, err
			}
			return http.StatusOK, struct {
				userAnswer
				APIKeys []map[string]string `json:"api_keys"`
			}{view, keys}, nil
		})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !a.Features.APIAccess {
			WriteError(w, r, a.Log, domain.Errorf(domain.CodeDisabled, "the admin API is turned off (API_ACCESS_ENABLED=OFF)"))
			return
		}
		r = r.WithContext(commands.WithRequest(r.Context(), commands.Request{
			Actor: domain.Actor{Kind: domain.ActorUser}, RequestID: TraceID(r.Context()), ClientIP: clientIP(r),
			UserAgent: r.UserAgent(), Method: r.Method, Path: r.URL.Path,
		}))
		status, body, err := h(w, r)
		if err != nil {
			WriteError(w, r, a.Log, err)
			return
		}
		WriteJSON(w, status, body)
	})
}
