package commands

import (
	"context"
	"time"

	"github.com/causeway/causeway/domain"
)

// UpdateProvider changes a provider; nil fields stay as they are and Clear flags remove.
// Key and Configurations (merged field by field) apply only to a provider with a credential
// of its own. ResetUsage zeroes its usage.
type UpdateProvider struct {
	VirtualKey       bool
	ProviderID       string
	Name             *string
	Note             *string
	Key              *string
	Configurations   map[string]any
	UsageLimits      *domain.UsageLimits
	ClearUsageLimits bool
	RateLimits       []domain.RateLimit
	ClearRateLimits  bool
	ExpiresAt        *time.Time
	ClearExpiresAt   bool
	Tags             map[string]string
	ClearTags        bool
	ResetUsage       bool
}

type updateProviderHandler struct {
	d Deps
	s Sealer
	u URLChecker
}

// NewUpdateProviderHandler refuses missing dependencies.
func NewUpdateProviderHandler(d Deps, s Sealer, u URLChecker) (updateProviderHandler, error) {
	return updateProviderHandler{d, s, u}, checkSecretDeps(d, s, u)
}

func (h updateProviderHandler) Handle(ctx context.Context, c UpdateProvider) (Result, error) {
	if _, err := loadProviderFor(ctx, h.d, c.ProviderID, providerScope(c.VirtualKey, "update")); err != nil {
		return Result{}, err
	}
	if err := checkURLs(h.u, c.Configurations); err != nil {
		return Result{}, err
	}
	stream := domain.Stream(domain.ProviderPrefix, c.ProviderID)
	res, err := execute(ctx, h.d, stream, newProvider, func(p *domain.Provider) ([]domain.Event, error) {
		return p.Update(domain.UpdateProvider{Name: c.Name, Note: c.Note, Key: c.Key, Configurations: c.Configurations,
			UsageLimits: c.UsageLimits, ClearUsageLimits: c.ClearUsageLimits, RateLimits: c.RateLimits,
			ClearRateLimits: c.ClearRateLimits, ExpiresAt: c.ExpiresAt, ClearExpiresAt: c.ClearExpiresAt, Tags: c.Tags,
			ClearTags: c.ClearTags, ResetUsage: c.ResetUsage}, sealFor(h.s, stream), h.d.Now())
	})
	res.ID = c.ProviderID
	return res, err
}
