package httpapi

import (
	"encoding/json"
	"net/http"
	"strings"
	"time"

	"github.com/gorilla/mux"

	"github.com/causeway/causeway/commands"
	"github.com/causeway/causeway/domain"
	"github.com/causeway/causeway/projections"
)

// workspaceCreateBody is the create body of the reference plus the reset fields of 2.7.
type workspaceCreateBody struct {
	Name              string               `json:"name"`
	Slug              *string              `json:"slug"`
	Description       string               `json:"description"`
	Defaults          map[string]any       `json:"defaults"`
	UsageLimits       []domain.UsageLimits `json:"usage_limits"`
	RateLimits        []domain.RateLimit   `json:"rate_limits"`
	PeriodicReset     *string              `json:"periodic_reset"`
	PeriodicResetDays *int                 `json:"periodic_reset_days"`
	NextUsageResetAt  *time.Time           `json:"next_usage_reset_at"`
}

// workspaceUpdateBody: absent fields stay as they are; the reset fields may be null, which
// clears the periodic reset.
type workspaceUpdateBody struct {
	Name              *string               `json:"name"`
	Description       *string               `json:"description"`
	Defaults          map[string]any        `json:"defaults"`
	UsageLimits       *[]domain.UsageLimits `json:"usage_limits"`
	RateLimits        *[]domain.RateLimit   `json:"rate_limits"`
	PeriodicReset     fieldPresence[string] `json:"periodic_reset"`
	PeriodicResetDays fieldPresence[int]    `json:"periodic_reset_days"`
	NextUsageResetAt  *time.Time            `json:"next_usage_reset_at"`
}

// fieldPresence tells a field sent as null (Set, Value nil) from one not sent at all.
type fieldPresence[T any] struct {
	Set   bool
	Value *T
}

func (o *fieldPresence[T]) UnmarshalJSON(b []byte) error {
	o.Set = true
	return json.Unmarshal(b, &o.Value)
}

// workspaceMembersBody is the add-members body of the reference.
type workspaceMembersBody struct {
	Users []struct {
		ID   string `json:"id"`
		Role string `json:"role"`
	} `json:"users"`
}

// workspaceAnswer is the reference's Workspace object, with the budget and reset state.
type workspaceAnswer struct {
	Object            string               `json:"object"`
	ID                string               `json:"id"`
	Slug              string               `json:"slug"`
	Name              string               `json:"name"`
	Description       *string              `json:"description"`
	Status            string               `json:"status"`
	OrganisationID    string               `json:"organisation_id"`
	Defaults          map[string]any       `json:"defaults"`
	UsageLimits       []domain.UsageLimits `json:"usage_limits"`
	RateLimits        []domain.RateLimit   `json:"rate_limits"`
	PeriodicReset     *string              `json:"periodic_reset"`
	PeriodicResetDays *int                 `json:"periodic_reset_days"`
	NextUsageResetAt  *time.Time           `json:"next_usage_reset_at"`
	LastResetAt       *time.Time           `json:"last_reset_at"`
	CurrentUsage      amount               `json:"current_usage"`
	BudgetStatus      string               `json:"budget_status"`
	CreatedAt         time.Time            `json:"created_at"`
	LastUpdatedAt     time.Time            `json:"last_updated_at"`
}

// workspaceWithUsers is the reference's WorkspaceWithUsers: a workspace and its members.
type workspaceWithUsers struct {
	workspaceAnswer
	Users []workspaceMemberAnswer `json:"users"`
}

// workspaceMemberAnswer is the reference's WorkspaceMember.
type workspaceMemberAnswer struct {
	Object        string      `json:"object"`
	ID            string      `json:"id"`
	FirstName     string      `json:"first_name"`
	LastName      string      `json:"last_name"`
	Email         string      `json:"email"`
	OrgRole       domain.Role `json:"org_role"`
	Role          domain.Role `json:"role"`
	Status        string      `json:"status"`
	WorkspaceID   string      `json:"workspace_id"`
	CreatedAt     time.Time   `json:"created_at"`
	LastUpdatedAt time.Time   `json:"last_updated_at"`
}

func workspaceTime(t time.Time) time.Time { return t.UTC().Truncate(time.Millisecond) }

