package httpapi

import (
	"net/http"
	"time"

	"github.com/gorilla/mux"

	"github.com/causeway/causeway/commands"
	"github.com/causeway/causeway/domain"
	"github.com/causeway/causeway/queries"
)

// rateLimitPolicyBody is the create and update body of 2.1; pointers tell absent from zero.
type rateLimitPolicyBody struct {
	Name           *string            `json:"name"`
	Conditions     []domain.Condition `json:"conditions"`
	GroupBy        []domain.GroupBy   `json:"group_by"`
	Type           string             `json:"type"`
	Unit           *string            `json:"unit"`
	Value          *float64           `json:"value"`
	WorkspaceID    string             `json:"workspace_id"`
	OrganisationID string             `json:"organisation_id"`
}

// rateLimitPolicyAnswer is the policy object of 2.1 with object "policy_rate_limits".
type rateLimitPolicyAnswer struct {
	domain.RateLimitPolicy
	Object string `json:"object"`
}

func rateLimitPolicyView(p domain.RateLimitPolicy) rateLimitPolicyAnswer {
	if p.Conditions == nil {
		p.Conditions = []domain.Condition{}
	}
	if p.GroupBy == nil {
		p.GroupBy = []domain.GroupBy{}
	}
	p.CreatedAt, p.LastUpdatedAt = p.CreatedAt.UTC().Truncate(time.Millisecond), p.LastUpdatedAt.UTC().Truncate(time.Millisecond)
	return rateLimitPolicyAnswer{RateLimitPolicy: p, Object: "policy_rate_limits"}
}

func (a *Admin) registerRateLimitPolicies(r *mux.Router) {
	on := func(h handler) http.Handler {
		return a.route("rate_limit_policy", func(w http.ResponseWriter, r *http.Request) (int, any, error) {
			if !a.Features.Policy {
				return 0, nil, domain.Errorf(domain.CodeDisabled, "policies are turned off (POLICY_ENABLED=OFF)")
			}
			return h(w, r)
		})
	}

	r.Handle("/policies/rate-limits", on(write(a, a.Commands.CreateRateLimitPolicy, nowhere,
		func(r *http.Request, _ struct{}, b rateLimitPolicyBody) (commands.CreateRateLimitPolicy, error) {
			if err := ownOrganisationID(r, b.OrganisationID); err != nil {
				return commands.CreateRateLimitPolicy{}, err
			}
			unit := ""
			if b.Unit != nil {
				unit = *b.Unit
			}
			return commands.CreateRateLimitPolicy{WorkspaceID: b.WorkspaceID, Name: b.Name,
				Conditions: b.Conditions, GroupBy: b.GroupBy, Type: b.Type, Unit: unit, Value: b.Value}, nil
		},
		func(_ *http.Request, _ struct{}, _ commands.CreateRateLimitPolicy, res commands.Result) (int, any, error) {
			return http.StatusOK, map[string]string{"id": res.ID, "object": "policy_rate_limits"}, nil
		}))).Methods(http.MethodPost)

	r.Handle("/policies/rate-limits", on(func(w http.ResponseWriter, r *http.Request) (int, any, error) {
		f, err := policyListFilter(r)
		if err != nil {
			return 0, nil, err
		}
		var views []rateLimitPolicyAnswer
		found, err := a.reads().RateLimitPolicies(r.Context(), actorFrom(r.Context()), f)
		if err != nil {
			return 0, nil, err
		}
		for _, p := range found {
			views = append(views, rateLimitPolicyView(p))
		}
		list, err := page(r, views)
		return http.StatusOK, list, err
	})).Methods(http.MethodGet)

	r.Handle("/policies/rate-limits/{id}", on(func(w http.ResponseWriter, r *http.Request) (int, any, error) {
		if asOfRequested(r) {
			return asOf(a, w, r, rateLimitPolicyAsOf)
		}
		actor := actorFrom(r.Context())
		if err := requireScope(actor, "policies.read"); err != nil {
			return 0, nil, err
		}
		id := mux.Vars(r)["id"]
		if !isUUID(id) {
			return 0, nil, domain.Invalid("rateLimitsPolicyId", "rateLimitsPolicyId must be a UUID")
		}
		st, err := statuses(r, domain.StatusActive, domain.StatusActive, domain.StatusArchived)
		if err != nil {
			return 0, nil, err
		}
		p, err := a.reads().RateLimitPolicy(r.Context(), actor, id, st)
		if err != nil {
			return 0, nil, err
		}
		a.etag(w, r, domain.RateLimitPolicyPrefix, p.ID)
		return http.StatusOK, rateLimitPolicyView(p), nil
	})).Methods(http.MethodGet)

	r.Handle("/policies/rate-limits/{id}", on(write(a, a.Commands.UpdateRateLimitPolicy, rateLimitPolicyID,
		func(_ *http.Request, id string, b rateLimitPolicyBody) (commands.UpdateRateLimitPolicy, error) {
			if b.Conditions != nil || b.GroupBy != nil || b.Type != "" || b.WorkspaceID != "" {
				return commands.UpdateRateLimitPolicy{}, domain.Invalid("", "only name, unit and value can be updated")
			}
			return commands.UpdateRateLimitPolicy{PolicyID: id, Name: b.Name, Unit: b.Unit, Value: b.Value}, nil
		},
		func(r *http.Request, id string, _ commands.UpdateRateLimitPolicy, _ commands.Result) (int, any, error) {
			p, _, err := a.Read.RateLimitPolicy(r.Context(), actorFrom(r.Context()).OrganisationID, id)
			if err != nil {
				return 0, nil, err
			}
			return http.StatusOK, rateLimitPolicyView(p), nil
		}))).Methods(http.MethodPut)

	r.Handle("/policies/rate-limits/{id}", on(pathWrite(a, a.Commands.ArchiveRateLimitPolicy, rateLimitPolicyID,
		func(id string) commands.ArchiveRateLimitPolicy { return commands.ArchiveRateLimitPolicy{PolicyID: id} },
		func(id string) any {
			return map[string]string{"id": id, "object": "policy_rate_limits", "status": domain.StatusArchived}
		}))).Methods(http.MethodDelete)
}

// rateLimitPolicyID is the policy id of a write's path.
func rateLimitPolicyID(r *http.Request) (string, error) {
	id := mux.Vars(r)["id"]
	if !isUUID(id) {
		return "", domain.Invalid("rateLimitsPolicyId", "rateLimitsPolicyId must be a UUID")
	}
	return id, nil
}

// policyListFilter reads a policy list's filters (status, default active; workspace_id) and
// limits it to the workspaces the actor may see; listing needs the policies.list scope.
func policyListFilter(r *http.Request) (queries.PolicyList, error) {
	actor := actorFrom(r.Context())
	if err := requireScope(actor, "policies.list"); err != nil {
		return queries.PolicyList{}, err
	}
	st, err := statuses(r, domain.StatusActive, domain.StatusActive, domain.StatusArchived)
	if err != nil {
		return queries.PolicyList{}, err
	}
	f := queries.PolicyList{Statuses: st}
	if ws := r.URL.Query().Get("workspace_id"); ws != "" {
		if !canSee(actor, ws) {
			return f, domain.Errorf(domain.CodeForbidden, "this API key has no access to workspace %s", ws)
		}
		f.WorkspaceIDs = map[string]bool{ws: true}
	}
	return f, nil
}
