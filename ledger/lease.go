package ledger

// Leases: budgets shared by several instances.
//
// Each instance admits requests against the allowance it holds of a budget, its lease, exactly
// as a lone instance admits them against the whole limit: under the Ledger's lock, all or none,
// reserved then settled. Leases are kept in the shared store (Leases, implemented by
// ledger/postgres), where one invariant holds under the budget row's lock:
//
//	used + leased <= limit, where leased is the sum of every instance's lease
//
// so the requests admitted across every instance never exceed the limit together, whatever
// the number of instances. What is admitted is spent from the lease (Settle), and the flush that
// writes the usage moves it from leased to used in the same transaction.
//
// Off the request path, in Run:
//   - a lease whose free part falls under half of its last grant is topped up in the
//     background, so a busy instance rarely waits;
//   - a take asks for what the request needs plus LeaseShare of what is left, so slices shrink
//     as the limit nears;
//   - a lease nobody has reserved against for LeaseIdle is returned, so a budget is not starved
//     by slices held where there is no traffic;
//   - an instance that cannot take what it needs while the limit is not reached tells the others
//     (Demands), and each returns the free part of its lease at once.
//
// On the request path a request waits for a lease only when its instance holds too little and
// the store says the limit is not reached; it waits at most LeaseWait, retrying while the others
// return what they hold, and is refused then. A store that cannot be reached refuses what the
// held leases cannot take (the refusal names the store's failure), so a failure never admits
// past a limit.
//
// Accuracy bounds:
//   - No limit is overshot by admission. Usage passes a limit only by what requests used beyond
//     the worst case they reserved, as on one instance.
//   - What an instance holds back from the others is at most its lease: LeaseShare of what was
//     left when it took it, plus what its requests needed. It holds it for at most LeaseIdle
//     after its last request, or until another instance asks for it (a notification's round
//     trip), or, if the instance dies, until its leases are reclaimed (at its restart under the
//     same instance id, or by the store's reclaiming of instances that stopped).
//   - A crash loses the usage settled since the last flush (FlushEvery), as on one instance; the
//     lease that covered it is reclaimed with the rest, so that usage is admitted again.

import (
	"context"
	"slices"
	"time"
)

// Leases is the allowance several instances share, kept in a store they all reach. It is
// declared here, by the Ledger that uses it; ledger/postgres implements it.
type Leases interface {
	// Take grants this instance part of what is left of each ask's budget (its limit less the
	// usage and the leases of every instance): Need and Share of the rest beyond it when that
	// much is left, otherwise all that is left. A grant short of its Need also asks the other
	// instances to return what they hold free (their Demands). Asks name distinct counters.
	Take(ctx context.Context, asks []Ask) ([]Grant, error)
	// Return gives back allowance this instance holds and will not use (Row.Used is the
	// amount).
	Return(ctx context.Context, rows []Row) error
	// Demands tells of the counters another instance could not take enough of. It may be
	// nil, and is closed when the store closes.
	Demands() <-chan Demand
	// Instance is the id this instance holds its leases under.
	Instance() string
}

// Demand is another instance's call for the free part of the leases of a counter.
type Demand struct {
	Budget, Period string
	From           string // the instance short of it
}

// Ask is one counter's part of a Take.
type Ask struct {
	Budget, Period string
	Limit          float64 // the budget's limit now
	Need           float64 // what a waiting request needs beyond what is held; 0 for a top-up
	Share          float64 // the part of what is left beyond Need to take as well
	// Step, when > 0, is the budget's grain (1 for tokens): grants are whole steps, so that
	// no instance holds a fraction of a request that another could use.
	Step float64
}

// Grant is what Take gave one ask.
type Grant struct {
	Granted float64 // added to this instance's lease
	Used    float64 // the counter's stored usage, over every instance
	Leased  float64 // every instance's leases together, this grant included
	Short   bool    // less than Need was left
}

const (
	defaultLeaseShare = 0.25
	defaultLeaseWait  = 3 * time.Second
	defaultLeaseIdle  = 2 * time.Second
	// leasePause is the first wait between two takes of a request that found too little left;
	// it doubles to leasePauseMax while the other instances return what they hold.
	leasePause    = 5 * time.Millisecond
	leasePauseMax = 80 * time.Millisecond
	// leaseOpTimeout bounds a background take or return.
	leaseOpTimeout = 5 * time.Second
)

// lease is a counter's part in the leases (with Options.Leases). Every field is guarded by
// Ledger.mu.
type lease struct {
	held      float64 // allowance held: granted and not yet spent or returned; reserved is part of it
	limit     float64 // the limit the lease was taken under
	step      float64 // the budget's grain (Budget.step)
	elsewhere float64 // the other instances' leases, as the last grant told
	unflushed float64 // settled here and not yet written to the store
	grant     float64 // the last grant, for the top-up mark
	lastTick  uint64  // leases.ticks when last reserved against
	returning float64 // taken off held, to be returned to the store
	waiting   int     // requests of this instance waiting for this counter's lease
	queued    bool    // in leases.refill
	holding   bool    // in leases.holding
}