func workspaceView(w domain.Workspace) workspaceAnswer {
	v := workspaceAnswer{Object: "workspace", ID: w.ID, Slug: w.Slug, Name: w.Name, Status: w.Status,
		OrganisationID: w.OrganisationID, Defaults: w.Defaults, UsageLimits: w.UsageLimits, RateLimits: w.RateLimits,
		PeriodicReset: w.PeriodicReset, PeriodicResetDays: w.PeriodicResetDays, NextUsageResetAt: w.NextUsageResetAt,
		LastResetAt: w.LastResetAt, CurrentUsage: amount(w.CurrentUsage), BudgetStatus: "active",
		CreatedAt: workspaceTime(w.CreatedAt), LastUpdatedAt: workspaceTime(w.LastUpdatedAt)}
	if w.Description != "" {
		v.Description = &w.Description
	}
	if v.UsageLimits == nil {
		v.UsageLimits = []domain.UsageLimits{}
	}
	if v.RateLimits == nil {
		v.RateLimits = []domain.RateLimit{}
	}
	if w.BudgetExhausted {
		v.BudgetStatus = "exhausted"
	}
	return v
}

func workspaceMemberView(workspaceID string, m projections.WorkspaceMember) workspaceMemberAnswer {
	return workspaceMemberAnswer{Object: "workspace-user", ID: m.User.ID, FirstName: m.User.FirstName, LastName: m.User.LastName,
		Email: m.User.Email, OrgRole: m.User.Role, Role: m.Role, Status: domain.StatusActive, WorkspaceID: workspaceID,
		CreatedAt: workspaceTime(m.CreatedAt), LastUpdatedAt: workspaceTime(m.LastUpdatedAt)}
}

func (a *Admin) registerWorkspaces(r *mux.Router) {
	create := a.Commands.CreateWorkspace
	update := a.Commands.UpdateWorkspace
	archive := a.Commands.ArchiveWorkspace
	restore := a.Commands.RestoreWorkspace
	on := func(h handler) http.Handler { return a.route("workspace", h) }

	r.Handle("/workspaces", on(func(w http.ResponseWriter, r *http.Request) (int, any, error) {
		var b workspaceCreateBody
		if err := decode(r, &b); err != nil {
			return 0, nil, err
		}
		res, err := create.Handle(r.Context(), commands.CreateWorkspace{Name: b.Name, Slug: b.Slug,
			Description: b.Description, Defaults: b.Defaults, RateLimits: b.RateLimits, UsageLimits: b.UsageLimits,
			PeriodicReset: b.PeriodicReset, PeriodicResetDays: b.PeriodicResetDays, NextUsageResetAt: b.NextUsageResetAt})
		if err != nil {
			return 0, nil, err
		}
		return a.answerWorkspace(w, r, res)
	})).Methods(http.MethodPost)

	r.Handle("/workspaces", on(func(w http.ResponseWriter, r *http.Request) (int, any, error) {
		actor := actorFrom(r.Context())
		if err := requireScope(actor, "workspaces.list"); err != nil {
			return 0, nil, err
		}
		st, err := statuses(r, domain.StatusActive, domain.StatusActive, domain.StatusArchived)
		if err != nil {
			return 0, nil, err
		}
		if st[domain.StatusArchived] && !actor.IsOrgAdmin() {
			return 0, nil, domain.Errorf(domain.CodeForbidden, "only organisation owners and admins may list archived workspaces")
		}
		q := r.URL.Query()
		views := []workspaceAnswer{}
		for _, ws := range a.Read.Workspaces(projections.WorkspaceFilter{OrganisationID: actor.OrganisationID,
			Visible: visibleWorkspaces(actor), Statuses: st, NameContains: q.Get("name"), ExactName: q.Get("exact_name")}) {
			views = append(views, workspaceView(ws))
		}
		list, err := page(r, views)
		return http.StatusOK, list, err
	})).Methods(http.MethodGet)

	r.Handle("/workspaces/{id}", on(func(w http.ResponseWriter, r *http.Request) (int, any, error) {
		if asOfRequested(r) {
			return asOf(a, w, r, workspaceAsOf)
		}
		actor := actorFrom(r.Context())
		if err := requireScope(actor, "workspaces.read"); err != nil {
			return 0, nil, err
		}
		ws, err := a.visibleWorkspace(r)
		if err != nil {
			return 0, nil, err
		}
		users := []workspaceMemberAnswer{}
		for _, m := range a.Read.WorkspaceMembers(actor.OrganisationID, ws.ID) {
			users = append(users, workspaceMemberView(ws.ID, m))
		}
		return http.StatusOK, workspaceWithUsers{workspaceAnswer: workspaceView(ws), Users: users}, nil
	})).Methods(http.MethodGet)

	r.Handle("/workspaces/{id}", on(func(w http.ResponseWriter, r *http.Request) (int, any, error) {
		ws, err := a.pathWorkspace(r)
		if err != nil {
			return 0, nil, err
		}
		var b workspaceUpdateBody
		if err := decode(r, &b); err != nil {
			return 0, nil, err
		}
		res, err := update.Handle(r.Context(), commands.UpdateWorkspace{WorkspaceID: ws.ID, UpdateWorkspace: domain.UpdateWorkspace{
			Name: b.Name, Description: b.Description, Defaults: b.Defaults, RateLimits: b.RateLimits,
			UsageLimits: b.UsageLimits, ResetGiven: b.PeriodicReset.Set || b.PeriodicResetDays.Set,
			PeriodicReset: b.PeriodicReset.Value, PeriodicResetDays: b.PeriodicResetDays.Value,
			NextUsageResetAt: b.NextUsageResetAt}})
		if err != nil {
			return 0, nil, err
		}
		return a.answerWorkspace(w, r, res)
	})).Methods(http.MethodPut)

	r.Handle("/workspaces/{id}", on(func(w http.ResponseWriter, r *http.Request) (int, any, error) {
		ws, err := a.pathWorkspace(r)
		if err != nil {
			return 0, nil, err
		}
		res, err := archive.Handle(r.Context(), commands.ArchiveWorkspace{WorkspaceID: ws.ID})
		if err != nil {
			return 0, nil, err
		}
		return a.answerWorkspace(w, r, res)
	})).Methods(http.MethodDelete)

	r.Handle("/workspaces/{id}/restore", on(func(w http.ResponseWriter, r *http.Request) (int, any, error) {
		ws, err := a.pathWorkspace(r)
		if err != nil {
			return 0, nil, err
		}
		res, err := restore.Handle(r.Context(), commands.RestoreWorkspace{WorkspaceID: ws.ID})
		if err != nil {
			return 0, nil, err
		}
		return a.answerWorkspace(w, r, res)
	})).Methods(http.MethodPost)

	a.registerWorkspaceMembers(r)
	a.registerOrganisation(r)
}

