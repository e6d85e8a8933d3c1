// Package ledger counts what the gateway charges to budgets: a key's usage limits, a
// workspace's, a managed provider's, an integration-workspace's, and each usage-limit policy's
// per entity. It is the contract of the usage ledger (the types, the in-memory accounting
// Ledger and the Store interface its backends implement); it imports no database driver, and
// the backends live in ledger/sqlite and ledger/postgres.
//
// The request path does no I/O: the Ledger holds every counter in memory. Before a request
// goes to its provider, Reserve holds its worst case against every budget it is charged to,
// all or none under one lock, so concurrent requests can never overshoot a limit together.
// Afterwards Settle releases the reservation and charges the real usage. Settled usage is
// merged per (budget, period) and written to the Store in batches by Run, off the request path;
// each batch carries an id the store records in the same transaction, so a batch retried after
// an ambiguous failure is applied once.
//
// Accuracy, in one process:
//   - Admission is exact: a budget never takes a request whose worst case would carry used plus
//     reserved past its limit (sums are compared with a tolerance of a billionth of the limit,
//     so floating-point rounding never refuses a request that fits exactly).
//   - Usage passes a limit only when a request's actual usage exceeds the worst case it
//     reserved; Settle charges the actual usage all the same, and the overshoot is visible.
//   - A clean stop (Close) writes everything settled. A crash loses at most the usage settled
//     since the last successful flush: FlushEvery (250 ms by default) of settled usage, or more
//     while the store is failing, since pending usage waits in memory until a flush succeeds.
//
// Crossings: when a settle leaves a budget's usage at or past its alert threshold or its limit,
// or a request is refused by an exhausted budget, OnCross is told, once per process for each
// (budget, period, kind) and value of the threshold or limit crossed (a raised limit reached
// again is told again). It is told only after the flush that writes the usage behind it, through
// a bounded queue; a crossing dropped because the queue is full is told at the budget's next
// settle or refusal. After a restart, a budget already past its threshold or limit is told
// again at its next settle or refusal, so a crash between a flush and its crossing loses
// nothing; OnCross's receiver must be idempotent.
//
// Several instances: with Options.Leases set (ledger/postgres on a shared database), each
// instance admits requests against a lease, a slice of each budget's remaining allowance that it
// holds in the shared rows, exactly as one instance admits against the whole limit. The slices
// are taken and returned in batches off the request path; lease.go says how, and what bounds
// the accuracy.
package ledger

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
)

// Kind is the kind of resource a budget belongs to.
type Kind string

const (
	KindAPIKey               Kind = "api_key"
	KindWorkspace            Kind = "workspace"
	KindProvider             Kind = "provider" // a managed provider (virtual key)
	KindIntegrationWorkspace Kind = "integration_workspace"
	KindPolicy               Kind = "usage_limit_policy"
	// KindRateLimit is a rate limit's window: ID is the limit's bucket (EscapeID), Sub its unit
	// and type, Period the window's start, Until its end.
	KindRateLimit Kind = "rate_limit"
)

// Budget types: the unit a budget counts.
const (
	TypeCost     = "cost"     // USD
	TypeTokens   = "tokens"   // prompt and completion tokens
	TypeRequests = "requests" // requests (rate limits)
)

// Crossing kinds.
const (
	CrossingThreshold = "threshold"
	CrossingExhausted = "exhausted"
)

// Budget is one allowance a request is charged to, as the routing index describes it now.
type Budget struct {
	Kind Kind
	// ID is the resource's id; it must not contain ':' (the row key is "kind:id:sub").
	ID string
	// Sub tells apart several budgets of one resource: workspace: the limit type ("cost" or
	// "tokens"); integration_workspace: the workspace id; usage_limit_policy: the entity's
	// value key; otherwise "".
	Sub string
	// Period is the resource's current usage period; usage in a new period starts from zero
	// (a reset changes it).
	Period string
	// Type is TypeCost or TypeTokens; any type other than TypeTokens counts cost.
	Type      string
	Limit     float64 // credit limit, > 0 (a limit of 0 or less is exhausted from the start)
	Threshold float64 // alert threshold; 0: none
	Version   uint64  // the resource's stream revision, carried for provenance only
	// Until, when set, makes the counter transient (a rate limit's window): it is forgotten
	// once Until has passed and nothing of it is in flight, and, unless leases share it with
	// other instances, its usage is never written to the store.
	Until time.Time
}