// rowKey names a counter as the store does.
type rowKey struct{ budget, period string }

// leases is a Ledger's side of the leases; on is false without Options.Leases. Every field but
// on, src and kick is guarded by Ledger.mu.
type leases struct {
	on      bool
	src     Leases
	kick    chan struct{} // wakes Run for a top-up or a return
	ticks   uint64        // Run's flush ticks, the clock of idleness
	refill  []*counter
	returns []*counter
	holding map[*counter]struct{}
	byName  map[rowKey]*counter
	// flushNow asks Run for a flush before the next tick (a demand for a budget with usage not
	// yet written).
	flushNow bool
}

func newLeases(src Leases) leases {
	if src == nil {
		return leases{}
	}
	return leases{on: true, src: src, kick: make(chan struct{}, 1),
		holding: map[*counter]struct{}{}, byName: map[rowKey]*counter{}}
}

// ask is an Ask with its counter.
type ask struct {
	Ask
	c *counter
}

// takeResult is what one take of a waiting request found.
type takeResult struct {
	err   error
	short bool
}

// spend takes a settled amount off the lease: it is now usage, written at the next flush.
// Without leases held stays at 0 and means nothing.
func (c *counter) spend(a float64) {
	c.unflushed += a
	c.held = max(0, c.held-a)
}

// needLocked is how much more of b the counter must hold to reserve amt, 0 when it holds
// enough. A lowered limit gives back what is not reserved first, so that it is taken again
// under the new limit. l.mu is held.
func (l *Ledger) needLocked(c *counter, b *Budget, amt float64) float64 {
	if c.limit != b.Limit {
		if b.Limit < c.limit {
			l.giveBackLocked(c)
		}
		c.limit = b.Limit
	}
	c.step = b.step()
	if amt == 0 {
		return 0 // a request that costs nothing needs only a budget not exhausted
	}
	need := c.reserved + amt - c.held
	if need <= tolerance(b.Limit) {
		return 0
	}
	return need
}

// usedLocked notes that c was reserved against, and queues a top-up when what is free of its
// lease falls under half of its last grant. l.mu is held.
func (l *Ledger) usedLocked(c *counter) {
	c.lastTick = l.leases.ticks
	l.holdingLocked(c)
	if c.queued || c.held-c.reserved >= c.grant/2 {
		return
	}
	c.queued = true
	l.leases.refill = append(l.leases.refill, c)
	l.wake()
}

func (l *Ledger) holdingLocked(c *counter) {
	if !c.holding {
		c.holding = true
		l.leases.holding[c] = struct{}{}
	}
}

func (l *Ledger) wake() {
	select {
	case l.leases.kick <- struct{}{}:
	default:
	}
}

// giveBackLocked moves the free part of c's lease to its return. l.mu is held.
func (l *Ledger) giveBackLocked(c *counter) {
	free := c.held - c.reserved
	if free <= 0 {
		return
	}
	c.held -= free
	if c.returning == 0 {
		l.leases.returns = append(l.leases.returns, c)
	}
	c.returning += free
	l.wake()
}

// reserveShared takes what the short counters need and admits r again, until it is admitted,
// refused, or LeaseWait has passed (then too small a lease is a refusal).
func (l *Ledger) reserveShared(r *Reservation, short []ask) (*Reservation, *Refusal) {
	deadline := time.Now().Add(l.opts.LeaseWait)
	pause := leasePause
	var waiting []*counter // marked as waiting, so that a demand from a later instance leaves them be
	defer func() {
		l.mu.Lock()
		for _, c := range waiting {
			c.waiting--
		}
		l.mu.Unlock()
	}()
	answered := false // a take has been answered: a refusal at the deadline is the budget's
	for {
		l.mu.Lock()
		for _, a := range short {
			if !slices.Contains(waiting, a.c) {
				a.c.waiting++
				waiting = append(waiting, a.c)
			}
		}
		l.mu.Unlock()
		var res takeResult
		if time.Now().Before(deadline) {
			res = l.takeLeases(deadline, short)
			answered = answered || res.err == nil
		}
		var final *takeResult
		switch {
		case res.err != nil && !answered:
			final = &res // the store cannot be reached: the refusal names it
		case res.err != nil || !time.Now().Before(deadline):
			final = &takeResult{}
		}
		l.mu.Lock()
		ref, again := l.admitLocked(r, final)
		l.mu.Unlock()
		if again == nil {
			if ref != nil {
				return nil, ref
			}
			return r, nil
		}
		short = again
		if res.short {
			// Too little is left while others hold leases: give them time to return theirs.
			time.Sleep(min(pause, time.Until(deadline)))
			pause = min(2*pause, leasePauseMax)
		}
	}
}

