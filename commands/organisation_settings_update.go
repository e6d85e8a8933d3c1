package commands

import (
	"context"

	"github.com/causeway/causeway/domain"
)

// UpdateOrganisationSettings changes some of the organisation's security settings and its
// session TTL (nil: unchanged).
type UpdateOrganisationSettings struct {
	Security      domain.SecurityPatch
	MaxSessionTTL *int
}

type updateOrganisationSettingsHandler struct{ d Deps }

// NewUpdateOrganisationSettingsHandler refuses missing dependencies. Organisation admins
// change the settings with an organisation key (requireAdminKey).
func NewUpdateOrganisationSettingsHandler(d Deps) (Handler[UpdateOrganisationSettings, Result], error) {
	return authorised(needs(requireAdminKey, "organisations.update"), updateOrganisationSettingsHandler{d}), d.check()
}

func (h updateOrganisationSettingsHandler) Handle(ctx context.Context, c UpdateOrganisationSettings) (Result, error) {
	actor := RequestFrom(ctx).Actor
	res, err := execute(ctx, h.d, domain.Stream(domain.OrganisationPrefix, actor.OrganisationID),
		func() *domain.Organisation { return &domain.Organisation{} },
		func(o *domain.Organisation) ([]domain.Event, error) {
			return o.UpdateSecurity(c.Security, c.MaxSessionTTL, h.d.Now())
		})
	res.ID = actor.OrganisationID
	return res, err
}
