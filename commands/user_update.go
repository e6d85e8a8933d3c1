package commands

import (
	"context"

	"github.com/causeway/causeway/domain"
)

// UpdateUser changes a user's organisation role or names.
type UpdateUser struct {
	UserID    string
	Role      *string
	FirstName *string
	LastName  *string
}

type updateUserHandler struct{ d Deps }

// NewUpdateUserHandler refuses missing dependencies. Users are managed by the organisation's
// owners and admins (requireUserManager).
func NewUpdateUserHandler(d Deps) (Handler[UpdateUser, Result], error) {
	return authorised(needs(requireUserManager, "organisation_users.update"), updateUserHandler{d}), d.check()
}

func (h updateUserHandler) Handle(ctx context.Context, c UpdateUser) (Result, error) {
	actor := RequestFrom(ctx).Actor
	if _, err := loadUserOf(ctx, h.d, actor.OrganisationID, c.UserID); err != nil {
		return Result{}, err
	}
	owner, err := organisationOwner(ctx, h.d, actor.OrganisationID)
	if err != nil {
		return Result{}, err
	}
	res, err := execute(ctx, h.d, domain.Stream(domain.UserPrefix, c.UserID), newUser,
		func(u *domain.User) ([]domain.Event, error) {
			return u.Update(domain.UpdateUser{Role: c.Role, FirstName: c.FirstName, LastName: c.LastName,
				ActorRole: actor.OrgRole, OrganisationOwner: owner == u.ID}, h.d.Now())
		})
	res.ID = c.UserID
	return res, err
}

func newUser() *domain.User { return &domain.User{} }

// requireUserManager: the organisation's users are managed by its owners and admins through an
// organisation key; a workspace key never reaches them, whoever holds it (5.2).
func requireUserManager(a domain.Actor, scope string) error {
	if workspaceKey(a) {
		return forbidden("a workspace API key cannot manage the organisation's users; use an organisation admin key")
	}
	return requireOrgAdmin(a, scope)
}

// loadUserOf loads an active user of the organisation.
func loadUserOf(ctx context.Context, d Deps, orgID, id string) (*domain.User, error) {
	u, err := Load(ctx, d, domain.Stream(domain.UserPrefix, id), newUser)
	if err != nil {
		return nil, err
	}
	if !u.Exists() || u.OrganisationID != orgID {
		return nil, domain.Errorf(domain.CodeNotFound, "user %s not found", id)
	}
	return u, nil
}

// organisationOwner is the owner the organisation records. It stays an owner and a member:
// that is what guarantees the organisation never loses its last owner.
func organisationOwner(ctx context.Context, d Deps, orgID string) (string, error) {
	org, err := Load(ctx, d, domain.Stream(domain.OrganisationPrefix, orgID), func() *domain.Organisation { return &domain.Organisation{} })
	return org.OwnerUserID, err
}
