package cli

import (
	"fmt"
	"io"
	"net/url"
	"strings"
	"time"

	"github.com/spf13/cobra"
)

// graphKinds are the graphs the API draws, for the help text.
var graphKinds = []string{"requests", "cost", "latency", "tokens", "users", "errors", "errors/rate",
	"errors/status-codes", "cache/hit-rate", "cache/latency"}

func (a *app) analyticsCmd() *cobra.Command {
	summary := &cobra.Command{Use: "summary", Short: "totals of the requests: count, cost, tokens, latency, errors", Args: args(),
		RunE: action(func(cmd *cobra.Command, _ []string) error {
			q, err := a.trafficQuery(cmd.Context(), cmd, time.Now())
			if err != nil {
				return err
			}
			path := "/analytics/summary"
			if cache, _ := cmd.Flags().GetBool("cache"); cache {
				path += "/cache"
			}
			return a.get(cmd.Context(), path, q, view{custom: func(w io.Writer, doc any) error {
				m, _ := lookup(doc, "summary").(map[string]any)
				var cols []column
				for _, k := range keysOf(m) {
					cols = append(cols, col(k, k))
				}
				return writeObject(w, cols, m)
			}})
		})}
	trafficFilters(summary)
	summary.Flags().Bool("cache", false, "the answer cache's summary: hits, speed-up, cost saved")

	graphs := &cobra.Command{Use: "graphs <kind>", Short: "a graph's data points over time",
		Long: "Prints a graph's data points (and its summary above them). Its kind is one of:\n  " +
			strings.Join(graphKinds, ", "), Args: args("<kind>"),
		RunE: action(func(cmd *cobra.Command, in []string) error {
			q, err := a.trafficQuery(cmd.Context(), cmd, time.Now())
			if err != nil {
				return err
			}
			return a.get(cmd.Context(), "/analytics/graphs/"+strings.Trim(in[0], "/"), q, view{custom: writeGraph})
		})}
	trafficFilters(graphs)

	groups := &cobra.Command{Use: "groups <group-by>", Short: "requests grouped: by model, provider, workspace, status, ...",
		Long: `Prints the requests grouped by one of: ai_service, model, status_code, api_key, config,
workspace, provider, prompt, users, or metadata/<key>; with --columns, the figures each group
answers beside requests (cost, total_tokens, avg_latency, p95_latency, success_rate, ...).`,
		Args: args("<group-by>"),
		RunE: action(func(cmd *cobra.Command, in []string) error {
			q, err := a.trafficQuery(cmd.Context(), cmd, time.Now())
			if err != nil {
				return err
			}
			pageQuery(cmd, q)
			if cols, _ := cmd.Flags().GetStringSlice("columns"); len(cols) > 0 {
				q.Set("columns", strings.Join(cols, ","))
			}
			stringQuery(cmd, q, "order-by", "order_by")
			stringQuery(cmd, q, "order", "order_by_type")
			path := "/analytics/groups/" + groupPath(in[0])
			return a.get(cmd.Context(), path, q, view{custom: writeGroups(a)})
		})}
	trafficFilters(groups)
	pageFlags(groups)
	groups.Flags().StringSlice("columns", nil, "figures to answer beside requests, comma-separated")
	groups.Flags().String("order-by", "", "the figure to order by (default requests)")
	groups.Flags().String("order", "", "asc or desc (the default)")

	return group("analytics", "analytics of the requests: summary, graphs, groups", summary, graphs, groups)
}

// groupPath is the path of a grouping: metadata/<key> keeps its slash, other names are one
// segment.
func groupPath(by string) string {
	if key, ok := strings.CutPrefix(by, "metadata/"); ok {
		return "metadata/" + url.PathEscape(key)
	}
	return url.PathEscape(by)
}

// writeGraph prints a graph's summary, then its points: the time (or status code) first.
func writeGraph(w io.Writer, doc any) error {
	if sum, ok := lookup(doc, "summary").(map[string]any); ok && len(sum) > 0 {
		var cols []column
		for _, k := range keysOf(sum) {
			cols = append(cols, col(k, k))
		}
		if err := writeObject(w, cols, sum); err != nil {
			return err
		}
		fmt.Fprintln(w)
	}
	points, _ := lookup(doc, "data_points").([]any)
	return writeTable(w, dynamicColumns(points, "timestamp", "status_code"), points)
}

// writeGroups prints groups: the group's key first, then requests, then the other figures.
func writeGroups(a *app) func(w io.Writer, doc any) error {
	return func(w io.Writer, doc any) error {
		items, total := listItems(doc)
		var first []string
		if len(items) > 0 {
			m, _ := items[0].(map[string]any)
			for _, k := range keysOf(m, "object") {
				if _, isText := m[k].(string); isText && k != "last_seen" && k != "first_seen" {
					first = append(first, k)
				}
			}
		}
		if err := writeTable(w, dynamicColumns(items, append(first, "requests")...), items); err != nil {
			return err
		}
		if total > len(items) {
			fmt.Fprintf(a.opts.Stderr, "(%d of %d groups shown: --page and --page-size for the others)\n", len(items), total)
		}
		return nil
	}
}

// dynamicColumns are the columns of items whose fields the query chose: those named in first
// (when present), then the rest, sorted; "object" is left out.
func dynamicColumns(items []any, first ...string) []column {
	present := map[string]bool{}
	for _, it := range items {
		if m, ok := it.(map[string]any); ok {
			for k := range m {
				present[k] = true
			}
		}
	}
	var cols []column
	for _, k := range first {
		if present[k] {
			cols = append(cols, col(strings.ToUpper(k), k))
			delete(present, k)
		}
	}
	rest := map[string]any{}
	for k := range present {
		rest[k] = true
	}
	for _, k := range keysOf(rest, "object") {
		cols = append(cols, col(strings.ToUpper(k), k))
	}
	return cols
}
