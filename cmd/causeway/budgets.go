package main

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/causeway/causeway/commands"
	"github.com/causeway/causeway/domain"
	"github.com/causeway/causeway/ledger"
	ledgerpg "github.com/causeway/causeway/ledger/postgres"
	ledgersqlite "github.com/causeway/causeway/ledger/sqlite"
)

// startLedger opens the usage ledger, the durable counters of every budget: in PostgreSQL
// beside the read models in server mode, shared with the other instances through leases (each
// admits against a slice of a budget it holds, under its instance id), and in
// DATA_DIR/ledger.db embedded, where this process is the only one counting. Settled usage is
// written in batches off the request path; a clean stop writes what is left. When a budget
// crosses its alert threshold or its limit, the state change is recorded as events through
// the RecordBudgetUsage command, as the system actor, off the request path too.
func (m *Main) startLedger(startCtx context.Context, pool *pgxpool.Pool, deps commands.Deps) error {
	var (
		store  ledger.Store
		leases ledger.Leases
		err    error
	)
	if pool != nil {
		var shared *ledgerpg.Store
		shared, err = ledgerpg.OpenShared(startCtx, pool, m.Instance.ID)
		store, leases, m.leases = shared, shared, shared
	} else {
		store, err = ledgersqlite.Open(startCtx, filepath.Join(m.Config.DataDir, "ledger.db"))
	}
	if err != nil {
		return fmt.Errorf("usage ledger: %w", err)
	}
	record, err := commands.NewRecordBudgetUsageHandler(deps)
	if err != nil {
		_ = store.Close()
		return err
	}
	m.Ledger = ledger.New(store, ledger.Options{Log: m.Logger, Leases: leases, OnCross: func(c ledger.Crossing) {
		m.recordCrossing(record, c)
	}})
	if err := m.Ledger.Load(startCtx); err != nil {
		_ = store.Close()
		return fmt.Errorf("usage ledger: %w", err)
	}
	go func() { _ = m.Ledger.Run(context.Background()) }()
	m.closers = append(m.closers, func() error {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		err := m.Ledger.Close(ctx)
		return joinErr(err, store.Close())
	})
	return nil
}

// recordCrossing records a budget's threshold or exhaustion as events. The command decides
// nothing twice, so a crossing reported again (another process, a restart) is harmless.
func (m *Main) recordCrossing(h budgetRecorder, c ledger.Crossing) {
	b := c.Budget
	org := m.Index.Organisation(string(b.Kind), b.ID)
	if org == "" {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	key := fmt.Sprintf("budget-%s-%s-%s", b.Name(), b.Period, c.Kind)
	ctx = commands.WithRequest(ctx, commands.Request{Actor: domain.System(org), RequestID: key})
	if _, err := h.Handle(ctx, commands.RecordBudgetUsage{Kind: string(b.Kind), ID: b.ID, Sub: b.Sub, Period: b.Period,
		Usage: c.Used}); err != nil {
		m.Logger.Warn("could not record a budget's state change", "budget", b.Name(), "kind", c.Kind, "error", err)
	}
}

// budgetRecorder is the RecordBudgetUsage command's handler.
type budgetRecorder interface {
	Handle(ctx context.Context, c commands.RecordBudgetUsage) (commands.Result, error)
}

func joinErr(a, b error) error {
	if a != nil {
		return a
	}
	return b
}