// answerWorkspace answers a workspace write with the workspace as it now reads.
func (a *Admin) answerWorkspace(w http.ResponseWriter, r *http.Request, res commands.Result) (int, any, error) {
	if err := a.written(w, r, res, nil); err != nil {
		return 0, nil, err
	}
	ws, ok := a.Read.Workspace(actorFrom(r.Context()).OrganisationID, res.ID)
	if !ok {
		return 0, nil, domain.Errorf(domain.CodeNotFound, "workspace %s not found", res.ID)
	}
	return http.StatusOK, workspaceView(ws), nil
}

// pathWorkspace finds the workspace that the path's {id} names, by id or by slug (the
// reference's clients use both), in the actor's organisation. Writes check access in their
// command; reads use visibleWorkspace.
func (a *Admin) pathWorkspace(r *http.Request) (domain.Workspace, error) {
	ref := mux.Vars(r)["id"]
	org := actorFrom(r.Context()).OrganisationID
	ws, ok := a.Read.Workspace(org, ref)
	if !ok {
		ws, ok = a.Read.WorkspaceBySlug(org, ref)
	}
	if !ok {
		return domain.Workspace{}, domain.Errorf(domain.CodeNotFound, "workspace %s not found", ref)
	}
	return ws, nil
}

// visibleWorkspace is pathWorkspace for reads: a workspace the actor cannot see is not found.
func (a *Admin) visibleWorkspace(r *http.Request) (domain.Workspace, error) {
	ws, err := a.pathWorkspace(r)
	if err != nil {
		return ws, err
	}
	if !canSee(actorFrom(r.Context()), ws.ID) {
		return domain.Workspace{}, domain.Errorf(domain.CodeNotFound, "workspace %s not found", mux.Vars(r)["id"])
	}
	return ws, nil
}

