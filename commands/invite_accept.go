package commands

import (
	"context"
	"errors"
	"time"

	"github.com/google/uuid"

	"github.com/causeway/causeway/domain"
)

// AcceptInvite is the invitee's use of the invite's token: it needs no API key, the token is
// the credential. It creates the user, adds them to the invited workspaces and, when the
// invite asks for them, issues a workspace-user API key in each.
type AcceptInvite struct {
	Token     string
	FirstName string
	LastName  string
}

// IssuedKey is a key the acceptance created; its plaintext is shown in this answer only.
type IssuedKey struct {
	KeyID       string
	WorkspaceID string
	Key         string
}

// AcceptedInvite says who joined, where, and with which keys.
type AcceptedInvite struct {
	Result
	OrganisationID string
	UserID         string
	WorkspaceIDs   []string
	Keys           []IssuedKey
}

type acceptInviteHandler struct{ d Deps }

func NewAcceptInviteHandler(d Deps) (acceptInviteHandler, error) {
	return acceptInviteHandler{d}, d.check()
}

// Handle decides the acceptance on the invite's stream first, so that of two uses of one
// token exactly one wins; everything it checks can refuse before that, and what follows only
// carries the decision out.
func (h acceptInviteHandler) Handle(ctx context.Context, c AcceptInvite) (AcceptedInvite, error) {
	if c.Token == "" {
		return AcceptedInvite{}, domain.Invalid("token", "token is required")
	}
	inviteID, ok := domain.InviteIDOfToken(c.Token)
	if !ok {
		return AcceptedInvite{}, &domain.Error{Code: domain.CodeNotFound, Param: "token", Message: "no invite has this token"}
	}
	inv, err := Load(ctx, h.d, domain.Stream(domain.InvitePrefix, inviteID), newInvite)
	if err != nil {
		return AcceptedInvite{}, err
	}
	// The invitee acts as the user they are becoming; a retry is refused as a second use, so
	// no idempotency key applies.
	req := RequestFrom(ctx)
	userID := uuid.NewString()
	req.Actor = domain.Actor{Kind: domain.ActorUser, ID: userID, OrganisationID: inv.OrganisationID, OrgRole: inv.Role}
	req.IdempotencyKey = ""
	ctx = WithRequest(ctx, req)

	member, stale := false, ""
	if inv.Exists() {
		if member, stale, err = emailHolder(ctx, h.d, inv.OrganisationID, inv.Email); err != nil {
			return AcceptedInvite{}, err
		}
	}
	now := h.d.Now()
	decision := domain.AcceptInvite{Token: c.Token, UserID: userID, FirstName: c.FirstName, LastName: c.LastName, Member: member}
	res, err := execute(ctx, h.d, domain.Stream(domain.InvitePrefix, inviteID), newInvite,
		func(i *domain.Invite) ([]domain.Event, error) { return i.Accept(decision, now) })
	if err != nil {
		var e *domain.Error
		if errors.As(err, &e) && e.Detail == "invite_expired" {
			return AcceptedInvite{}, h.recordExpiry(ctx, inv, err)
		}
		return AcceptedInvite{}, err
	}
	out := AcceptedInvite{Result: Result{ID: userID, Position: res.Position}, OrganisationID: inv.OrganisationID,
		UserID: userID, WorkspaceIDs: []string{}}
	track := func(r Result, err error) error {
		out.Position = max(out.Position, r.Position)
		return err
	}

	if stale != "" {
		if err := releaseEmail(ctx, h.d, EmailReservation, inv.Email, stale); err != nil {
			return AcceptedInvite{}, err
		}
	}
	if err := holdEmail(ctx, h.d, EmailReservation, inv.Email, userID); err != nil {
		return AcceptedInvite{}, err
	}
	if err := releaseEmail(ctx, h.d, InviteEmailReservation, inv.Email, inv.ID); err != nil {
		return AcceptedInvite{}, err
	}
	if err := track(execute(ctx, h.d, domain.Stream(domain.UserPrefix, userID), func() *domain.User { return &domain.User{} },
		func(u *domain.User) ([]domain.Event, error) {
			return u.Join(domain.UserJoined{UserID: userID, OrganisationID: inv.OrganisationID, Email: inv.Email,
				FirstName: c.FirstName, LastName: c.LastName, Role: inv.Role, InviteID: inv.ID, At: now})
		})); err != nil {
		return AcceptedInvite{}, err
	}
	joiner := &domain.User{ID: userID}
	for _, w := range inv.Workspaces {
		active := false
		if err := track(execute(ctx, h.d, domain.Stream(domain.WorkspacePrefix, w.WorkspaceID), freshWorkspace,
			func(ws *domain.Workspace) ([]domain.Event, error) {
				active = ws.Active() && ws.OrganisationID == inv.OrganisationID
				if !active {
					return nil, nil // archived since the invite: the invitee joins the others
				}
				return joiner.JoinWorkspace(ws, w.Role, now), nil
			})); err != nil {
			return AcceptedInvite{}, err
		}
		if active {
			out.WorkspaceIDs = append(out.WorkspaceIDs, w.WorkspaceID)
		}
	}
	if inv.WorkspaceAPIKeyDetails != nil {
		for _, ws := range out.WorkspaceIDs {
			key, err := h.issueKey(ctx, inv, userID, ws, now, track)
			if err != nil {
				return AcceptedInvite{}, err
			}
			out.Keys = append(out.Keys, key)
		}
	}
	return out, nil
}

// recordExpiry records, as the system, that the invite was found past its expiry, and
// returns the refusal.
func (h acceptInviteHandler) recordExpiry(ctx context.Context, inv *domain.Invite, refusal error) error {
	req := RequestFrom(ctx)
	req.Actor = domain.System(inv.OrganisationID)
	if _, err := execute(WithRequest(ctx, req), h.d, domain.Stream(domain.InvitePrefix, inv.ID), newInvite,
		func(i *domain.Invite) ([]domain.Event, error) { return i.Expire(h.d.Now()), nil }); err != nil {
		return err
	}
	return refusal
}

// issueKey creates the invitee's workspace-user key in ws with the scopes the inviter chose
// (and held, checked when inviting).
func (h acceptInviteHandler) issueKey(ctx context.Context, inv *domain.Invite, userID, ws string, now time.Time,
	track func(Result, error) error) (IssuedKey, error) {
	id := NewID(ctx, "apikey:"+ws)
	key := domain.NewSecretKey()
	err := track(execute(ctx, h.d, domain.Stream(domain.APIKeyPrefix, id), newAPIKey,
		func(k *domain.APIKey) ([]domain.Event, error) {
			return k.Create(domain.CreateAPIKey{KeyID: id, Key: key, Name: "Invited user key", Type: domain.KeyWorkspaceUser,
				OrganisationID: inv.OrganisationID, WorkspaceID: ws, UserID: userID,
				Scopes: inv.WorkspaceAPIKeyDetails.Scopes, CreatedBy: userID}, now)
		}))
	return IssuedKey{KeyID: id, WorkspaceID: ws, Key: key}, err
}
