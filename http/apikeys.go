package httpapi

import (
	"net/http"
	"time"

	"github.com/gorilla/mux"

	"github.com/causeway/causeway/commands"
	"github.com/causeway/causeway/domain"
	"github.com/causeway/causeway/projections"
)

// apiKeyBody is the create body of the reference (CreateApiKeyObject).
type apiKeyBody struct {
	Name           string                 `json:"name"`
	Type           string                 `json:"type"`
	SubType        string                 `json:"sub-type"`
	OrganisationID string                 `json:"organisation_id"`
	WorkspaceID    string                 `json:"workspace_id"`
	UserID         string                 `json:"user_id"`
	Scopes         []string               `json:"scopes"`
	RateLimits     []domain.RateLimit     `json:"rate_limits"`
	UsageLimits    *domain.UsageLimits    `json:"usage_limits"`
	Defaults       *domain.KeyDefaults    `json:"defaults"`
	AlertEmails    []string               `json:"alert_emails"`
	ExpiresAt      *time.Time             `json:"expires_at"`
	RotationPolicy *domain.RotationPolicy `json:"rotation_policy"`
}

// apiKeyAnswer is a key as lists and gets show it: masked, never its hash.
type apiKeyAnswer struct {
	domain.APIKey
	Object string `json:"object"`
}

func apiKeyView(k domain.APIKey) apiKeyAnswer {
	if k.RateLimits == nil {
		k.RateLimits = []domain.RateLimit{}
	}
	if k.AlertEmails == nil {
		k.AlertEmails = []string{}
	}
	return apiKeyAnswer{APIKey: k, Object: "api-key"}
}

func (a *Admin) registerAPIKeys(r *mux.Router) {
	create := must(commands.NewCreateAPIKeyHandler(a.Deps, a.Secret))
	del := must(commands.NewDeleteAPIKeyHandler(a.Deps))
	rotate := must(commands.NewRotateAPIKeyHandler(a.Deps, a.Secret))
	on := func(h handler) http.Handler { return a.route("api_key", h) }

	createAs := func(typ, sub string) handler {
		return func(w http.ResponseWriter, r *http.Request) (int, any, error) {
			var b apiKeyBody
			if err := decode(r, &b); err != nil {
				return 0, nil, err
			}
			if typ == "" {
				typ, sub = mux.Vars(r)["type"], mux.Vars(r)["subtype"]
			}
			actor := actorFrom(r.Context())
			if b.OrganisationID != "" && b.OrganisationID != actor.OrganisationID {
				return 0, nil, domain.Invalid("organisation_id", "organisation_id must be your own organisation's id")
			}
			res, err := create.Handle(r.Context(), commands.CreateAPIKey{Type: typ, SubType: sub, Name: b.Name,
				WorkspaceID: b.WorkspaceID, UserID: b.UserID, Scopes: b.Scopes, RateLimits: b.RateLimits,
				UsageLimits: b.UsageLimits, Defaults: b.Defaults, AlertEmails: b.AlertEmails, ExpiresAt: b.ExpiresAt,
				RotationPolicy: b.RotationPolicy})
			if err != nil {
				return 0, nil, err
			}
			if err := a.written(w, r, res.Result); err != nil {
				return 0, nil, err
			}
			return http.StatusOK, map[string]string{"id": res.ID, "key": res.Key, "object": "api-key"}, nil
		}
	}
	r.Handle("/api-keys/organisation/service", on(createAs("organisation", "service"))).Methods(http.MethodPost)
	r.Handle("/api-keys/workspace/user", on(createAs("workspace", "user"))).Methods(http.MethodPost)
	r.Handle("/api-keys/{type}/{subtype}", on(createAs("", ""))).Methods(http.MethodPost)

	r.Handle("/api-keys", on(func(w http.ResponseWriter, r *http.Request) (int, any, error) {
		actor := actorFrom(r.Context())
		f := projections.KeyFilter{OrganisationID: actor.OrganisationID, WorkspaceID: r.URL.Query().Get("workspace_id"),
			Visible: func(k domain.APIKey) bool { return canReadKey(actor, k) }}
		var views []apiKeyAnswer
		for _, k := range a.Read.APIKeys(f) {
			views = append(views, apiKeyView(k))
		}
		list, err := page(r, views)
		return http.StatusOK, list, err
	})).Methods(http.MethodGet)

	r.Handle("/api-keys/{id}", on(func(w http.ResponseWriter, r *http.Request) (int, any, error) {
		actor := actorFrom(r.Context())
		k, ok := a.Read.APIKey(actor.OrganisationID, mux.Vars(r)["id"])
		if !ok || !canReadKey(actor, k) {
			return 0, nil, domain.Errorf(domain.CodeNotFound, "api key %s not found", mux.Vars(r)["id"])
		}
		return http.StatusOK, apiKeyView(k), nil
	})).Methods(http.MethodGet)

	r.Handle("/api-keys/{id}", on(func(w http.ResponseWriter, r *http.Request) (int, any, error) {
		res, err := del.Handle(r.Context(), commands.DeleteAPIKey{KeyID: mux.Vars(r)["id"]})
		if err != nil {
			return 0, nil, err
		}
		if err := a.written(w, r, res); err != nil {
			return 0, nil, err
		}
		return http.StatusOK, map[string]any{"id": res.ID, "object": "api-key", "deleted": true}, nil
	})).Methods(http.MethodDelete)

	r.Handle("/api-keys/{id}/rotate", on(func(w http.ResponseWriter, r *http.Request) (int, any, error) {
		var b struct {
			KeyTransitionPeriodMS *int64 `json:"key_transition_period_ms"`
		}
		if r.ContentLength != 0 {
			if err := decode(r, &b); err != nil {
				return 0, nil, err
			}
		}
		var transition time.Duration
		if b.KeyTransitionPeriodMS != nil {
			if *b.KeyTransitionPeriodMS < domain.MinKeyTransition.Milliseconds() {
				return 0, nil, domain.Invalid("key_transition_period_ms", "key_transition_period_ms must be at least %d (30 minutes; got %d)",
					domain.MinKeyTransition.Milliseconds(), *b.KeyTransitionPeriodMS)
			}
			transition = time.Duration(*b.KeyTransitionPeriodMS) * time.Millisecond
		}
		res, err := rotate.Handle(r.Context(), commands.RotateAPIKey{KeyID: mux.Vars(r)["id"], Transition: transition})
		if err != nil {
			return 0, nil, err
		}
		if err := a.written(w, r, res.Result); err != nil {
			return 0, nil, err
		}
		return http.StatusOK, map[string]any{"id": res.ID, "key": res.Key, "object": "api-key",
			"key_transition_expires_at": res.TransitionEndsAt.UTC()}, nil
	})).Methods(http.MethodPost)
}

// canReadKey: organisation admins read every key; others the keys of workspaces they manage,
// and their own.
func canReadKey(actor domain.Actor, k domain.APIKey) bool {
	scope := "workspace_service_api_keys.read"
	switch k.Type {
	case domain.KeyOrganisationService:
		return actor.IsOrgAdmin() && (actor.HasScope("organisation_service_api_keys.read") || actor.HasScope("organisation_service_api_keys.list"))
	case domain.KeyWorkspaceUser:
		scope = "workspace_user_api_keys.read"
		if actor.UserID != "" && actor.UserID == k.UserID {
			return true
		}
	}
	role, ok := actor.WorkspaceRole(k.WorkspaceID)
	return ok && (role == domain.RoleAdmin || role == domain.RoleManager) &&
		(actor.HasScope(scope) || actor.HasScope(scope[:len(scope)-len("read")]+"list"))
}