// EscapeID makes s usable as a Budget.ID: '%' and ':' are escaped as in URLs.
func EscapeID(s string) string {
	if !strings.ContainsAny(s, "%:") {
		return s
	}
	return strings.ReplaceAll(strings.ReplaceAll(s, "%", "%25"), ":", "%3A")
}

// Name is the budget's row key in the store (with Period): "kind:id" or "kind:id:sub".
func (b Budget) Name() string {
	if b.Sub == "" {
		return string(b.Kind) + ":" + b.ID
	}
	return string(b.Kind) + ":" + b.ID + ":" + b.Sub
}

// step is the grain of the budget's unit: whole tokens and requests; cost has none.
func (b *Budget) step() float64 {
	if b.Type == TypeTokens || b.Type == TypeRequests {
		return 1
	}
	return 0
}

// unit is how messages name the budget's unit.
func (b Budget) unit() string {
	switch b.Type {
	case TypeTokens, TypeRequests:
		return b.Type
	}
	return "cost, USD"
}

// Amount is what a request may cost (worst case) or did cost, in both units; each budget takes
// the one of its Type.
type Amount struct{ Cost, Tokens, Requests float64 }

// of is the part of a that a budget of type typ takes; negative and NaN amounts count as 0.
func (a Amount) of(typ string) float64 {
	v := a.Cost
	switch typ {
	case TypeTokens:
		v = a.Tokens
	case TypeRequests:
		v = a.Requests
	}
	if !(v > 0) {
		return 0
	}
	return v
}

// Charge is what Settle charged one budget.
type Charge struct {
	Budget Budget
	Amount float64
	Used   float64 // the period's settled usage after the charge
}

// Refusal says why Reserve refused a request: the first budget that could not take it.
type Refusal struct {
	Budget    Budget
	Index     int     // the budget's place in those reserved
	Used      float64 // settled usage in the period
	Reserved  float64 // held by requests in flight
	Requested float64
	Exhausted bool // used >= limit
	// With leases: the allowance other instances hold, as last seen, and the store's failure
	// when the lease could not be taken at all (then the refusal is the store's, not the
	// budget's).
	Elsewhere float64
	Err       error
}

func (r *Refusal) Error() string {
	switch {
	case r.Exhausted:
		return fmt.Sprintf("budget %s (%s) is exhausted: used %s of %s",
			r.Budget.Name(), r.Budget.unit(), num(r.Used), num(r.Budget.Limit))
	case r.Err != nil:
		return fmt.Sprintf("budget %s (%s): no allowance could be taken from the shared ledger: %v",
			r.Budget.Name(), r.Budget.unit(), r.Err)
	case r.Elsewhere > 0:
		return fmt.Sprintf("budget %s (%s) cannot take this request: used %s + %s reserved by requests in flight"+
			" + %s held by other instances + %s requested exceeds the limit of %s", r.Budget.Name(), r.Budget.unit(),
			num(r.Used), num(r.Reserved), num(r.Elsewhere), num(r.Requested), num(r.Budget.Limit))
	}
	return fmt.Sprintf("budget %s (%s) cannot take this request: used %s + %s reserved by requests in flight"+
		" + %s requested exceeds the limit of %s", r.Budget.Name(), r.Budget.unit(),
		num(r.Used), num(r.Reserved), num(r.Requested), num(r.Budget.Limit))
}

// num prints v to at most six decimals, so that sums such as 0.30000000000000004 read as 0.3.
func num(v float64) string {
	return strconv.FormatFloat(math.Round(v*1e6)/1e6, 'f', -1, 64)
}

// Crossing tells that a budget's settled usage reached its alert threshold or its limit.
type Crossing struct {
	Budget Budget
	Used   float64
	Kind   string // CrossingThreshold or CrossingExhausted
}

// Counter is one counter of a resource, as Counters lists them.
type Counter struct {
	Sub, Period string
	Used        float64
}

// Row is one stored counter, or a delta to add to it.
type Row struct {
	Budget string // Budget.Name()
	Period string
	Used   float64
}

