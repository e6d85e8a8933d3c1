package httpapi

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strconv"
	"time"

	"github.com/gorilla/mux"

	"github.com/causeway/causeway/commands"
	"github.com/causeway/causeway/domain"
	"github.com/causeway/causeway/projections"
)

// usageLimitPolicyBody is the create body (CreateUsageLimitsPolicyRequest, with the
// periodic_reset_days of 2.7); pointers tell absent from zero.
type usageLimitPolicyBody struct {
	Name              *string            `json:"name"`
	Conditions        []domain.Condition `json:"conditions"`
	GroupBy           []domain.GroupBy   `json:"group_by"`
	Type              string             `json:"type"`
	CreditLimit       *float64           `json:"credit_limit"`
	AlertThreshold    *float64           `json:"alert_threshold"`
	PeriodicReset     *string            `json:"periodic_reset"`
	PeriodicResetDays *int               `json:"periodic_reset_days"`
	WorkspaceID       string             `json:"workspace_id"`
	OrganisationID    string             `json:"organisation_id"`
}

// usageLimitPolicyUpdateBody is UpdateUsageLimitsPolicyRequest, with periodic_reset_days.
// A threshold or schedule sent as null removes it, so those fields tell null from absent.
type usageLimitPolicyUpdateBody struct {
	Name               *string             `json:"name"`
	CreditLimit        *float64            `json:"credit_limit"`
	AlertThreshold     usageField[float64] `json:"alert_threshold"`
	PeriodicReset      usageField[string]  `json:"periodic_reset"`
	PeriodicResetDays  usageField[int]     `json:"periodic_reset_days"`
	ResetUsageForValue *string             `json:"reset_usage_for_value"`
}

// usageField is a body field that tells absent (Set false) from null (Set, Value nil).
type usageField[T any] struct {
	Set   bool
	Value *T
}

func (f *usageField[T]) UnmarshalJSON(b []byte) error {
	f.Set = true
	if bytes.Equal(bytes.TrimSpace(b), []byte("null")) {
		f.Value = nil
		return nil
	}
	var v T
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	f.Value = &v
	return nil
}

// usageLimitPolicyAnswer is UsageLimitsPolicy with object "policy_usage_limits". The usage
// of each value key is shown only when asked for (include_usage=true), as the reference does.
type usageLimitPolicyAnswer struct {
	domain.UsageLimitPolicy
	Entities *map[string]usageLimitEntityState `json:"value_key_usage_map,omitempty"`
	Object   string                            `json:"object"`
}

func usageLimitPolicyView(p domain.UsageLimitPolicy, withUsage bool) usageLimitPolicyAnswer {
	if p.Conditions == nil {
		p.Conditions = []domain.Condition{}
	}
	if p.GroupBy == nil {
		p.GroupBy = []domain.GroupBy{}
	}
	p.CreatedAt, p.LastUpdatedAt = usageTime(p.CreatedAt), usageTime(p.LastUpdatedAt)
	p.NextUsageResetAt, p.LastResetAt = usageTimePtr(p.NextUsageResetAt), usageTimePtr(p.LastResetAt)
	out := usageLimitPolicyAnswer{UsageLimitPolicy: p, Object: "policy_usage_limits"}
	if withUsage {
		usage := make(map[string]usageLimitEntityState, len(p.Entities))
		for k, en := range p.Entities {
			usage[k] = usageLimitEntityView(en).usageLimitEntityState
		}
		out.Entities = &usage
	}
	return out
}

// usageLimitEntityAnswer is UsageLimitsPolicyEntity: id, value_key, current_usage, and its
// status and alerts in the current period.
type usageLimitEntityAnswer struct {
	usageLimitEntityState
	Object string `json:"object"`
}

// usageLimitEntityState is an entity with its usage rounded as money is.
type usageLimitEntityState struct {
	domain.UsageLimitEntity
	CurrentUsage amount `json:"current_usage"`
}

func usageLimitEntityView(en domain.UsageLimitEntity) usageLimitEntityAnswer {
	en.CreatedAt, en.LastUpdatedAt, en.LastResetAt = usageTime(en.CreatedAt), usageTime(en.LastUpdatedAt), usageTimePtr(en.LastResetAt)
	return usageLimitEntityAnswer{usageLimitEntityState: usageLimitEntityState{UsageLimitEntity: en, CurrentUsage: amount(en.CurrentUsage)},
		Object: "policy_usage_limits_entity"}
}

func usageTime(t time.Time) time.Time { return t.UTC().Truncate(time.Millisecond) }

