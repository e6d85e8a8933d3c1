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
	"github.com/causeway/causeway/queries"
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

// workspaceMemberBody changes a member's role.
type workspaceMemberBody struct {
	Role string `json:"role"`
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
	on := func(h handler) http.Handler { return a.route("workspace", h) }

	r.Handle("/workspaces", on(write(a, a.Commands.CreateWorkspace, nowhere,
		func(_ *http.Request, _ struct{}, b workspaceCreateBody) (commands.CreateWorkspace, error) {
			return commands.CreateWorkspace{Name: b.Name, Slug: b.Slug,
				Description: b.Description, Defaults: b.Defaults, RateLimits: b.RateLimits, UsageLimits: b.UsageLimits,
				PeriodicReset: b.PeriodicReset, PeriodicResetDays: b.PeriodicResetDays, NextUsageResetAt: b.NextUsageResetAt}, nil
		},
		answerWorkspace[struct{}, commands.CreateWorkspace](a),
	))).Methods(http.MethodPost)

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
		found, err := a.reads().Workspaces(r.Context(), actor, queries.WorkspaceList{Statuses: st,
			NameContains: q.Get("name"), ExactName: q.Get("exact_name")})
		if err != nil {
			return 0, nil, err
		}
		views := []workspaceAnswer{}
		for _, ws := range found {
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
		a.etag(w, r, domain.WorkspacePrefix, ws.ID)
		members, err := a.reads().WorkspaceMembers(r.Context(), ws)
		if err != nil {
			return 0, nil, err
		}
		users := []workspaceMemberAnswer{}
		for _, m := range members {
			users = append(users, workspaceMemberView(ws.ID, m))
		}
		return http.StatusOK, workspaceWithUsers{workspaceAnswer: workspaceView(ws), Users: users}, nil
	})).Methods(http.MethodGet)

	r.Handle("/workspaces/{id}", on(write(a, a.Commands.UpdateWorkspace, a.pathWorkspace,
		func(_ *http.Request, ws domain.Workspace, b workspaceUpdateBody) (commands.UpdateWorkspace, error) {
			return commands.UpdateWorkspace{WorkspaceID: ws.ID, UpdateWorkspace: domain.UpdateWorkspace{
				Name: b.Name, Description: b.Description, Defaults: b.Defaults, RateLimits: b.RateLimits,
				UsageLimits: b.UsageLimits, ResetGiven: b.PeriodicReset.Set || b.PeriodicResetDays.Set,
				PeriodicReset: b.PeriodicReset.Value, PeriodicResetDays: b.PeriodicResetDays.Value,
				NextUsageResetAt: b.NextUsageResetAt}}, nil
		},
		answerWorkspace[domain.Workspace, commands.UpdateWorkspace](a),
	))).Methods(http.MethodPut)

	r.Handle("/workspaces/{id}", on(write(a, a.Commands.ArchiveWorkspace, a.pathWorkspace,
		func(_ *http.Request, ws domain.Workspace, _ noBody) (commands.ArchiveWorkspace, error) {
			return commands.ArchiveWorkspace{WorkspaceID: ws.ID}, nil
		},
		answerWorkspace[domain.Workspace, commands.ArchiveWorkspace](a),
	))).Methods(http.MethodDelete)

	r.Handle("/workspaces/{id}/restore", on(write(a, a.Commands.RestoreWorkspace, a.pathWorkspace,
		func(_ *http.Request, ws domain.Workspace, _ noBody) (commands.RestoreWorkspace, error) {
			return commands.RestoreWorkspace{WorkspaceID: ws.ID}, nil
		},
		answerWorkspace[domain.Workspace, commands.RestoreWorkspace](a),
	))).Methods(http.MethodPost)

	a.registerWorkspaceMembers(r)
	a.registerOrganisation(r)
}

// answerWorkspace answers a workspace write with the workspace as it now reads.
func answerWorkspace[T, C any](a *Admin) func(r *http.Request, _ T, _ C, res commands.Result) (int, any, error) {
	return func(r *http.Request, _ T, _ C, res commands.Result) (int, any, error) {
		ws, ok, err := a.Read.Workspace(r.Context(), actorFrom(r.Context()).OrganisationID, res.ID)
		if err != nil {
			return 0, nil, err
		}
		if !ok {
			return 0, nil, domain.Errorf(domain.CodeNotFound, "workspace %s not found", res.ID)
		}
		return http.StatusOK, workspaceView(ws), nil
	}
}