// Store keeps the settled usage durably. It is declared here, by the Ledger that uses it.
type Store interface {
	// Load returns every row.
	Load(ctx context.Context) ([]Row, error)
	// Add adds each delta's Used to its (Budget, Period) row, creating it, all in one
	// transaction. A batchID already applied is a no-op, so a retry after an ambiguous
	// failure never double-counts.
	Add(ctx context.Context, batchID string, deltas []Row) error
	Close() error
}

// Options tunes a Ledger; the zero value takes the defaults.
type Options struct {
	// FlushEvery is how often Run writes settled usage to the store; default 250 ms. It bounds
	// what a crash loses.
	FlushEvery time.Duration
	// OnCross is told of each crossing once the usage that caused it has been flushed. It is
	// called from Run's goroutine (after Run has ended, from Close's, for what the final flush
	// released), never from Reserve's or Settle's caller, and may block briefly.
	OnCross func(Crossing)
	Log     *slog.Logger

	// Leases, when set, is the allowance this instance shares with others (lease.go); nil: this
	// Ledger is the only one counting, and admits against the whole limit.
	Leases Leases
	// LeaseShare is the part of what is left of a budget that a take asks for beyond what the
	// request needs; default 0.25, at most 1.
	LeaseShare float64
	// LeaseWait bounds how long a request waits for allowance when its instance holds too
	// little and the limit is not reached; default 3 s.
	LeaseWait time.Duration
	// LeaseIdle is how long a lease nobody reserves against is kept before it is returned;
	// default 2 s.
	LeaseIdle time.Duration
}

const (
	defaultFlushEvery = 250 * time.Millisecond
	// crossQueue bounds the crossings flushed but not yet handed to OnCross.
	crossQueue = 1024
	// flushTimeout bounds one flush from Run, so a hung store cannot stop the loop for ever.
	flushTimeout = 10 * time.Second
)

// ckey identifies a counter without building its name, so that lookups do not allocate.
type ckey struct {
	kind            Kind
	id, sub, period string
}

type rkey struct {
	kind Kind
	id   string
}

// counter is one (budget, period). Every field is guarded by Ledger.mu.
type counter struct {
	name        string // Budget.Name()
	sub, period string
	used        float64
	reserved    float64
	inflight    int     // reservations holding part of reserved
	pending     float64 // settled, not yet taken into a batch
	dirty       bool    // in Ledger.dirty
	// A crossing is queued at most once per value of the threshold (limit) it crossed, so a
	// raised limit that is reached again is told again.
	thrSent, exhSent bool
	thrAt, exhAt     float64
	until            time.Time // Budget.Until: transient when set

	lease // with Options.Leases: the allowance this instance holds
}

// crossing is a Crossing on its way to OnCross, with what is needed to undo its dedupe mark.
type crossing struct {
	Crossing
	c  *counter
	at float64
}

// batch is one Store.Add, kept whole until it succeeds.
type batch struct {
	id        string
	rows      []Row
	counters  []*counter // rows[i]'s counter
	crossings []crossing
}

// Ledger counts usage against budgets in memory and writes it to a Store in batches.
type Ledger struct {
	store Store
	opts  Options
	log   *slog.Logger

	mu       sync.Mutex
	counters map[ckey]*counter
	byRes    map[rkey][]*counter
	dirty    []*counter
	waiting  []crossing // detected since the last batch was taken; released when it is flushed

	flushMu   sync.Mutex
	failed    *batch // the batch whose Add failed, retried first
	failSince time.Time

	ready chan crossing // flushed crossings for OnCross

	leases leases // with Options.Leases

	lifeMu    sync.Mutex
	started   bool
	closed    bool
	stop      chan struct{}
	runDone   chan struct{}
	closeErr  error
	closeDone chan struct{}
}

// New returns a Ledger writing to store. Call Load before the first Reserve, then Run.
// The Ledger does not close store: its opener does, after Close.
func New(store Store, opts Options) *Ledger {
	if opts.FlushEvery <= 0 {
		opts.FlushEvery = defaultFlushEvery
	}
	if !(opts.LeaseShare > 0 && opts.LeaseShare <= 1) {
		opts.LeaseShare = defaultLeaseShare
	}
	if opts.LeaseWait <= 0 {
		opts.LeaseWait = defaultLeaseWait
	}
	if opts.LeaseIdle <= 0 {
		opts.LeaseIdle = defaultLeaseIdle
	}
	log := opts.Log
	if log == nil {
		log = slog.Default()
	}
	return &Ledger{
		leases:    newLeases(opts.Leases),
		store:     store,
		opts:      opts,
		log:       log.With("component", "ledger"),
		counters:  map[ckey]*counter{},
		byRes:     map[rkey][]*counter{},
		ready:     make(chan crossing, crossQueue),
		stop:      make(chan struct{}),
		runDone:   make(chan struct{}),
		closeDone: make(chan struct{}),
	}
}