func usageTimePtr(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	v := usageTime(*t)
	return &v
}

func usageLimitPolicyID(r *http.Request) (string, error) {
	id := mux.Vars(r)["id"]
	if !isUUID(id) {
		return "", domain.Invalid("policyUsageLimitsId", "policyUsageLimitsId must be a UUID")
	}
	return id, nil
}

func (a *Admin) registerUsageLimitPolicies(r *mux.Router) {
	on := func(h handler) http.Handler {
		return a.route("usage_limit_policy", func(w http.ResponseWriter, r *http.Request) (int, any, error) {
			if !a.Features.Policy {
				return 0, nil, domain.Errorf(domain.CodeDisabled, "policies are turned off (POLICY_ENABLED=OFF)")
			}
			if !a.Features.UsageLimits {
				return 0, nil, domain.Errorf(domain.CodeDisabled, "usage limits are turned off (USAGE_LIMITS_ENABLED=OFF)")
			}
			return h(w, r)
		})
	}
	// visiblePolicy reads a policy the actor may see, or answers 404 as if it did not exist.
	visiblePolicy := func(r *http.Request, id string) (domain.UsageLimitPolicy, error) {
		return a.reads().UsageLimitPolicy(r.Context(), actorFrom(r.Context()), id)
	}

	r.Handle("/policies/usage-limits", on(write(a, a.Commands.CreateUsageLimitPolicy, nowhere,
		func(r *http.Request, _ struct{}, b usageLimitPolicyBody) (commands.CreateUsageLimitPolicy, error) {
			if err := ownOrganisationID(r, b.OrganisationID); err != nil {
				return commands.CreateUsageLimitPolicy{}, err
			}
			return commands.CreateUsageLimitPolicy{WorkspaceID: b.WorkspaceID, Name: b.Name,
				Conditions: b.Conditions, GroupBy: b.GroupBy, Type: b.Type, CreditLimit: b.CreditLimit,
				AlertThreshold: b.AlertThreshold, PeriodicReset: b.PeriodicReset, PeriodicResetDays: b.PeriodicResetDays}, nil
		},
		func(_ *http.Request, _ struct{}, _ commands.CreateUsageLimitPolicy, res commands.Result) (int, any, error) {
			return http.StatusOK, map[string]string{"id": res.ID, "object": "policy_usage_limits"}, nil
		}))).Methods(http.MethodPost)

	r.Handle("/policies/usage-limits", on(func(w http.ResponseWriter, r *http.Request) (int, any, error) {
		f, err := policyListFilter(r)
		if err != nil {
			return 0, nil, err
		}
		typ := r.URL.Query().Get("type")
		if typ != "" && typ != domain.UsageCost && typ != domain.UsageTokens {
			return 0, nil, domain.Invalid("type", "type must be cost or tokens (got %q)", typ)
		}
		views := []usageLimitPolicyAnswer{}
		found, err := a.reads().UsageLimitPolicies(r.Context(), actorFrom(r.Context()), f, typ)
		if err != nil {
			return 0, nil, err
		}
		for _, p := range found {
			views = append(views, usageLimitPolicyView(p, false))
		}
		list, err := page(r, views)
		return http.StatusOK, list, err
	})).Methods(http.MethodGet)

	r.Handle("/policies/usage-limits/{id}", on(func(w http.ResponseWriter, r *http.Request) (int, any, error) {
		if asOfRequested(r) {
			return asOf(a, w, r, usageLimitPolicyAsOf)
		}
		if err := requireScope(actorFrom(r.Context()), "policies.read"); err != nil {
			return 0, nil, err
		}
		id, err := usageLimitPolicyID(r)
		if err != nil {
			return 0, nil, err
		}
		st, err := statuses(r, domain.StatusActive, domain.StatusActive, domain.StatusArchived)
		if err != nil {
			return 0, nil, err
		}
		withUsage := false
		if raw := r.URL.Query().Get("include_usage"); raw != "" {
			if withUsage, err = strconv.ParseBool(raw); err != nil {
				return 0, nil, domain.Invalid("include_usage", "include_usage must be true or false (got %q)", raw)
			}
		}
		p, err := visiblePolicy(r, id)
		if err != nil {
			return 0, nil, err
		}
		if !st[p.Status] {
			return 0, nil, domain.Errorf(domain.CodeNotFound, "usage limit policy %s not found", id)
		}
		a.etag(w, r, domain.UsageLimitPolicyPrefix, p.ID)
		return http.StatusOK, usageLimitPolicyView(p, withUsage), nil
	})).Methods(http.MethodGet)

	r.Handle("/policies/usage-limits/{id}", on(write(a, a.Commands.UpdateUsageLimitPolicy, usageLimitPolicyID,
		func(_ *http.Request, id string, b usageLimitPolicyUpdateBody) (commands.UpdateUsageLimitPolicy, error) {
			return commands.UpdateUsageLimitPolicy{PolicyID: id, UpdateUsageLimitPolicy: domain.UpdateUsageLimitPolicy{
				Name: b.Name, CreditLimit: b.CreditLimit, AlertThreshold: b.AlertThreshold.Value,
				ClearAlertThreshold: b.AlertThreshold.Set && b.AlertThreshold.Value == nil,
				SetSchedule:         b.PeriodicReset.Set || b.PeriodicResetDays.Set,
				PeriodicReset:       b.PeriodicReset.Value, PeriodicResetDays: b.PeriodicResetDays.Value,
				ResetUsageForValue: b.ResetUsageForValue,
			}}, nil
		},
		func(r *http.Request, id string, _ commands.UpdateUsageLimitPolicy, _ commands.Result) (int, any, error) {
			p, _, err := a.Read.UsageLimitPolicy(r.Context(), actorFrom(r.Context()).OrganisationID, id)
			if err != nil {
				return 0, nil, err
			}
			return http.StatusOK, usageLimitPolicyView(p, false), nil
		}))).Methods(http.MethodPut)

	r.Handle("/policies/usage-limits/{id}", on(pathWrite(a, a.Commands.ArchiveUsageLimitPolicy, usageLimitPolicyID,
		func(id string) commands.ArchiveUsageLimitPolicy {
			return commands.ArchiveUsageLimitPolicy{PolicyID: id}
		},
		func(id string) any {
			return map[string]string{"id": id, "object": "policy_usage_limits", "status": domain.StatusArchived}
		}))).Methods(http.MethodDelete)

	// The entities of a policy, archived ones included: their usage stays readable.
	r.Handle("/policies/usage-limits/{id}/entities", on(func(w http.ResponseWriter, r *http.Request) (int, any, error) {
		if err := requireScope(actorFrom(r.Context()), "policies.read"); err != nil {
			return 0, nil, err
		}
		id, err := usageLimitPolicyID(r)
		if err != nil {
			return 0, nil, err
		}
		f := projections.UsageEntityFilter{Search: r.URL.Query().Get("search")}
		if r.URL.Query().Get("status") != "" {
			if f.Statuses, err = statuses(r, "", domain.UsageEntityActive, domain.UsageEntityExhausted); err != nil {
				return 0, nil, err
			}
		}
		entities, err := a.reads().UsageLimitPolicyEntities(r.Context(), actorFrom(r.Context()), id, f)
		if err != nil {
			return 0, nil, err
		}
		views := make([]usageLimitEntityAnswer, 0, len(entities))
		for _, en := range entities {
			views = append(views, usageLimitEntityView(en))
		}
		list, err := page(r, views)
		return http.StatusOK, list, err
	})).Methods(http.MethodGet)

	// entityId is the entity's id, or its value key URL-escaped (a value key holding '/'
	// can only be reached by its id).
	reset := on(write(a, a.Commands.ResetUsageLimitPolicyEntity, usageLimitPolicyID,
		func(r *http.Request, id string, _ noBody) (commands.ResetUsageLimitPolicyEntity, error) {
			ref := mux.Vars(r)["entityId"]
			// An entity the gateway has charged but no event has named yet is known by the read
			// side's merge with the usage ledger: reset it by its value key.
			c := commands.ResetUsageLimitPolicyEntity{PolicyID: id, Entity: ref}
			p, ok, err := a.Read.UsageLimitPolicy(r.Context(), actorFrom(r.Context()).OrganisationID, id)
			if err != nil {
				return c, err
			}
			if ok {
				if en, found := p.EntityByRef(ref); found {
					c.ValueKey = en.ValueKey
				}
			}
			return c, nil
		},
		func(r *http.Request, id string, c commands.ResetUsageLimitPolicyEntity, _ commands.Result) (int, any, error) {
			p, _, err := a.Read.UsageLimitPolicy(r.Context(), actorFrom(r.Context()).OrganisationID, id)
			if err != nil {
				return 0, nil, err
			}
			en, _ := p.EntityByRef(c.Entity)
			return http.StatusOK, usageLimitEntityView(en), nil
		}))
	r.Handle("/policies/usage-limits/{id}/entities/{entityId}/reset", reset).Methods(http.MethodPut, http.MethodPost)
}
