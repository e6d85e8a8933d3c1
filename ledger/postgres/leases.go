package postgres

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/causeway/causeway/ledger"
)

// Leases in PostgreSQL. usage_ledger.leased is the sum of usage_leases.held over every
// instance, and every change to either is made under the usage_ledger row's lock, taken first
// and in (budget, period) order by every statement (Add, Take, Return, Reclaim), so that
// instances neither overshoot nor deadlock:
//
//	Take:    leased += g, held += g, with g <= limit - used - leased
//	Add:     used += d; leased -= c, held -= c, with c = min(d, held): spending moves the lease to usage
//	Return:  leased -= r, held -= r
//	Reclaim: leased -= held, and the holds of an instance gone are deleted
//
// A take left short of what a request needs notifies the other instances (pg_notify on
// demandChannel, with the schema in the payload, so stores in other schemas ignore it).

var _ ledger.Leases = (*Store)(nil)

const (
	demandChannel = "causeway_ledger_demand"
	// demandQueue bounds the demands received and not yet read by the Ledger; more are dropped
	// (the instance that is short asks again on its next take).
	demandQueue = 256
	sep         = "\x1f"
)

// OpenShared is Open for one of several instances on the database: the store keeps the leases
// of instance (a stable id of this process, kept across restarts), gives back at once what a
// previous run under the same id held, and listens for the other instances' demands until
// Close.
func OpenShared(ctx context.Context, pool *pgxpool.Pool, instance string) (*Store, error) {
	if instance == "" || strings.Contains(instance, sep) {
		return nil, errors.New("ledger/postgres: a shared store needs an instance id (without \\x1f)")
	}
	s, err := Open(ctx, pool)
	if err != nil {
		return nil, err
	}
	s.instance = instance
	if _, err := s.Reclaim(ctx, instance); err != nil {
		return nil, err
	}
	var schema string
	if err := pool.QueryRow(ctx, `SELECT current_schema()`).Scan(&schema); err != nil {
		return nil, fail(ctx, "schema", err)
	}
	lctx, stop := context.WithCancel(context.Background())
	s.demands, s.stop, s.done = make(chan ledger.Demand, demandQueue), stop, make(chan struct{})
	go s.listen(lctx, schema)
	return s, nil
}

// Demands tells of the counters another instance could not take enough of; nil unless
// OpenShared.
func (s *Store) Demands() <-chan ledger.Demand { return s.demands }

// Instance is the id the store keeps this instance's leases under.
func (s *Store) Instance() string { return s.instance }

// Take grants the asks (ledger.Leases) in one transaction.
func (s *Store) Take(ctx context.Context, asks []ledger.Ask) ([]ledger.Grant, error) {
	if s.instance == "" {
		return nil, errors.New("ledger/postgres: take: the store was not opened shared")
	}
	if len(asks) == 0 {
		return nil, nil
	}
	budgets, periods := make([]string, len(asks)), make([]string, len(asks))
	for i, a := range asks {
		budgets[i], periods[i] = a.Budget, a.Period
	}
	var grants []ledger.Grant
	err := s.retry(ctx, func(tx pgx.Tx) error {
		state, err := lockRows(ctx, tx, budgets, periods, true)
		if err != nil {
			return err
		}
		grants = make([]ledger.Grant, len(asks))
		amounts := make([]float64, len(asks))
		var short []string
		for i, a := range asks {
			st := state[key(a.Budget, a.Period)]
			g := grant(a, st)
			grants[i], amounts[i] = g, g.Granted
			if g.Short {
				short = append(short, a.Budget+sep+a.Period)
			}
		}
		if err := s.hold(ctx, tx, budgets, periods, amounts); err != nil {
			return err
		}
		if len(short) > 0 {
			_, err = tx.Exec(ctx, `SELECT pg_notify($1, current_schema() || $2 || d || $2 || $3)
				FROM unnest($4::text[]) AS d`, demandChannel, sep, s.instance, short)
		}
		return err
	})
	if err != nil {
		return nil, fail(ctx, "take", err)
	}
	return grants, nil
}

// grant is what a may be given of a counter in state st.
func grant(a ledger.Ask, st row) ledger.Grant {
	tol := math.Abs(a.Limit) * 1e-9
	left := a.Limit - st.used - st.leased
	g := ledger.Grant{Used: st.used}
	switch {
	case left <= tol:
		g.Short = a.Need > 0
	case left+tol >= a.Need:
		need := max(a.Need, 0)
		share := min(max(a.Share, 0), 1)
		g.Granted = min(left, need+share*(left-need))
		if a.Step > 0 && g.Granted > need {
			// Whole steps, but never less than the need.
			g.Granted = max(need, math.Floor(g.Granted/a.Step+1e-9)*a.Step)
		}
	default:
		g.Granted, g.Short = left, a.Need > 0
		if a.Step > 0 {
			g.Granted = math.Floor(left/a.Step+1e-9) * a.Step
		}
	}
	g.Leased = st.leased + g.Granted
	return g
}