// Load reads every stored row into memory: call it once, at start, before the first Reserve.
// A row's usage replaces what memory holds for it.
func (l *Ledger) Load(ctx context.Context) error {
	rows, err := l.store.Load(ctx)
	if err != nil {
		return fmt.Errorf("ledger: load: %w", err)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, r := range rows {
		kind, rest, ok := strings.Cut(r.Budget, ":")
		if !ok || kind == "" {
			l.log.Warn("ledger: skipping a stored row whose budget is not kind:id[:sub]", "budget", r.Budget)
			continue
		}
		id, sub, _ := strings.Cut(rest, ":")
		k := ckey{kind: Kind(kind), id: id, sub: sub, period: r.Period}
		l.counterAt(k, r.Budget).used = r.Used
	}
	return nil
}

// counterAt returns the counter at k, creating it with name. l.mu is held.
func (l *Ledger) counterAt(k ckey, name string) *counter {
	if c, ok := l.counters[k]; ok {
		return c
	}
	c := &counter{name: name, sub: k.sub, period: k.period}
	l.counters[k] = c
	if l.leases.on {
		l.leases.byName[rowKey{name, k.period}] = c
	}
	rk := rkey{k.kind, k.id}
	l.byRes[rk] = append(l.byRes[rk], c)
	return c
}

// counterFor returns b's counter. l.mu is held.
func (l *Ledger) counterFor(b *Budget) *counter {
	k := ckey{kind: b.Kind, id: b.ID, sub: b.Sub, period: b.Period}
	if c, ok := l.counters[k]; ok {
		return c
	}
	c := l.counterAt(k, b.Name())
	c.until = b.Until
	return c
}

// tolerance is how far sums may stray from limit by floating-point rounding alone.
func tolerance(limit float64) float64 { return math.Abs(limit) * 1e-9 }

// reached reports whether used has reached limit.
func reached(used, limit float64) bool { return used >= limit-tolerance(limit) }

// Reservation is a request's worst case held against its budgets until Settle.
type Reservation struct {
	l       *Ledger
	done    atomic.Bool
	budgets []Budget // the caller's, not copied
	items   []item
	// Most requests have a few budgets: the one allocation of Reserve holds their items and
	// what Settle returns.
	inline  [4]item
	charges [4]Charge
}

type item struct {
	c   *counter
	amt float64 // reserved
}

// Reserve admits a request against every budget at once, or none. Under one lock each budget
// must have used+reserved+requested <= Limit, and a budget whose settled usage has reached its
// limit refuses even a request of amount 0 (it is exhausted). On success the worst case is held
// as reserved until Settle. A refusal names the first budget that could not take the request;
// an exhausted one also queues an "exhausted" crossing (so a crossing lost to a crash is told
// again by the next refused request).
//
// The Reservation keeps budgets, without copying it, until Settle: the caller must not change
// the slice's elements meanwhile (a slice shared read-only by many requests is fine).
func (l *Ledger) Reserve(budgets []Budget, worst Amount) (*Reservation, *Refusal) {
	r := &Reservation{l: l, budgets: budgets}
	if len(budgets) <= len(r.inline) {
		r.items = r.inline[:len(budgets)]
	} else {
		r.items = make([]item, len(budgets))
	}
	for i := range r.items {
		r.items[i].amt = worst.of(budgets[i].Type)
	}
	l.mu.Lock()
	ref, short := l.admitLocked(r, nil)
	l.mu.Unlock()
	if short == nil {
		if ref != nil {
			return nil, ref
		}
		return r, nil
	}
	return l.reserveShared(r, short)
}

// admitLocked holds r's items against their counters, all or none. It answers a refusal, or,
// with leases, the asks of the counters whose lease is too small (then nothing is held); with
// final set, too small a lease is a refusal instead, citing final's error when not nil.
// l.mu is held.
func (l *Ledger) admitLocked(r *Reservation, final *takeResult) (*Refusal, []ask) {
	var short []ask
	held := 0
	for i := range r.items {
		it, b := &r.items[i], &r.budgets[i]
		c := l.counterFor(b)
		exhausted := reached(c.used, b.Limit)
		var ref *Refusal
		switch {
		case exhausted:
			ref = &Refusal{Index: i, Budget: *b, Used: c.used, Reserved: c.reserved, Requested: it.amt, Exhausted: true}
			l.exhaustedLocked(c, b)
		case l.leases.on:
			need := l.needLocked(c, b, it.amt)
			if need <= 0 {
				break
			}
			// Hopeless: even if every other instance gave back all it holds, the usage known
			// (the store's, as of the last take, and this instance's) leaves no room.
			hopeless := c.used+c.reserved+it.amt > b.Limit+tolerance(b.Limit)
			if final == nil && !hopeless {
				short = append(short, ask{c: c, Ask: Ask{Budget: c.name, Period: c.period, Limit: b.Limit, Need: need, Step: b.step()}})
				continue
			}
			ref = &Refusal{Index: i, Budget: *b, Used: c.used, Reserved: c.reserved, Requested: it.amt,
				Elsewhere: max(0, c.elsewhere)}
			if final != nil && !hopeless {
				ref.Err = final.err
			}
		case c.used+c.reserved+it.amt > b.Limit+tolerance(b.Limit):
			ref = &Refusal{Index: i, Budget: *b, Used: c.used, Reserved: c.reserved, Requested: it.amt}
		}
		if ref != nil {
			for j := range held {
				r.items[j].c.release(r.items[j].amt)
			}
			return ref, nil
		}
		if short != nil {
			continue // nothing is held once a counter is short
		}
		// Held at once, so that a budget listed twice is checked against both amounts.
		it.c = c
		c.reserved += it.amt
		c.inflight++
		held++
	}
	if short != nil {
		for j := range held {
			r.items[j].c.release(r.items[j].amt)
			r.items[j].c = nil
		}
		return nil, short
	}
	if l.leases.on {
		for i := range r.items {
			l.usedLocked(r.items[i].c)
		}
	}
	return nil, nil
}

// release gives back a reservation's amt; the last one out zeroes reserved, so rounding
// cannot accumulate.
func (c *counter) release(amt float64) {
	c.inflight--
	if c.inflight == 0 {
		c.reserved = 0
	} else {
		c.reserved -= amt
	}
}

// Settle releases the reservation and charges actual to each budget: it may exceed the worst
// case, and then usage may pass the limit, which is allowed and visible. It returns what each
// budget was charged, in budget order; the slice is the caller's. Settle is idempotent: a
// second call does nothing and returns nil, as does Settle on a nil Reservation.
func (r *Reservation) Settle(actual Amount) []Charge {
	if r == nil || !r.done.CompareAndSwap(false, true) {
		return nil
	}
	l := r.l
	var out []Charge
	if len(r.items) <= len(r.charges) {
		out = r.charges[:len(r.items)]
	} else {
		out = make([]Charge, len(r.items))
	}
	l.mu.Lock()
	for i := range r.items {
		it, b := &r.items[i], &r.budgets[i]
		c := it.c
		c.release(it.amt)
		a := actual.of(b.Type)
		if a > 0 {
			c.used += a
			if c.until.IsZero() || l.leases.on {
				c.pending += a
				c.spend(a)
				if !c.dirty {
					c.dirty = true
					l.dirty = append(l.dirty, c)
				}
			}
		}
		if l.opts.OnCross != nil && c.until.IsZero() {
			if b.Threshold > 0 && reached(c.used, b.Threshold) && !(c.thrSent && c.thrAt == b.Threshold) {
				c.thrSent, c.thrAt = true, b.Threshold
				l.waiting = append(l.waiting, crossing{Crossing{*b, c.used, CrossingThreshold}, c, b.Threshold})
			}
			l.exhaustedLocked(c, b)
		}
		out[i] = Charge{Budget: *b, Amount: a, Used: c.used}
	}
	l.mu.Unlock()
	return out
}

// Charge charges actual to budgets without a reservation or an admission (a rate limit's
// tokens, counted once the answer is known), as Settle does.
func (l *Ledger) Charge(budgets []Budget, actual Amount) []Charge {
	r := &Reservation{l: l, budgets: budgets}
	if len(budgets) <= len(r.inline) {
		r.items = r.inline[:len(budgets)]
	} else {
		r.items = make([]item, len(budgets))
	}
	l.mu.Lock()
	for i := range r.items {
		c := l.counterFor(&budgets[i])
		r.items[i].c = c
		c.inflight++
	}
	l.mu.Unlock()
	return r.Settle(actual)
}

// Discard is the Store of a Ledger whose counters are transient only (rate-limit windows on
// one instance): it loads nothing and keeps nothing.
var Discard Store = discard{}

type discard struct{}

func (discard) Load(context.Context) ([]Row, error)      { return nil, nil }
func (discard) Add(context.Context, string, []Row) error { return nil }
func (discard) Close() error                             { return nil }

// forget drops the transient counters whose Until has passed and that hold nothing: nothing in
// flight, pending, leased or on its way back. Called by Run every second or so.
func (l *Ledger) forget(now time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for k, c := range l.counters {
		if c.until.IsZero() || now.Before(c.until) || c.inflight > 0 || c.pending != 0 || c.dirty ||
			c.unflushed > 0 || c.held > 0 || c.returning > 0 || c.queued {
			continue
		}
		delete(l.counters, k)
		rk := rkey{k.kind, k.id}
		l.byRes[rk] = slices.DeleteFunc(l.byRes[rk], func(x *counter) bool { return x == c })
		if len(l.byRes[rk]) == 0 {
			delete(l.byRes, rk)
		}
		if l.leases.on {
			delete(l.leases.byName, rowKey{c.name, c.period})
			if c.holding {
				delete(l.leases.holding, c)
			}
		}
	}
}

// exhaustedLocked queues an "exhausted" crossing when c has reached b's limit and none is
// queued or delivered for that limit yet. l.mu is held.
func (l *Ledger) exhaustedLocked(c *counter, b *Budget) {
	if l.opts.OnCross == nil || !c.until.IsZero() || !reached(c.used, b.Limit) || (c.exhSent && c.exhAt == b.Limit) {
		return
	}
	c.exhSent, c.exhAt = true, b.Limit
	l.waiting = append(l.waiting, crossing{Crossing{*b, c.used, CrossingExhausted}, c, b.Limit})
}

// Used is the settled usage of b's period (0 when none), looked up by Name and Period. With
// leases, other instances charge the budget too: when the store can read a counter
// (UsedReader), Used answers the stored usage plus what is settled here and not yet taken into
// a batch, if that is more than this instance has seen.
func (l *Ledger) Used(b Budget) float64 {
	l.mu.Lock()
	var used, pending float64
	if c, ok := l.counters[ckey{kind: b.Kind, id: b.ID, sub: b.Sub, period: b.Period}]; ok {
		used, pending = c.used, c.pending
	}
	l.mu.Unlock()
	if rr, ok := l.store.(UsedReader); ok && l.leases.on {
		ctx, cancel := context.WithTimeout(context.Background(), usedReadTimeout)
		stored, err := rr.Used(ctx, b.Name(), b.Period)
		cancel()
		if err == nil {
			used = max(used, stored+pending) // a batch being written is in used, maybe in stored: not added twice
		}
	}
	return used
}

// UsedReader is a Store that reads one counter's stored usage.
type UsedReader interface {
	Used(ctx context.Context, budget, period string) (float64, error)
}

// usedReadTimeout bounds Used's read of the store; past it, Used answers what it has seen.
const usedReadTimeout = 2 * time.Second

// Counters lists the counters of one resource (all subs, all periods), ordered by Sub then
// Period; e.g. a usage-limit policy's entities.
func (l *Ledger) Counters(kind Kind, id string) []Counter {
	type at struct{ sub, period string }
	merged := map[at]float64{}
	pending := map[at]float64{}
	l.mu.Lock()
	for _, c := range l.byRes[rkey{kind, id}] {
		merged[at{c.sub, c.period}] = c.used
		pending[at{c.sub, c.period}] = c.pending
	}
	l.mu.Unlock()
	// With several instances, the others' charges are in the shared store only: its rows of
	// the resource are merged in, as Used merges one (a batch being written counted once).
	if cr, ok := l.store.(CountersReader); ok && l.leases.on {
		ctx, cancel := context.WithTimeout(context.Background(), usedReadTimeout)
		prefix := string(kind) + ":" + id
		stored, err := cr.Counters(ctx, prefix)
		cancel()
		if err == nil {
			for _, sc := range stored {
				sub, ok := strings.CutPrefix(sc.Budget, prefix)
				if !ok || (sub != "" && sub[0] != ':') {
					continue // another resource whose id starts with this one's
				}
				k := at{strings.TrimPrefix(sub, ":"), sc.Period}
				merged[k] = max(merged[k], sc.Used+pending[k])
			}
		}
	}
	out := make([]Counter, 0, len(merged))
	for k, used := range merged {
		out = append(out, Counter{Sub: k.sub, Period: k.period, Used: used})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Sub != out[j].Sub {
			return out[i].Sub < out[j].Sub
		}
		return out[i].Period < out[j].Period
	})
	return out
}

