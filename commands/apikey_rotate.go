package commands

import (
	"context"
	"strconv"
	"time"

	"github.com/causeway/causeway/domain"
)

// RotateAPIKey issues a new key; the old one keeps working for the transition period (at
// least 30 minutes; zero takes the key's rotation policy or 30 minutes).
type RotateAPIKey struct {
	KeyID      string
	Transition time.Duration
	// Scheduled marks a rotation by the scheduler rather than a person; only the system
	// actor may ask for one. DueAt is the next_rotation_at the scheduler saw: if the schedule
	// has moved on since, nothing is rotated.
	Scheduled bool
	DueAt     time.Time
}

// RotatedAPIKey is the answer of a rotation: the new plaintext key, shown once. A scheduled
// rotation that was no longer due has an empty Key and a zero Position.
type RotatedAPIKey struct {
	Result
	Key              string
	TransitionEndsAt time.Time
	// NotifyErr: the rotation is done but its notification could not be recorded. It is
	// kept apart so that the caller still hands out the new key, shown only this once.
	NotifyErr error
}

type rotateAPIKeyHandler struct {
	d      Deps
	secret []byte
}

func NewRotateAPIKeyHandler(d Deps, secret []byte) (rotateAPIKeyHandler, error) {
	if len(secret) < 32 {
		return rotateAPIKeyHandler{}, domain.Errorf(domain.CodeInternal, "commands: the server secret must be at least 32 bytes")
	}
	return rotateAPIKeyHandler{d, secret}, d.check()
}

func (h rotateAPIKeyHandler) Handle(ctx context.Context, c RotateAPIKey) (RotatedAPIKey, error) {
	req := RequestFrom(ctx)
	if c.Scheduled && req.Actor.Kind != domain.ActorSystem {
		return RotatedAPIKey{}, forbidden("only the scheduler rotates keys on schedule")
	}
	if !c.Scheduled {
		if _, err := loadAPIKeyFor(ctx, h.d, c.KeyID, "rotate"); err != nil {
			// A key without the .rotate scope may still rotate with .update, as the reference allows.
			if domain.ErrorCode(err) != domain.CodeForbidden {
				return RotatedAPIKey{}, err
			}
			if _, err2 := loadAPIKeyFor(ctx, h.d, c.KeyID, "update"); err2 != nil {
				return RotatedAPIKey{}, err
			}
		}
	}
	// With an idempotency key (a retried request, or the scheduler's key) the new key is
	// derived, so a retry answers with the same plaintext and two schedulers agree on it.
	key := domain.NewSecretKey()
	if req.IdempotencyKey != "" {
		key = domain.DeriveSecretKey(h.secret, req.Actor.ID+"\x00rotate\x00"+c.KeyID+"\x00"+req.IdempotencyKey)
	}
	res, err := execute(ctx, h.d, domain.Stream(domain.APIKeyPrefix, c.KeyID), newAPIKey,
		func(k *domain.APIKey) ([]domain.Event, error) {
			if c.Scheduled {
				return k.RotateOnSchedule(key, c.DueAt, h.d.Now())
			}
			return k.Rotate(key, c.Transition, false, h.d.Now())
		})
	if err != nil || res.Position == 0 {
		return RotatedAPIKey{Result: res}, err
	}
	res.ID = c.KeyID
	// The rotation's own event says when the transition ends, also for a replayed request.
	k, err := Load(ctx, h.d, domain.Stream(domain.APIKeyPrefix, c.KeyID), newAPIKey)
	if err != nil {
		return RotatedAPIKey{}, err
	}
	out := RotatedAPIKey{Result: res, Key: key}
	if k.PreviousValidUntil != nil {
		out.TransitionEndsAt = *k.PreviousValidUntil
	}
	out.NotifyErr = notifyKeyRotated(ctx, h.d, k, out.TransitionEndsAt, c.Scheduled)
	return out, nil
}

// notifyKeyRotated tells the key's alert e-mails that it was rotated; a key without any is
// still recorded, with no recipients, so that the rotation shows in the notifications.
func notifyKeyRotated(ctx context.Context, d Deps, k *domain.APIKey, transitionEnds time.Time, scheduled bool) error {
	return notify(ctx, d, domain.NotificationRecorded{OrganisationID: k.OrganisationID, WorkspaceID: k.WorkspaceID,
		Kind: domain.NotifyKeyRotated, Recipients: keyRecipients(k), Subject: "API key " + k.Name + " was rotated",
		ResourceType: "api_key", ResourceID: k.ID, Data: map[string]string{"key": k.Masked,
			"previous_key_valid_until": transitionEnds.UTC().Format(time.RFC3339), "scheduled": strconv.FormatBool(scheduled)}})
}

func keyRecipients(k *domain.APIKey) []string {
	return append([]string{}, k.AlertEmails...)
}