// takeLeases asks the store for asks and adds what it grants to their leases.
func (l *Ledger) takeLeases(deadline time.Time, asks []ask) takeResult {
	req := make([]Ask, len(asks))
	for i := range asks {
		req[i] = asks[i].Ask
		req[i].Share = l.opts.LeaseShare
	}
	ctx, cancel := context.WithDeadline(context.Background(), deadline)
	grants, err := l.leases.src.Take(ctx, req)
	cancel()
	if err == nil && len(grants) != len(asks) {
		err = errShortGrants
	}
	if err != nil {
		return takeResult{err: err}
	}
	var res takeResult
	l.mu.Lock()
	for i, g := range grants {
		l.grantedLocked(asks[i].c, g)
		res.short = res.short || g.Short
	}
	l.mu.Unlock()
	return res
}

type leaseError string

func (e leaseError) Error() string { return string(e) }

const errShortGrants = leaseError("the store answered fewer grants than asks")

// grantedLocked adds g to c's lease, and what it tells of the others to what c knows. l.mu is
// held.
func (l *Ledger) grantedLocked(c *counter, g Grant) {
	if g.Granted > 0 {
		c.held += g.Granted
		c.grant = g.Granted
		l.holdingLocked(c)
	}
	// The store's usage plus what is settled here and not yet in a batch: a batch being written
	// may or may not be in g.Used, so it is left out (c.used holds it already), never counted
	// twice.
	c.used = max(c.used, g.Used+c.pending)
	c.elsewhere = max(0, g.Leased-c.held-c.returning-c.unflushed)
}

// leaseWork returns what is queued for return, then tops up the leases queued for it, each in
// one call to the store. A failed return is kept and tried again; a failed top-up is left to
// the next request that needs it.
func (l *Ledger) leaseWork(ctx context.Context) {
	l.mu.Lock()
	returns, refill := l.leases.returns, l.leases.refill
	l.leases.returns, l.leases.refill = nil, nil
	rows := make([]Row, len(returns))
	for i, c := range returns {
		rows[i] = Row{Budget: c.name, Period: c.period, Used: c.returning}
	}
	asks := make([]ask, 0, len(refill))
	for _, c := range refill {
		c.queued = false
		if c.limit > 0 {
			asks = append(asks, ask{c: c, Ask: Ask{Budget: c.name, Period: c.period, Limit: c.limit, Step: c.step}})
		}
	}
	l.mu.Unlock()

	if len(rows) > 0 {
		rctx, cancel := context.WithTimeout(ctx, leaseOpTimeout)
		err := l.leases.src.Return(rctx, rows)
		cancel()
		l.mu.Lock()
		for i, c := range returns {
			if err != nil {
				l.leases.returns = append(l.leases.returns, c)
				continue
			}
			c.returning -= rows[i].Used
			if c.returning < tolerance(c.limit) {
				c.returning = 0
			}
			if c.returning > 0 {
				l.leases.returns = append(l.leases.returns, c)
			}
		}
		l.mu.Unlock()
		if err != nil {
			l.log.Warn("ledger: returning leases failed; kept, tried again", "counters", len(rows), "err", err)
		}
	}
	if len(asks) > 0 {
		if res := l.takeLeases(time.Now().Add(leaseOpTimeout), asks); res.err != nil {
			l.log.Warn("ledger: topping up leases failed; requests take what they need", "counters", len(asks), "err", res.err)
		}
	}
}

// idle advances the idleness clock and gives back the leases nobody has reserved against for
// LeaseIdle. Called by Run on each flush tick.
func (l *Ledger) idle() {
	idleTicks := uint64(max(1, l.opts.LeaseIdle/l.opts.FlushEvery))
	l.mu.Lock()
	defer l.mu.Unlock()
	l.leases.ticks++
	for c := range l.leases.holding {
		if c.reserved == 0 && l.leases.ticks-c.lastTick >= idleTicks {
			l.giveBackLocked(c)
		}
		if c.held <= 0 && c.returning == 0 && c.inflight == 0 {
			c.holding = false
			delete(l.leases.holding, c)
		}
	}
}

// demanded gives back the free part of the lease another instance is short of, unless
// requests here wait for that lease too and this instance's id sorts first: then it keeps
// what it has and the other gives way, so that two short instances do not hand the last of a
// budget back and forth until both give up.
func (l *Ledger) demanded(d Demand) {
	l.mu.Lock()
	defer l.mu.Unlock()
	c, ok := l.leases.byName[rowKey{d.Budget, d.Period}]
	if !ok || (c.waiting > 0 && l.leases.src.Instance() < d.From) {
		return
	}
	l.giveBackLocked(c)
	// What was spent of the lease is written at once too, so that the instance short of the
	// budget sees the usage and knows whether the limit is reached.
	l.leases.flushNow = l.leases.flushNow || c.unflushed > 0
}

// DropLeases forgets every lease this instance holds, without returning them: another
// instance reclaimed them (this one was taken for stopped). Requests in flight settle as
// usage; new ones take leases again.
func (l *Ledger) DropLeases() {
	if !l.leases.on {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	for c := range l.leases.holding {
		c.held, c.returning = 0, 0
	}
	l.leases.returns = nil
}

// returnAll gives back every lease's free part, at Close.
func (l *Ledger) returnAll(ctx context.Context) {
	l.mu.Lock()
	for c := range l.leases.holding {
		l.giveBackLocked(c)
	}
	l.mu.Unlock()
	l.leaseWork(ctx)
}
