package httpapi

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"

	"github.com/gorilla/mux"

	"github.com/causeway/causeway/commands"
	"github.com/causeway/causeway/domain"
	"github.com/causeway/causeway/gateway/pricing"
)

// PricingReader answers the price of a model from the default sources (the memory cache, the
// proxy, the log store, local files and the shipped prices): *pricing.Book.
type PricingReader interface {
	Lookup(ctx context.Context, orgID, workspaceID, provider, model string) (pricing.Quote, bool)
}

var _ PricingReader = (*pricing.Book)(nil)

// pricingOverrideReader is the read model's query of overrides. The admin API reads overrides
// there rather than through the Book, because that is the read model a write waits for: a
// price set is read back at once.
type pricingOverrideReader interface {
	ModelPricingOverride(ctx context.Context, orgID, workspaceID, provider, model string) (domain.ModelPricingOverride, bool, error)
}

// pricingCalculation is the reference's cost formula, which pricing.ModelPricing.Cost
// follows: uncached input, cache writes and cache reads at their prices, output at the
// response price. It is the same for every model.
var pricingCalculation = json.RawMessage(`{"request":{"operation":"sum","operands":[` +
	`{"operation":"multiply","operands":[{"value":"input_tokens"},{"value":"rates.request_token"}]},` +
	`{"operation":"multiply","operands":[{"value":"cache_write_tokens"},{"value":"rates.cache_write_input_token"}]},` +
	`{"operation":"multiply","operands":[{"value":"cache_read_tokens"},{"value":"rates.cache_read_input_token"}]}]},` +
	`"response":{"operation":"multiply","operands":[{"value":"output_tokens"},{"value":"rates.response_token"}]}}`)

// pricingAnswer is the reference's ModelPricingConfig (prices in USD cents per token), with
// the names it was found under and its source (organisation_override, workspace_override,
// proxy, log_store, local or default).
type pricingAnswer struct {
	PayAsYouGo  domain.ModelPrices `json:"pay_as_you_go"`
	Calculate   json.RawMessage    `json:"calculate"`
	Currency    string             `json:"currency"`
	Provider    string             `json:"provider"`
	Model       string             `json:"model"`
	Source      string             `json:"source"`
	WorkspaceID string             `json:"workspace_id,omitempty"`
}

// pricingBody is PUT's body: the pay_as_you_go prices, as GET answers them, and the workspace
// whose own price it is (absent: the organisation's).
type pricingBody struct {
	PayAsYouGo  *domain.ModelPrices `json:"pay_as_you_go"`
	Currency    *string             `json:"currency"`
	WorkspaceID string              `json:"workspace_id"`
}

func (a *Admin) registerPricing(r *mux.Router) {
	// Model names may hold slashes (meta-llama/Llama-3.3-70B-Instruct-Turbo), so the model
	// is the rest of the path.
	const path = "/model-configs/pricing/{provider}/{model:.+}"

	r.Handle(path, a.route("model_pricing", func(w http.ResponseWriter, r *http.Request) (int, any, error) {
		provider, model, err := pricingNames(r)
		if err != nil {
			return 0, nil, err
		}
		ws, err := pricingWorkspace(actorFrom(r.Context()), r.URL.Query().Get("workspace_id"))
		if err != nil {
			return 0, nil, err
		}
		ans, ok, err := a.effectivePrice(r.Context(), ws, provider, model)
		if err != nil {
			return 0, nil, err
		}
		if !ok {
			return 0, nil, domain.Errorf(domain.CodeNotFound, "no price is known for model %s of provider %s", model, provider)
		}
		return http.StatusOK, ans, nil
	})).Methods(http.MethodGet)

	r.Handle(path, a.route("model_pricing", write(a, a.Commands.SetModelPricing, pricingPath,
		func(_ *http.Request, m pricedModel, b pricingBody) (commands.SetModelPricing, error) {
			if b.PayAsYouGo == nil {
				return commands.SetModelPricing{}, domain.Invalid("pay_as_you_go", "pay_as_you_go is required")
			}
			if b.Currency != nil && *b.Currency != domain.PricingCurrency {
				return commands.SetModelPricing{}, domain.Invalid("currency", "currency must be USD (got %q)", *b.Currency)
			}
			return commands.SetModelPricing{WorkspaceID: b.WorkspaceID, Provider: m.provider,
				Model: m.model, PayAsYouGo: *b.PayAsYouGo}, nil
		},
		func(r *http.Request, m pricedModel, c commands.SetModelPricing, _ commands.Result) (int, any, error) {
			ans, _, err := a.effectivePrice(r.Context(), strings.TrimSpace(c.WorkspaceID), m.provider, m.model)
			return http.StatusOK, ans, err
		}))).Methods(http.MethodPut)

	r.Handle(path, a.route("model_pricing", write(a, a.Commands.RemoveModelPricing, pricingPath,
		func(r *http.Request, m pricedModel, _ noBody) (commands.RemoveModelPricing, error) {
			ws := strings.TrimSpace(r.URL.Query().Get("workspace_id"))
			return commands.RemoveModelPricing{WorkspaceID: ws, Provider: m.provider, Model: m.model}, nil
		},
		func(_ *http.Request, m pricedModel, c commands.RemoveModelPricing, res commands.Result) (int, any, error) {
			return http.StatusOK, map[string]string{"id": res.ID, "object": "model_pricing_override", "provider": m.provider,
				"model": m.model, "workspace_id": c.WorkspaceID, "status": domain.StatusRemoved}, nil
		}))).Methods(http.MethodDelete)
}