// pathWorkspace finds the workspace that the path's {id} names, by id or by slug (the
// reference's clients use both), in the actor's organisation. Writes check access in their
// command; reads use visibleWorkspace.
func (a *Admin) pathWorkspace(r *http.Request) (domain.Workspace, error) {
	return a.reads().WorkspaceByRef(r.Context(), actorFrom(r.Context()).OrganisationID, mux.Vars(r)["id"])
}

// visibleWorkspace is pathWorkspace for reads: a workspace the actor cannot see is not found
// (queries.VisibleWorkspace).
func (a *Admin) visibleWorkspace(r *http.Request) (domain.Workspace, error) {
	return a.reads().VisibleWorkspace(r.Context(), actorFrom(r.Context()), mux.Vars(r)["id"])
}

func (a *Admin) registerWorkspaceMembers(r *mux.Router) {
	on := func(h handler) http.Handler { return a.route("workspace_member", h) }

	r.Handle("/workspaces/{id}/users", on(write(a, a.Commands.AddWorkspaceMembers, a.pathWorkspace,
		func(_ *http.Request, ws domain.Workspace, b workspaceMembersBody) (commands.AddWorkspaceMembers, error) {
			users := make([]domain.MemberRole, len(b.Users))
			for i, u := range b.Users {
				users[i] = domain.MemberRole{UserID: u.ID, Role: u.Role}
			}
			return commands.AddWorkspaceMembers{WorkspaceID: ws.ID, Users: users}, nil
		},
		func(r *http.Request, ws domain.Workspace, c commands.AddWorkspaceMembers, _ commands.Result) (int, any, error) {
			members, err := a.Read.WorkspaceMembers(r.Context(), ws.OrganisationID, ws.ID)
			if err != nil {
				return 0, nil, err
			}
			added := []workspaceMemberAnswer{}
			for _, m := range members {
				for _, u := range c.Users {
					if u.UserID == m.User.ID {
						added = append(added, workspaceMemberView(ws.ID, m))
					}
				}
			}
			return http.StatusOK, listAnswer[workspaceMemberAnswer]{Object: "list", Total: len(added), PageSize: len(added), Data: added}, nil
		}))).Methods(http.MethodPost)

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
		members, err := a.reads().WorkspaceMembers(r.Context(), ws)
		if err != nil {
			return 0, nil, err
		}
		views := []workspaceMemberAnswer{}
		for _, m := range members {
			if (role == "" || m.Role == role) && (email == "" || strings.EqualFold(email, m.User.Email)) {
				views = append(views, workspaceMemberView(ws.ID, m))
			}
		}
		list, err := page(r, views)
		return http.StatusOK, list, err
	})).Methods(http.MethodGet)

	member := func(r *http.Request, ws domain.Workspace) (workspaceMemberAnswer, error) {
		userID := mux.Vars(r)["userId"]
		m, err := a.reads().WorkspaceMember(r.Context(), ws, userID)
		if err != nil {
			return workspaceMemberAnswer{}, err
		}
		return workspaceMemberView(ws.ID, m), nil
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

	r.Handle("/workspaces/{id}/users/{userId}", on(write(a, a.Commands.ChangeWorkspaceMemberRole, a.pathWorkspace,
		func(r *http.Request, ws domain.Workspace, b workspaceMemberBody) (commands.ChangeWorkspaceMemberRole, error) {
			return commands.ChangeWorkspaceMemberRole{WorkspaceID: ws.ID, UserID: mux.Vars(r)["userId"], Role: b.Role}, nil
		},
		func(r *http.Request, ws domain.Workspace, _ commands.ChangeWorkspaceMemberRole, _ commands.Result) (int, any, error) {
			m, err := member(r, ws)
			return http.StatusOK, m, err
		}))).Methods(http.MethodPut)

	r.Handle("/workspaces/{id}/users/{userId}", on(write(a, a.Commands.RemoveWorkspaceMember, a.pathWorkspace,
		func(r *http.Request, ws domain.Workspace, _ noBody) (commands.RemoveWorkspaceMember, error) {
			return commands.RemoveWorkspaceMember{WorkspaceID: ws.ID, UserID: mux.Vars(r)["userId"]}, nil
		},
		func(_ *http.Request, ws domain.Workspace, c commands.RemoveWorkspaceMember, _ commands.Result) (int, any, error) {
			return http.StatusOK, map[string]string{"id": c.UserID, "workspace_id": ws.ID, "object": "workspace-user", "status": "removed"}, nil
		}))).Methods(http.MethodDelete)
}
