package projections

import (
	"context"
	"time"

	"github.com/causeway/causeway/domain"
)

// KeysDue lists, across every organisation and by id, the keys the key worker must act on at
// now: those whose expiry time has passed (expire), those whose scheduled rotation is due
// (rotate), and those whose expiry or next rotation falls within the notice period (warn).
func (q Queries) KeysDue(ctx context.Context, now time.Time) (expire, rotate, warn []domain.APIKey, err error) {
	keys, err := all(ctx, q.Docs, domain.APIKeyPrefix, func(k *domain.APIKey) bool {
		return k.ExpiryDue(now) || k.RotationDue(now) || k.ExpiryNoticeDue(now) || k.RotationNoticeDue(now)
	}, func(a, b *domain.APIKey) bool { return a.ID < b.ID })
	if err != nil {
		return nil, nil, nil, err
	}
	for _, k := range keys {
		if k.ExpiryDue(now) {
			expire = append(expire, k)
			continue
		}
		if k.RotationDue(now) {
			rotate = append(rotate, k)
		}
		if k.ExpiryNoticeDue(now) || k.RotationNoticeDue(now) {
			warn = append(warn, k)
		}
	}
	return expire, rotate, warn, nil
}
