package commands

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/causeway/causeway/domain"
)

// DueKeys finds the keys the key worker must act on at now: those whose expiry time has
// passed, those whose scheduled rotation is due, and those whose expiry or rotation falls
// within the notice period (domain.KeyNoticePeriod).
type DueKeys interface {
	KeysDue(ctx context.Context, now time.Time) (expire, rotate, warn []domain.APIKey, err error)
}

// KeyWorker carries out the time-driven part of the key lifecycle as the system actor: it
// records expiries, performs scheduled rotations and warns of upcoming ones. Every action has
// an idempotency key derived from the key and the moment it concerns, so workers in several
// processes, or a pass repeated after a crash, act once.
type KeyWorker struct {
	d      Deps
	keys   DueKeys
	rotate rotateAPIKeyHandler
	// OnError, when set, hears the errors of Run's passes; what failed is retried next pass.
	OnError func(error)
}

// NewKeyWorker needs the server secret from which scheduled rotations derive their new key.
func NewKeyWorker(d Deps, keys DueKeys, secret []byte) (*KeyWorker, error) {
	if keys == nil {
		return nil, errors.New("commands: nil due keys")
	}
	rotate, err := NewRotateAPIKeyHandler(d, secret)
	if err != nil {
		return nil, err
	}
	return &KeyWorker{d: d, keys: keys, rotate: rotate}, nil
}

// Run makes a pass at once and then every interval, until ctx ends.
func (w *KeyWorker) Run(ctx context.Context, every time.Duration) error {
	return RunEvery(ctx, "key worker", every, w.Tick, w.OnError)
}

// Tick makes one pass at the clock's current time. A failure with one key does not stop the
// others; the failures are returned together.
func (w *KeyWorker) Tick(ctx context.Context) error {
	now := w.d.Now()
	expire, rotate, warn, err := w.keys.KeysDue(ctx, now)
	if err != nil {
		return err
	}
	var errs []error
	for _, k := range expire {
		errs = append(errs, w.expire(ctx, k))
	}
	for _, k := range rotate {
		errs = append(errs, w.rotateOnSchedule(ctx, k))
	}
	for _, k := range warn {
		errs = append(errs, w.warn(ctx, k, now))
	}
	return errors.Join(errs...)
}

// asSystem is the request of one worker action on k, named by its idempotency key.
func asSystem(ctx context.Context, k domain.APIKey, idempotencyKey string) context.Context {
	return WithRequest(ctx, Request{Actor: domain.System(k.OrganisationID), RequestID: "keyworker-" + idempotencyKey,
		IdempotencyKey: idempotencyKey})
}

func stamp(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }

func (w *KeyWorker) expire(ctx context.Context, k domain.APIKey) error {
	ctx = asSystem(ctx, k, "expire-"+k.ID+"-"+stamp(*k.ExpiresAt))
	var expired *domain.APIKey
	res, err := execute(ctx, w.d, domain.Stream(domain.APIKeyPrefix, k.ID), newAPIKey,
		func(cur *domain.APIKey) ([]domain.Event, error) {
			expired = cur
			evs, err := cur.Expire(w.d.Now())
			if domain.ErrorCode(err) == domain.CodeConflict {
				return nil, nil // its expiry moved after the read model was read
			}
			return evs, err
		})
	if err != nil {
		return fmt.Errorf("expire api key %s: %w", k.ID, err)
	}
	if res.Position == 0 {
		return nil
	}
	if expired == nil {
		expired = &k // a replay: another pass expired it, and may have stopped before notifying
	}
	return w.notice(ctx, expired, domain.NotifyKeyExpired, "API key "+expired.Name+" has expired",
		map[string]string{"expires_at": stamp(*k.ExpiresAt)})
}

func (w *KeyWorker) rotateOnSchedule(ctx context.Context, k domain.APIKey) error {
	due := *k.RotationPolicy.NextRotationAt
	res, err := w.rotate.Handle(asSystem(ctx, k, "rotate-"+k.ID+"-"+stamp(due)),
		RotateAPIKey{KeyID: k.ID, Scheduled: true, DueAt: due})
	if err == nil {
		err = res.NotifyErr
	}
	if err != nil {
		return fmt.Errorf("rotate api key %s on schedule: %w", k.ID, err)
	}
	return nil
}

// warn raises the upcoming-expiry and upcoming-rotation notices, once per expiry time and
// per scheduled rotation.
func (w *KeyWorker) warn(ctx context.Context, k domain.APIKey, now time.Time) error {
	var errs []error
	if k.ExpiryNoticeDue(now) {
		at := stamp(*k.ExpiresAt)
		errs = append(errs, w.notice(asSystem(ctx, k, "expiry-warning-"+k.ID+"-"+at), &k, domain.NotifyKeyExpirySoon,
			"API key "+k.Name+" expires at "+at, map[string]string{"expires_at": at}))
	}
	if k.RotationNoticeDue(now) {
		at := stamp(*k.RotationPolicy.NextRotationAt)
		errs = append(errs, w.notice(asSystem(ctx, k, "rotation-warning-"+k.ID+"-"+at), &k, domain.NotifyKeyRotationSoon,
			"API key "+k.Name+" will be rotated at "+at, map[string]string{"next_rotation_at": at}))
	}
	return errors.Join(errs...)
}

func (w *KeyWorker) notice(ctx context.Context, k *domain.APIKey, kind, subject string, data map[string]string) error {
	data["key"] = k.Masked
	err := notify(ctx, w.d, domain.NotificationRecorded{OrganisationID: k.OrganisationID, WorkspaceID: k.WorkspaceID,
		Kind: kind, Recipients: keyRecipients(k), Subject: subject, ResourceType: "api_key", ResourceID: k.ID, Data: data})
	if err != nil {
		return fmt.Errorf("notify %s for api key %s: %w", kind, k.ID, err)
	}
	return nil
}