// pricedModel is the model a pricing path names.
type pricedModel struct{ provider, model string }

// pricingPath reads the model a pricing write names (pricingNames).
func pricingPath(r *http.Request) (pricedModel, error) {
	provider, model, err := pricingNames(r)
	return pricedModel{provider, model}, err
}

// pricingNames reads the path's provider (normalised) and model, each at most 255 characters.
func pricingNames(r *http.Request) (provider, model string, err error) {
	vars := mux.Vars(r)
	provider, model = vars["provider"], strings.TrimSpace(vars["model"])
	if err := domain.ValidateModelName("provider", provider); err != nil {
		return "", "", err
	}
	if err := domain.ValidateModelName("model", model); err != nil {
		return "", "", err
	}
	return domain.NormaliseProvider(provider), model, nil
}

// pricingWorkspace is the workspace whose prices a read answers: a workspace key's own; for an
// organisation key the workspace_id asked for, or none (the organisation's prices).
func pricingWorkspace(actor domain.Actor, requested string) (string, error) {
	requested = strings.TrimSpace(requested)
	if actor.Kind == domain.ActorAPIKey && actor.KeyType != domain.KeyOrganisationService {
		if requested != "" && requested != actor.WorkspaceID {
			return "", domain.Errorf(domain.CodeForbidden, "this API key has no access to workspace %s", requested)
		}
		return actor.WorkspaceID, nil
	}
	return requested, nil
}

// effectivePrice is the price in force for the caller's organisation (and workspace): an
// override from the read model, else the Book's default sources.
func (a *Admin) effectivePrice(ctx context.Context, workspaceID, provider, model string) (pricingAnswer, bool, error) {
	o, inWorkspace, found, err := a.reads().PricingOverride(ctx, actorFrom(ctx).OrganisationID, workspaceID, provider, model)
	if err != nil {
		return pricingAnswer{}, false, err
	}
	if found {
		source := pricing.SourceOrganisationOverride
		if inWorkspace {
			source = pricing.SourceWorkspaceOverride
		}
		return pricingAnswer{PayAsYouGo: o.PayAsYouGo, Calculate: pricingCalculation, Currency: domain.PricingCurrency,
			Provider: o.Provider, Model: o.Model, Source: string(source), WorkspaceID: o.WorkspaceID}, true, nil
	}
	if a.Pricing == nil {
		return pricingAnswer{}, false, nil
	}
	// No organisation: the overrides are the read model's, read above (as it was, for as_of).
	q, ok := a.Pricing.Lookup(ctx, "", "", provider, model)
	if !ok {
		return pricingAnswer{}, false, nil
	}
	return pricingAnswer{PayAsYouGo: q.Pricing.PayAsYouGo, Calculate: pricingCalculation, Currency: domain.PricingCurrency,
		Provider: q.Provider, Model: q.Model, Source: string(q.Source)}, true, nil
}
