package analytics_test

import (
	"context"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	ch "github.com/ClickHouse/clickhouse-go/v2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/causeway/causeway/analytics"
	"github.com/causeway/causeway/analytics/chserver"
	"github.com/causeway/causeway/analytics/clickhouse"
)

// TestClickHouseOutageStoresEveryRequestOnce stops a real ClickHouse server while 5,000
// records pass from the gateway into the pipeline, then starts it
// again. Before the outage one insert's reply is lost after the server stored its rows (the
// unknown outcome of an insert cut off mid-flight), so the retry really stores copies; the
// rows of the outage wait in the spool. In the end every record is read exactly once.
func TestClickHouseOutageStoresEveryRequestOnce(t *testing.T) {
	const (
		org     = "org-outage"
		total   = 5_000
		workers = 4
	)
	srv := chserver.New(t)
	ctx := context.Background()
	proxy := newReplyCutter(t, srv.Addr())
	store, err := clickhouse.Open(ctx, "clickhouse://"+proxy.addr()+"/default")
	require.NoError(t, err)
	t.Cleanup(func() { _ = store.Close() })

	// Straight to the server, not through the proxy nor the store under test.
	opts, err := ch.ParseDSN(srv.URL())
	require.NoError(t, err)
	opts.Protocol = ch.Native
	conn, err := ch.Open(opts)
	require.NoError(t, err)
	t.Cleanup(func() { _ = conn.Close() })
	// Until the restart, copies stay on disk as separate rows instead of merging away, so
	// the test can see that the retry stored some twice.
	require.NoError(t, conn.Exec(ctx, "SYSTEM STOP MERGES request_logs"))
	// copies counts the rows stored, copies included, and the ids among them.
	copies := func() (rows, distinct uint64, err error) {
		err = conn.QueryRow(ctx, "SELECT count(), uniqExact(id) FROM request_logs WHERE organisation_id = ?", org).
			Scan(&rows, &distinct)
		return rows, distinct, err
	}

	spool, err := analytics.OpenSpool(t.TempDir(), 256<<20)
	require.NoError(t, err)
	t.Cleanup(func() { _ = spool.Close() })
	// Small batches and short back-offs: many inserts are in flight around the stop, and the
	// pipeline notices the restart within a second.
	bp := startBenchPipeline(t, store, spool, analytics.Options{
		BatchSize:     250,
		FlushInterval: 50 * time.Millisecond,
		InsertTimeout: 5 * time.Second,
		RetryMin:      50 * time.Millisecond,
		RetryMax:      500 * time.Millisecond,
	})
	sink := bp.p // the gateway logs into the pipeline

	// send logs records [from, to) from several goroutines, each pausing between records so
	// that sending overlaps whatever happens to the server meanwhile.
	sent := make(map[string]bool, total)
	var sentMu sync.Mutex
	send := func(from, to int, pause time.Duration) {
		var wg sync.WaitGroup
		for w := range workers {
			wg.Go(func() {
				for i := from + w; i < to; i += workers {
					rec := benchRecord(org, i)
					sentMu.Lock()
					sent[rec.ID] = true
					sentMu.Unlock()
					sink.Log(rec)
					time.Sleep(pause)
				}
			})
		}
		wg.Wait()
	}
	during := func(action func(), from, to int, pause time.Duration) {
		done := make(chan struct{})
		go func() {
			defer close(done)
			send(from, to, pause)
		}()
		action()
		<-done
	}

	proxy.loseReplies(1)
	send(0, 1_500, time.Millisecond)
	require.Eventually(t, func() bool { return proxy.lost() == 1 }, 30*time.Second, 10*time.Millisecond,
		"an insert's reply is lost after the server stored its rows")
	require.Eventually(t, func() bool {
		rows, distinct, err := copies()
		return err == nil && bp.p.Stats().SpoolBytes == 0 && rows > distinct
	}, 30*time.Second, 10*time.Millisecond, "the insert is retried from the spool, storing copies")
	rows, distinct, err := copies()
	require.NoError(t, err)
	t.Logf("before the outage: %d rows stored for %d ids", rows, distinct)
	spooledBefore := bp.p.Stats().Spooled

	// The stop overlaps sending, so inserts are cut off mid-flight.
	during(srv.Stop, 1_500, 2_500, 2*time.Millisecond)
	send(2_500, 3_500, time.Millisecond)
	require.Eventually(t, func() bool { return bp.p.Stats().Spooled > spooledBefore }, 30*time.Second, 10*time.Millisecond,
		"rows sent while ClickHouse is down go to the spool")
	during(srv.Start, 3_500, total, time.Millisecond)
	require.Len(t, sent, total)

	var last analytics.Stats
	require.Eventually(t, func() bool {
		last = bp.p.Stats()
		return last.Received == total && last.Inserted >= total && last.SpoolBytes == 0
	}, 2*time.Minute, 50*time.Millisecond, "every record is stored and the spool drained: %+v", &last)

	bp.close(t)
	st := bp.p.Stats()
	t.Logf("pipeline stats: %+v", st)
	assert.Positive(t, st.Spooled, "the outage really spooled rows")
	assert.Zero(t, st.BufferFull)
	assert.Zero(t, st.Dropped)
	assert.Zero(t, st.Corrupt)

	require.NoError(t, conn.QueryRow(ctx,
		"SELECT count(), uniqExact(id) FROM request_logs FINAL WHERE organisation_id = ?", org).Scan(&rows, &distinct))
	assert.EqualValues(t, total, rows, "FINAL reads each id once")
	assert.EqualValues(t, total, distinct)

	rows, _, err = copies()
	require.NoError(t, err)
	t.Logf("at the end: %d rows stored for %d records before merging", rows, total)
	require.NoError(t, mergePartitions(ctx, conn, "default", time.Minute))
	rows, distinct, err = copies()
	require.NoError(t, err)
	assert.EqualValues(t, total, rows, "after merging, the copies have collapsed on disk too")
	assert.EqualValues(t, total, distinct)

	got := make(map[string]bool, total)
	ids, err := conn.Query(ctx, "SELECT id FROM request_logs FINAL WHERE organisation_id = ?", org)
	require.NoError(t, err)
	defer ids.Close()
	for ids.Next() {
		var id string
		require.NoError(t, ids.Scan(&id))
		require.False(t, got[id], "id %s read twice", id)
		got[id] = true
	}
	require.NoError(t, ids.Err())
	assert.Equal(t, sent, got, "exactly the records sent are stored")
	if t.Failed() {
		t.Log(missing(sent, got))
	}
}

