package commands

import (
	"context"
	"time"

	"github.com/causeway/causeway/domain"
)

// RotateAPIKey issues a new key; the old one keeps working for the transition period (at
// least 30 minutes; zero takes the key's rotation policy or 30 minutes).
type RotateAPIKey struct {
	KeyID      string
	Transition time.Duration
	// Scheduled marks a rotation by the scheduler rather than a person.
	Scheduled bool
}

// RotatedAPIKey is the answer of a rotation: the new plaintext key, shown once.
type RotatedAPIKey struct {
	Result
	Key              string
	TransitionEndsAt time.Time
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
	key := domain.NewSecretKey()
	if req.IdempotencyKey != "" {
		key = domain.DeriveSecretKey(h.secret, req.Actor.ID+"\x00rotate\x00"+c.KeyID+"\x00"+req.IdempotencyKey)
	}
	var rotated domain.APIKeyRotated
	res, err := execute(ctx, h.d, domain.Stream(domain.APIKeyPrefix, c.KeyID), newAPIKey,
		func(k *domain.APIKey) ([]domain.Event, error) {
			evs, err := k.Rotate(key, c.Transition, c.Scheduled, h.d.Now())
			if err == nil {
				rotated = evs[0].(domain.APIKeyRotated)
			}
			return evs, err
		})
	if err != nil {
		return RotatedAPIKey{}, err
	}
	res.ID = c.KeyID
	out := RotatedAPIKey{Result: res, Key: key, TransitionEndsAt: rotated.PreviousValidUntil}
	if res.Replayed {
		// The first rotation's answer: its transition end is in the stored event.
		k, err := Load(ctx, h.d, domain.Stream(domain.APIKeyPrefix, c.KeyID), newAPIKey)
		if err != nil {
			return RotatedAPIKey{}, err
		}
		if k.PreviousValidUntil != nil {
			out.TransitionEndsAt = *k.PreviousValidUntil
		}
	}
	return out, nil
}
