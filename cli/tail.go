package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
)

const (
	// tailSince is how far back a tail starts without --since or --from.
	tailSince = 5 * time.Minute
	// tailPageSize is the largest page the logs route answers (a server may answer less).
	tailPageSize = 1000
)

func (a *app) tailCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "tail", Short: "print request logs as they are stored, oldest first", Args: args(),
		Long: `Prints the request logs of the last while (--since, default 5m), oldest first, then, with
--follow or --count, keeps polling and prints each new row once: as a table line, or with
-o json as one JSON object a line. --follow runs until interrupted; --count N stops after N rows.

Rows are found by their start time in a window that moves with the newest row seen, less
--overlap, so that a row stored late (a long request, or one still in its batch) is still
printed; a row stored more than --overlap after a newer one was seen is not.`}
	trafficFilters(cmd)
	follow := cmd.Flags().BoolP("follow", "f", false, "keep printing new rows until interrupted")
	count := cmd.Flags().Int("count", 0, "stop after this many rows (and keep polling until then)")
	interval := cmd.Flags().Duration("interval", time.Second, "how often to poll")
	overlap := cmd.Flags().Duration("overlap", time.Minute, "how far behind the newest row each poll looks again")
	cmd.RunE = action(func(cmd *cobra.Command, _ []string) error {
		if flagChanged(cmd.Flags(), "to") {
			return usagef("logs tail follows new rows: --to does not apply (logs list takes it)")
		}
		if *count < 0 || *interval <= 0 || *overlap < 0 {
			return usagef("--count must be at least 0, --interval positive and --overlap at least 0")
		}
		now := time.Now()
		q, err := a.trafficQuery(cmd.Context(), cmd, now)
		if err != nil {
			return err
		}
		start := now.Add(-tailSince)
		if raw := q.Get("time_of_generation_min"); raw != "" {
			start, _ = time.Parse(time.RFC3339Nano, raw)
		}
		q.Del("time_of_generation_min")
		t := &tail{a: a, filters: q, start: start, overlap: *overlap, interval: *interval, count: *count,
			follow: *follow || *count > 0, seen: map[string]time.Time{}}
		return t.run(cmd.Context())
	})
	return cmd
}

// tail polls the logs with a moving window and prints each row once.
type tail struct {
	a        *app
	filters  url.Values
	start    time.Time
	overlap  time.Duration
	interval time.Duration
	count    int
	follow   bool
	// seen holds the ids printed whose rows are still in the window, with their start time.
	seen    map[string]time.Time
	newest  time.Time
	printed int
}

// tailRow is one row of the logs list: its id and start, and its JSON as the API wrote it.
type tailRow struct {
	id  string
	at  time.Time
	raw json.RawMessage
}

func (t *tail) run(ctx context.Context) error {
	if t.a.output == "table" {
		fmt.Fprintln(t.a.opts.Stdout, tailLine("TIME", "STATUS", "MODEL", "PROVIDER", "TOKENS", "COST", "LATENCY MS", "WORKSPACE", "ID"))
	}
	for {
		rows, err := t.poll(ctx)
		switch {
		case ctx.Err() != nil:
			return nil // interrupted: how a follow ends
		case err != nil && (!t.follow || isClientError(err)):
			return err
		case err != nil:
			// The server may come back: a tail that follows keeps trying.
			fmt.Fprintf(t.a.opts.Stderr, "causeway: logs tail: %v (trying again)\n", err)
		}
		for _, r := range rows {
			if err := t.print(r); err != nil {
				return err
			}
			if t.count > 0 && t.printed >= t.count {
				return nil
			}
		}
		if !t.follow {
			return nil
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(t.interval):
		}
	}
}

// poll reads the rows of the window not printed yet, oldest first, and moves the window.
func (t *tail) poll(ctx context.Context) ([]tailRow, error) {
	from := t.start
	if !t.newest.IsZero() {
		if moved := t.newest.Add(-t.overlap); moved.After(from) {
			from = moved
		}
	}
	q := url.Values{}
	for k, v := range t.filters {
		q[k] = v
	}
	q.Set("time_of_generation_min", from.UTC().Format(time.RFC3339Nano))
	q.Set("page_size", strconv.Itoa(tailPageSize))
	var fresh []tailRow
	inPoll := map[string]bool{}
	// Pages are newest first: a row stored while we page shifts the rest down, so a row may
	// come twice (dropped by its id) but none is skipped.
	fetched := 0
	for page := 0; ; page++ {
		q.Set("current_page", strconv.Itoa(page))
		var list struct {
			Total int               `json:"total"`
			Data  []json.RawMessage `json:"data"`
		}
		if err := t.a.api.getJSON(ctx, "/logs", q, &list); err != nil {
			return nil, err
		}
		for _, raw := range list.Data {
			var row struct {
				ID        string    `json:"_id"`
				CreatedAt time.Time `json:"created_at"`
			}
			if err := json.Unmarshal(raw, &row); err != nil || row.ID == "" {
				return nil, fmt.Errorf("a log row without its _id or created_at: %s", raw)
			}
			if _, ok := t.seen[row.ID]; ok || inPoll[row.ID] {
				continue
			}
			inPoll[row.ID] = true
			fresh = append(fresh, tailRow{id: row.ID, at: row.CreatedAt, raw: raw})
		}
		if fetched += len(list.Data); len(list.Data) == 0 || fetched >= list.Total {
			break
		}
	}
	slices.SortFunc(fresh, func(x, y tailRow) int {
		if c := x.at.Compare(y.at); c != 0 {
			return c
		}
		return strings.Compare(x.id, y.id)
	})
	for id, at := range t.seen {
		if at.Before(from) {
			delete(t.seen, id) // out of the window: it cannot be answered again
		}
	}
	for _, r := range fresh {
		t.seen[r.id] = r.at
		if r.at.After(t.newest) {
			t.newest = r.at
		}
	}
	return fresh, nil
}

// print writes one row: its JSON on one line, or a table line.
func (t *tail) print(r tailRow) error {
	t.printed++
	if t.a.output == "json" {
		var buf bytes.Buffer
		if err := json.Compact(&buf, r.raw); err != nil {
			return err
		}
		buf.WriteByte('\n')
		_, err := t.a.opts.Stdout.Write(buf.Bytes())
		return err
	}
	doc, err := decode(r.raw)
	if err != nil {
		return err
	}
	cells := make([]string, len(logColumns))
	for i, c := range logColumns {
		cells[i] = c.cell(doc)
	}
	_, err = fmt.Fprintln(t.a.opts.Stdout, tailLine(cells...))
	return err
}

// tailLine lays out a tail's columns at fixed widths: rows arrive one by one, so a
// tabwriter, which aligns what it has seen, cannot line them up.
func tailLine(cells ...string) string {
	widths := []int{24, 6, 24, 12, 7, 12, 10, 16, 0}
	var b strings.Builder
	for i, c := range cells {
		if i > 0 {
			b.WriteString("  ")
		}
		if i < len(widths) && widths[i] > 0 {
			fmt.Fprintf(&b, "%-*s", widths[i], c)
		} else {
			b.WriteString(c)
		}
	}
	return strings.TrimRight(b.String(), " ")
}

// isClientError reports an API answer of 4xx: the request itself is wrong, so asking again
// would not help.
func isClientError(err error) bool {
	var e *APIError
	return errors.As(err, &e) && e.Status >= 400 && e.Status < 500
}