// CountersReader is a Store that lists the stored counters of one resource: the rows whose
// budget is prefix ("kind:id") or starts with prefix and ':'.
type CountersReader interface {
	Counters(ctx context.Context, prefix string) ([]StoredCounter, error)
}

// StoredCounter is one counter's row in a store.
type StoredCounter struct {
	Budget, Period string
	Used           float64
}

// Flush writes the usage settled so far now, as one batch with a fresh id. A batch whose
// write failed is retried first, whole (same id, same deltas), before anything newer; usage
// settled meanwhile waits apart in memory. The crossings a batch covers are released to
// OnCross once it is written.
func (l *Ledger) Flush(ctx context.Context) error {
	l.flushMu.Lock()
	defer l.flushMu.Unlock()
	if b := l.failed; b != nil {
		if err := l.store.Add(ctx, b.id, b.rows); err != nil {
			return l.flushFailed(b, err)
		}
		l.flushed(b)
		l.release(b.crossings)
	}
	b := l.take()
	if len(b.rows) > 0 {
		if err := l.store.Add(ctx, b.id, b.rows); err != nil {
			return l.flushFailed(b, err)
		}
		l.flushed(b)
	}
	l.release(b.crossings)
	return nil
}

// take moves the pending usage and the waiting crossings into a new batch.
func (l *Ledger) take() *batch {
	l.mu.Lock()
	defer l.mu.Unlock()
	b := &batch{crossings: l.waiting}
	l.waiting = nil
	if len(l.dirty) > 0 {
		b.id = uuid.NewString()
		b.rows = make([]Row, 0, len(l.dirty))
		for _, c := range l.dirty {
			if c.pending != 0 {
				b.rows = append(b.rows, Row{Budget: c.name, Period: c.period, Used: c.pending})
				b.counters = append(b.counters, c)
			}
			c.pending, c.dirty = 0, false
		}
		clear(l.dirty)
		l.dirty = l.dirty[:0]
	}
	return b
}

