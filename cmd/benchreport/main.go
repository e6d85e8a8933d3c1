// Command benchreport turns `go test -bench` output (on stdin) into a table. Within each group
// of sub-benchmarks (same parent), a latency metric (unit ending -µs or -ms) or a rate (unit
// ending /s) of a row is also shown as a ratio to the same metric of the group's baseline-*
// row, measured in the same run. Used by make bench.
package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"regexp"
	"strconv"
	"strings"
	"text/tabwriter"
)

type row struct {
	group, name string
	metrics     map[string]float64
	order       []string
}

// A benchmark line: name, iterations, then value/unit pairs; the -N GOMAXPROCS suffix dropped.
var line = regexp.MustCompile(`^(Benchmark\S+?)(?:-\d+)?\s+(\d+)\s+(.*)$`)

func main() {
	if err := report(os.Stdin, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "benchreport:", err)
		os.Exit(1)
	}
}

func report(in io.Reader, out io.Writer) error {
	var rows []row
	sc := bufio.NewScanner(in)
	for sc.Scan() {
		m := line.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		full := strings.TrimPrefix(m[1], "Benchmark")
		group, name := full, full
		if i := strings.LastIndex(full, "/"); i >= 0 {
			group, name = full[:i], full[i+1:]
		}
		r := row{group: group, name: name, metrics: map[string]float64{}}
		f := strings.Fields(m[3])
		for i := 0; i+1 < len(f); i += 2 {
			v, err := strconv.ParseFloat(f[i], 64)
			if err != nil {
				continue
			}
			r.metrics[f[i+1]] = v
			r.order = append(r.order, f[i+1])
		}
		rows = append(rows, r)
	}
	if err := sc.Err(); err != nil {
		return err
	}
	baselines := map[string]row{}
	for _, r := range rows {
		if strings.HasPrefix(r.name, "baseline") {
			baselines[r.group] = r
		}
	}
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "benchmark\tmetric\tvalue\t× baseline\t")
	for _, r := range rows {
		for _, unit := range r.order {
			if unit == "ns/op" && len(r.order) > 1 {
				continue // the custom metrics say more than the mean
			}
			ratio := ""
			if base, ok := baselines[r.group]; ok && base.name != r.name && base.metrics[unit] > 0 && comparable(unit) {
				ratio = fmt.Sprintf("%.2f×", r.metrics[unit]/base.metrics[unit])
			}
			fmt.Fprintf(tw, "%s/%s\t%s\t%s\t%s\t\n", r.group, r.name, unit, format(r.metrics[unit]), ratio)
		}
	}
	return tw.Flush()
}

// comparable reports whether a unit is shown against the baseline: latencies (-µs, -ms, as
// p95-ms) and rates (/s, as rows/s).
func comparable(unit string) bool {
	return strings.HasSuffix(unit, "-µs") || strings.HasSuffix(unit, "-ms") || strings.HasSuffix(unit, "/s")
}

func format(v float64) string {
	if v >= 100 {
		return strconv.FormatFloat(v, 'f', 0, 64)
	}
	return strconv.FormatFloat(v, 'f', 1, 64)
}
