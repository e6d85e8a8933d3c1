package main

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/causeway/causeway/cluster"
	clusterpg "github.com/causeway/causeway/cluster/postgres"
)

// startCluster records this instance in the shared database (server mode) until bg ends: its
// heartbeat and the event position its routing tables have applied, which GET /instances
// lists and a write that asks for it waits on. Its heartbeat also gives back the leases of
// instances that stopped, and a heartbeat that finds this instance forgotten drops its own.
func (m *Main) startCluster(startCtx, bg context.Context, pool *pgxpool.Pool) error {
	reg, err := clusterpg.Open(startCtx, pool)
	if err != nil {
		return fmt.Errorf("cluster registry: %w", err)
	}
	m.Cluster = reg
	member := cluster.Member{
		Self:    cluster.Instance{ID: m.Instance.ID, Version: m.Version, StartedAt: time.Now().UTC()},
		Applied: func() uint64 { return uint64(m.Read.Position()) },
		Lost:    m.Ledger.DropLeases,
		Log:     m.Logger,
	}
	if m.leases != nil {
		member.Reclaim = func(ctx context.Context, id string) error {
			_, err := m.leases.Reclaim(ctx, id)
			return err
		}
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		cluster.Heartbeat(bg, reg, member)
	}()
	m.closers = append(m.closers, func() error {
		m.stop() // ends bg: the heartbeat forgets this instance on its way out
		<-done
		return nil
	})
	return nil
}