// flushFailed keeps b for the next flush. The first failure of an outage is logged (WARN), and
// the flush that ends it (INFO, flushed): one line each, however long the store stays down.
func (l *Ledger) flushFailed(b *batch, err error) error {
	l.failed = b
	if l.failSince.IsZero() {
		l.failSince = time.Now()
		l.log.Warn("ledger: flush failed; the batch is kept and retried, usage waits in memory",
			"batch", b.id, "rows", len(b.rows), "err", err)
	}
	return fmt.Errorf("ledger: flush batch %s (%d rows): %w", b.id, len(b.rows), err)
}

func (l *Ledger) flushed(b *batch) {
	if len(b.counters) > 0 {
		l.mu.Lock()
		for i, c := range b.counters {
			c.unflushed -= b.rows[i].Used
		}
		l.mu.Unlock()
	}
	if !l.failSince.IsZero() {
		l.log.Info("ledger: flushing again", "failed_for", time.Since(l.failSince).Round(time.Millisecond))
	}
	l.failed, l.failSince = nil, time.Time{}
}

// release hands flushed crossings to the OnCross queue. A full queue drops a crossing with a
// log line and clears its mark, so the next settle or refusal of that budget queues it again.
func (l *Ledger) release(cs []crossing) {
	for _, cr := range cs {
		select {
		case l.ready <- cr:
			continue
		default:
		}
		l.log.Warn("ledger: crossing queue full; dropped, told again at the budget's next charge or refusal",
			"budget", cr.Budget.Name(), "period", cr.Budget.Period, "kind", cr.Kind)
		l.mu.Lock()
		switch cr.Kind {
		case CrossingThreshold:
			if cr.c.thrAt == cr.at {
				cr.c.thrSent = false
			}
		case CrossingExhausted:
			if cr.c.exhAt == cr.at {
				cr.c.exhSent = false
			}
		}
		l.mu.Unlock()
	}
}