// hold adds amounts[i] to the instance's lease of (budgets[i], periods[i]) and to its
// usage_ledger row, whose lock the caller holds.
func (s *Store) hold(ctx context.Context, tx pgx.Tx, budgets, periods []string, amounts []float64) error {
	if _, err := tx.Exec(ctx, `UPDATE usage_ledger AS l SET leased = l.leased + g.amount
		FROM unnest($1::text[], $2::text[], $3::float8[]) AS g (budget, period, amount)
		WHERE l.budget = g.budget AND l.period = g.period AND g.amount > 0`, budgets, periods, amounts); err != nil {
		return err
	}
	_, err := tx.Exec(ctx, `INSERT INTO usage_leases AS h (budget, period, instance, held)
		SELECT budget, period, $4, amount FROM unnest($1::text[], $2::text[], $3::float8[]) AS g (budget, period, amount)
		WHERE amount > 0 ORDER BY budget, period
		ON CONFLICT (budget, period, instance) DO UPDATE SET held = h.held + excluded.held, updated_at = now()`,
		budgets, periods, amounts, s.instance)
	return err
}

// Return gives back what the instance holds (ledger.Leases), at most what it holds of each.
func (s *Store) Return(ctx context.Context, rows []ledger.Row) error {
	if s.instance == "" {
		return errors.New("ledger/postgres: return: the store was not opened shared")
	}
	if len(rows) == 0 {
		return nil
	}
	budgets, periods, amounts := make([]string, len(rows)), make([]string, len(rows)), make([]float64, len(rows))
	for i, r := range rows {
		budgets[i], periods[i], amounts[i] = r.Budget, r.Period, r.Used
	}
	err := s.retry(ctx, func(tx pgx.Tx) error {
		if _, err := lockRows(ctx, tx, budgets, periods, false); err != nil {
			return err
		}
		return release(ctx, tx, s.instance, budgets, periods, amounts)
	})
	if err != nil {
		return fail(ctx, "return", err)
	}
	return nil
}

// release takes amounts[i], at most what is held, off the instance's lease of (budgets[i],
// periods[i]) and off leased, and deletes the holds left empty. The caller holds the
// usage_ledger rows' locks.
func release(ctx context.Context, tx pgx.Tx, instance string, budgets, periods []string, amounts []float64) error {
	_, err := tx.Exec(ctx, `WITH d AS (
			SELECT budget, period, sum(amount) AS amount
			FROM unnest($1::text[], $2::text[], $3::float8[]) AS d (budget, period, amount)
			GROUP BY budget, period),
		c AS (
			SELECT h.budget, h.period, h.held, least(d.amount, h.held) AS amount
			FROM usage_leases h JOIN d ON h.budget = d.budget AND h.period = d.period
			WHERE h.instance = $4 AND d.amount > 0
			ORDER BY h.budget, h.period
			FOR UPDATE OF h),
		gone AS (
			DELETE FROM usage_leases h USING c
			WHERE h.budget = c.budget AND h.period = c.period AND h.instance = $4 AND c.held - c.amount <= 1e-12),
		kept AS (
			UPDATE usage_leases h SET held = c.held - c.amount, updated_at = now() FROM c
			WHERE h.budget = c.budget AND h.period = c.period AND h.instance = $4 AND c.held - c.amount > 1e-12)
		UPDATE usage_ledger l SET leased = greatest(0, l.leased - c.amount) FROM c
		WHERE l.budget = c.budget AND l.period = c.period`, budgets, periods, amounts, instance)
	return err
}

// Reclaim gives back every lease instance holds (an instance restarting under its id, or one
// that stopped) and answers how much was given back in all.
func (s *Store) Reclaim(ctx context.Context, instance string) (float64, error) {
	var total float64
	err := s.retry(ctx, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, `SELECT budget, period FROM usage_leases WHERE instance = $1`, instance)
		if err != nil {
			return err
		}
		var budgets, periods []string
		for rows.Next() {
			var b, p string
			if err := rows.Scan(&b, &p); err != nil {
				return err
			}
			budgets, periods = append(budgets, b), append(periods, p)
		}
		if err := rows.Err(); err != nil {
			return err
		}
		if len(budgets) == 0 {
			return nil
		}
		if _, err := lockRows(ctx, tx, budgets, periods, false); err != nil {
			return err
		}
		return tx.QueryRow(ctx, `WITH h AS (
				DELETE FROM usage_leases WHERE instance = $1 RETURNING budget, period, held),
			s AS (SELECT budget, period, sum(held) AS held FROM h GROUP BY budget, period),
			u AS (UPDATE usage_ledger l SET leased = greatest(0, l.leased - s.held) FROM s
				WHERE l.budget = s.budget AND l.period = s.period)
			SELECT coalesce(sum(held), 0) FROM s`, instance).Scan(&total)
	})
	if err != nil {
		return 0, fail(ctx, "reclaim "+instance, err)
	}
	return total, nil
}