// missing names a few ids sent but not stored, and stored but not sent.
func missing(sent, got map[string]bool) string {
	var lost, extra []string
	for id := range sent {
		if !got[id] && len(lost) < 10 {
			lost = append(lost, id)
		}
	}
	for id := range got {
		if !sent[id] && len(extra) < 10 {
			extra = append(extra, id)
		}
	}
	return fmt.Sprintf("lost (first 10): %v; not sent (first 10): %v", lost, extra)
}

// replyCutter is a TCP proxy in front of the server that can lose the reply to an insert: it
// forwards the whole upload, so the server stores the rows, and then closes the connection
// instead of forwarding the server's answer. The client sees an insert fail that succeeded.
type replyCutter struct {
	ln      net.Listener
	target  string
	pending atomic.Int32 // inserts whose reply is still to be lost
	cut     atomic.Int32 // replies lost
}

// uploadBytes tells an insert's data block from the small packets of pings and queries: a
// batch of a few rows of realistic size is already larger.
const uploadBytes = 16 << 10

func newReplyCutter(t *testing.T, target string) *replyCutter {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	p := &replyCutter{ln: ln, target: target}
	t.Cleanup(func() { _ = ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go p.serve(c)
		}
	}()
	return p
}

func (p *replyCutter) addr() string { return p.ln.Addr().String() }

func (p *replyCutter) loseReplies(n int32) { p.pending.Add(n) }

func (p *replyCutter) lost() int32 { return p.cut.Load() }

// take claims one reply to lose, if any is pending.
func (p *replyCutter) take() bool {
	for {
		n := p.pending.Load()
		if n <= 0 {
			return false
		}
		if p.pending.CompareAndSwap(n, n-1) {
			return true
		}
	}
}

// serve forwards one connection. The client sends an insert's data only after the server's
// header block reached it, so bytes the server sends after a large upload are its answer to
// that upload: the rows are stored by then.
func (p *replyCutter) serve(client net.Conn) {
	server, err := net.DialTimeout("tcp", p.target, time.Second)
	if err != nil {
		_ = client.Close() // the server is down: the client sees the connection fail
		return
	}
	closeBoth := sync.OnceFunc(func() {
		_ = client.Close()
		_ = server.Close()
	})
	var uploaded atomic.Int64 // client bytes since the server last spoke
	var doomed atomic.Bool
	go func() {
		defer closeBoth()
		buf := make([]byte, 32<<10)
		for {
			n, err := client.Read(buf)
			if n > 0 {
				if uploaded.Add(int64(n)) >= uploadBytes && !doomed.Load() && p.take() {
					doomed.Store(true)
				}
				if _, err := server.Write(buf[:n]); err != nil {
					return
				}
			}
			if err != nil {
				return
			}
		}
	}()
	go func() {
		defer closeBoth()
		buf := make([]byte, 32<<10)
		for {
			n, err := server.Read(buf)
			if n > 0 {
				if doomed.Load() {
					p.cut.Add(1)
					return
				}
				uploaded.Store(0)
				if _, err := client.Write(buf[:n]); err != nil {
					return
				}
			}
			if err != nil {
				return
			}
		}
	}()
}