// Run flushes every FlushEvery and hands crossings to OnCross until ctx ends or Close is
// called; it returns nil then. Close does the final flush.
func (l *Ledger) Run(ctx context.Context) error {
	l.lifeMu.Lock()
	if l.started {
		l.lifeMu.Unlock()
		return errors.New("ledger: Run called twice")
	}
	l.started = true
	closed := l.closed
	l.lifeMu.Unlock()
	defer close(l.runDone)
	if closed {
		return nil
	}

	// Crossings go from a goroutine of their own, so that a slow OnCross delays no flush.
	quit := make(chan struct{})
	var dispatched sync.WaitGroup
	if l.opts.OnCross != nil {
		dispatched.Go(func() { l.dispatch(quit) })
	}
	defer func() {
		close(quit)
		dispatched.Wait()
	}()

	tick := time.NewTicker(l.opts.FlushEvery)
	defer tick.Stop()
	ticks, forgetEvery := 0, max(1, int(time.Second/l.opts.FlushEvery))
	var demands <-chan Demand
	if l.leases.on {
		demands = l.leases.src.Demands()
	}
	for {
		select {
		case <-tick.C:
			fctx, cancel := context.WithTimeout(ctx, flushTimeout)
			_ = l.Flush(fctx) // logged by flushFailed; the batch is kept
			cancel()
			if l.leases.on {
				l.idle()
				l.leaseWork(ctx)
			}
			if ticks++; ticks%forgetEvery == 0 {
				l.forget(time.Now())
			}
		case <-l.leases.kick:
			l.leaseWork(ctx)
		case d, ok := <-demands:
			if !ok {
				demands = nil
				continue
			}
			l.demanded(d)
			l.leaseWork(ctx)
			l.mu.Lock()
			flush := l.leases.flushNow
			l.leases.flushNow = false
			l.mu.Unlock()
			if flush {
				fctx, cancel := context.WithTimeout(ctx, flushTimeout)
				_ = l.Flush(fctx)
				cancel()
			}
		case <-ctx.Done():
			return nil
		case <-l.stop:
			return nil
		}
	}
}