// Used reads one counter's stored usage, over every instance (ledger.UsedReader).
func (s *Store) Used(ctx context.Context, budget, period string) (float64, error) {
	var used float64
	err := s.pool.QueryRow(ctx, `SELECT used FROM usage_ledger WHERE budget = $1 AND period = $2`, budget, period).Scan(&used)
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, nil
	}
	if err != nil {
		return 0, fail(ctx, "used", err)
	}
	return used, nil
}

var (
	_ ledger.UsedReader     = (*Store)(nil)
	_ ledger.CountersReader = (*Store)(nil)
)

// Counters reads the rows of one resource's budgets: "kind:id" and "kind:id:<sub>".
func (s *Store) Counters(ctx context.Context, prefix string) ([]ledger.StoredCounter, error) {
	rows, err := s.pool.Query(ctx, `SELECT budget, period, used FROM usage_ledger WHERE budget = $1 OR starts_with(budget, $1 || ':')`, prefix)
	if err != nil {
		return nil, fail(ctx, "counters", err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (ledger.StoredCounter, error) {
		var c ledger.StoredCounter
		err := row.Scan(&c.Budget, &c.Period, &c.Used)
		return c, err
	})
	if err != nil {
		return nil, fail(ctx, "counters", err)
	}
	return out, nil
}

// row is a usage_ledger row's state.
type row struct{ used, leased float64 }

func key(budget, period string) string { return budget + sep + period }

// lockRows locks the usage_ledger rows of (budgets[i], periods[i]) in (budget, period) order,
// creating the missing ones when create is set, and answers their state.
func lockRows(ctx context.Context, tx pgx.Tx, budgets, periods []string, create bool) (map[string]row, error) {
	if create {
		if _, err := tx.Exec(ctx, `INSERT INTO usage_ledger (budget, period)
			SELECT budget, period FROM unnest($1::text[], $2::text[]) AS a (budget, period)
			ORDER BY budget, period ON CONFLICT (budget, period) DO NOTHING`, budgets, periods); err != nil {
			return nil, err
		}
	}
	rows, err := tx.Query(ctx, `SELECT l.budget, l.period, l.used, l.leased
		FROM usage_ledger l JOIN (SELECT DISTINCT budget, period FROM unnest($1::text[], $2::text[]) AS a (budget, period)) a
			ON l.budget = a.budget AND l.period = a.period
		ORDER BY l.budget, l.period FOR UPDATE OF l`, budgets, periods)
	if err != nil {
		return nil, err
	}
	out := map[string]row{}
	for rows.Next() {
		var b, p string
		var r row
		if err := rows.Scan(&b, &p, &r.used, &r.leased); err != nil {
			return nil, err
		}
		out[key(b, p)] = r
	}
	return out, rows.Err()
}

// retry runs fn in a transaction, again after a deadlock or serialisation failure.
func (s *Store) retry(ctx context.Context, fn func(pgx.Tx) error) error {
	var err error
	for range attempts {
		err = pgx.BeginFunc(ctx, s.pool, fn)
		if !retryable(err) || ctx.Err() != nil {
			break
		}
	}
	return err
}

// listen receives the demands of other instances on a connection of its own, reconnecting
// with a pause while the database is unreachable, until ctx ends.
func (s *Store) listen(ctx context.Context, schema string) {
	defer close(s.done)
	defer close(s.demands)
	pause := 100 * time.Millisecond
	for ctx.Err() == nil {
		err := s.listenOnce(ctx, schema)
		if ctx.Err() != nil {
			return
		}
		_ = err // the next take notices an unreachable database; demands are only a hint
		select {
		case <-ctx.Done():
			return
		case <-time.After(pause):
		}
		pause = min(2*pause, 5*time.Second)
	}
}

func (s *Store) listenOnce(ctx context.Context, schema string) error {
	pooled, err := s.pool.Acquire(ctx)
	if err != nil {
		return err
	}
	// A LISTENing connection is taken out of the pool for good, and closed here.
	conn := pooled.Hijack()
	defer func() { _ = conn.Close(context.Background()) }()
	if _, err := conn.Exec(ctx, "LISTEN "+demandChannel); err != nil {
		return err
	}
	for {
		n, err := conn.WaitForNotification(ctx)
		if err != nil {
			return fmt.Errorf("listen: %w", err)
		}
		parts := strings.Split(n.Payload, sep)
		if len(parts) != 4 || parts[0] != schema || parts[3] == s.instance {
			continue
		}
		select {
		case s.demands <- ledger.Demand{Budget: parts[1], Period: parts[2], From: parts[3]}:
		default: // full: the short instance asks again on its next take
		}
	}
}