func (a *Admin) registerWorkspaceMembers(r *mux.Router) {
	add := a.Commands.AddWorkspaceMembers
	change := a.Commands.ChangeWorkspaceMemberRole
	remove := a.Commands.RemoveWorkspaceMember
	on := func(h handler) http.Handler { return a.route("workspace_member", h) }

	r.Handle("/workspaces/{id}/users", on(func(w http.ResponseWriter, r *http.Request) (int, any, error) {
		ws, err := a.pathWorkspace(r)
		if err != nil {
			return 0, nil, err
		}
		var b workspaceMembersBody
		if err := decode(r, &b); err != nil {
			return 0, nil, err
		}
		users := make([]domain.MemberRole, len(b.Users))
		for i, u := range b.Users {
			users[i] = domain.MemberRole{UserID: u.ID, Role: u.Role}
		}
		res, err := add.Handle(r.Context(), commands.AddWorkspaceMembers{WorkspaceID: ws.ID, Users: users})
		if err := a.written(w, r, res, err); err != nil {
			return 0, nil, err
		}
		added := []workspaceMemberAnswer{}
		for _, m := range a.Read.WorkspaceMembers(ws.OrganisationID, ws.ID) {
			for _, u := range users {
				if u.UserID == m.User.ID {
					added = append(added, workspaceMemberView(ws.ID, m))
				}
			}
		}
		return http.StatusOK, listAnswer[workspaceMemberAnswer]{Object: "list", Total: len(added), PageSize: len(added), Data: added}, nil
	})).Methods(http.MethodPost)

	r.Handle("/workspaces/{id}/users", on(func(w http.ResponseWriter, r *http.Request) (int, any, error) {
		actor := actorFrom(r.Context())
		if err := requireScope(actor, "workspace_users.list"); err != nil {
			return 0, nil, err
		}
		ws, err := a.visibleWorkspace(r)
		if err != nil {
			return 0, nil, err
		}
		q := r.URL.Query()
		var role domain.Role
		if raw := q.Get("role"); raw != "" {
			var ok bool
			if role, ok = domain.ParseWorkspaceRole(raw); !ok {
				return 0, nil, domain.Invalid("role", "role must be admin, manager or member (got %q)", raw)
			}
		}
		email := strings.TrimSpace(q.Get("email"))
		views := []workspaceMemberAnswer{}
		for _, m := range a.Read.WorkspaceMembers(actor.OrganisationID, ws.ID) {
			if (role == "" || m.Role == role) && (email == "" || strings.EqualFold(email, m.User.Email)) {
				views = append(views, workspaceMemberView(ws.ID, m))
			}
		}
		list, err := page(r, views)
		return http.StatusOK, list, err
	})).Methods(http.MethodGet)

	member := func(r *http.Request, ws domain.Workspace) (workspaceMemberAnswer, error) {
		userID := mux.Vars(r)["userId"]
		for _, m := range a.Read.WorkspaceMembers(ws.OrganisationID, ws.ID) {
			if m.User.ID == userID {
				return workspaceMemberView(ws.ID, m), nil
			}
		}
		return workspaceMemberAnswer{}, domain.Errorf(domain.CodeNotFound, "user %s is not a member of workspace %s", userID, ws.ID)
	}

	r.Handle("/workspaces/{id}/users/{userId}", on(func(w http.ResponseWriter, r *http.Request) (int, any, error) {
		if err := requireScope(actorFrom(r.Context()), "workspace_users.read"); err != nil {
			return 0, nil, err
		}
		ws, err := a.visibleWorkspace(r)
		if err != nil {
			return 0, nil, err
		}
		m, err := member(r, ws)
		return http.StatusOK, m, err
	})).Methods(http.MethodGet)

	r.Handle("/workspaces/{id}/users/{userId}", on(func(w http.ResponseWriter, r *http.Request) (int, any, error) {
		ws, err := a.pathWorkspace(r)
		if err != nil {
			return 0, nil, err
		}
		var b struct {
			Role string `json:"role"`
		}
		if err := decode(r, &b); err != nil {
			return 0, nil, err
		}
		res, err := change.Handle(r.Context(), commands.ChangeWorkspaceMemberRole{WorkspaceID: ws.ID,
			UserID: mux.Vars(r)["userId"], Role: b.Role})
		if err := a.written(w, r, res, err); err != nil {
			return 0, nil, err
		}
		m, err := member(r, ws)
		return http.StatusOK, m, err
	})).Methods(http.MethodPut)

	r.Handle("/workspaces/{id}/users/{userId}", on(func(w http.ResponseWriter, r *http.Request) (int, any, error) {
		ws, err := a.pathWorkspace(r)
		if err != nil {
			return 0, nil, err
		}
		userID := mux.Vars(r)["userId"]
		res, err := remove.Handle(r.Context(), commands.RemoveWorkspaceMember{WorkspaceID: ws.ID, UserID: userID})
		if err := a.written(w, r, res, err); err != nil {
			return 0, nil, err
		}
		return http.StatusOK, map[string]string{"id": userID, "workspace_id": ws.ID, "object": "workspace-user", "status": "removed"}, nil
	})).Methods(http.MethodDelete)
}