// dispatch calls OnCross for each flushed crossing; told to quit, it delivers what is queued.
func (l *Ledger) dispatch(quit <-chan struct{}) {
	for {
		select {
		case cr := <-l.ready:
			l.opts.OnCross(cr.Crossing)
		case <-quit:
			l.drain()
			return
		}
	}
}

// drain calls OnCross for every crossing queued now.
func (l *Ledger) drain() {
	if l.opts.OnCross == nil {
		return
	}
	for {
		select {
		case cr := <-l.ready:
			l.opts.OnCross(cr.Crossing)
		default:
			return
		}
	}
}

// Close writes what is settled (the final flush), stops Run's work and delivers the crossings
// the flush released. It returns the final flush's error: then the usage is still in memory,
// and Flush may be called again. Close is idempotent: later calls wait for the first and return
// its result. Usage settled after Close is counted in memory but written only by a Flush.
func (l *Ledger) Close(ctx context.Context) error {
	l.lifeMu.Lock()
	if l.closed {
		l.lifeMu.Unlock()
		select {
		case <-l.closeDone:
			return l.closeErr
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	l.closed = true
	l.lifeMu.Unlock()
	defer close(l.closeDone)

	l.closeErr = l.Flush(ctx)
	if l.leases.on {
		l.returnAll(ctx)
	}
	l.lifeMu.Lock()
	started := l.started
	close(l.stop)
	l.lifeMu.Unlock()
	if started {
		select {
		case <-l.runDone: // Run's dispatcher delivered what the flush released
		case <-ctx.Done():
			if l.closeErr == nil {
				l.closeErr = ctx.Err()
			}
			return l.closeErr
		}
	}
	// Run has ended (perhaps before this flush) or never ran: deliver the rest here.
	l.drain()
	return l.closeErr
}
