package commands

import (
	"context"
	"errors"
	"time"
)

// RunEvery runs tick at once and then every interval until ctx ends, handing failed passes to
// onError: a background worker's loop. What a pass failed to do, the next pass retries.
func RunEvery(ctx context.Context, name string, every time.Duration, tick func(context.Context) error, onError func(error)) error {
	if every <= 0 {
		return errors.New("commands: the " + name + " needs a positive interval")
	}
	ticker := time.NewTicker(every)
	defer ticker.Stop()
	for {
		if err := tick(ctx); err != nil && ctx.Err() == nil && onError != nil {
			onError(err)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-ticker.C:
		}
	}
}
