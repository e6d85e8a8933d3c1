// Command causeway is the AI gateway and its admin API in one binary.
//
//	causeway serve     serve the gateway and the admin API on CAUSEWAY_ADDR (default :8787)
//	causeway migrate   apply the PostgreSQL schema
//	causeway replay    rebuild read models from the events (--verify, --swap)
//	causeway version   print the version
//
// Every other command is the admin command line (package cli): workspaces, keys, policies,
// configs, providers, logs, analytics, audit and the rest, over the admin API of a running
// Causeway. Configuration comes from the environment; see README.md.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/debug"
	"runtime/metrics"
	"syscall"
	"time"

	_ "modernc.org/sqlite" // the analytics store's driver in embedded mode

	"github.com/causeway/causeway/cli"
)

// version is set at build time with -ldflags "-X main.version=…".
var version = "dev"

func main() {
	os.Exit(run(os.Args[1:], os.Getenv, os.Stdout, os.Stderr))
}

var usage = `usage: causeway <command>

commands:
  serve     serve the gateway and admin API (configuration from the environment)
  migrate   apply the PostgreSQL schema to DATABASE_URL (and EVENTSTORE_URL when PostgreSQL)
  replay    rebuild read models from the events; --verify compares, --swap puts them live
  version   print the version

admin commands, over the admin API at CAUSEWAY_URL with CAUSEWAY_API_KEY (causeway <command> --help):
` + cli.Usage()

func run(args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	switch args[0] {
	case "serve":
		return serve(getenv, stderr)
	case "replay":
		return replay(args[1:], getenv, stdout, stderr)
	case "migrate":
		return migrate(getenv, stdout, stderr)
	case "version":
		fmt.Fprintln(stdout, version)
		return 0
	case "help", "-h", "--help":
		if len(args) > 1 && cli.Has(args[1]) {
			return runCLI(append(args[1:], "--help"), getenv, stdout, stderr)
		}
		fmt.Fprint(stdout, usage)
		return 0
	}
	if cli.Has(args[0]) {
		return runCLI(args, getenv, stdout, stderr)
	}
	fmt.Fprintf(stderr, "causeway: unknown command %q\n\n%s", args[0], usage)
	return 2
}

// runCLI runs an admin command; an interrupt ends it (a followed log tail ends so).
func runCLI(args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return cli.Run(ctx, args, cli.Options{Stdin: os.Stdin, Stdout: stdout, Stderr: stderr, Getenv: getenv, Version: version})
}

func serve(getenv func(string) string, stderr io.Writer) int {
	cfg, err := LoadConfig(getenv)
	if err != nil {
		fmt.Fprintf(stderr, "causeway: the configuration has problems:\n%v\n", err)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	tuneGC(ctx, getenv)

	m := NewMain(cfg, stderr, version)
	if err := m.Run(ctx); err != nil {
		fmt.Fprintf(stderr, "causeway: %v\n", err)
		return 1
	}
	code := 0
	select {
	case <-ctx.Done():
		m.Logger.Info("shutting down")
	case err := <-m.Err():
		m.Logger.Error("server stopped", "error", err)
		code = 1
	}
	if err := m.Close(); err != nil {
		m.Logger.Error("shutdown", "error", err)
		code = 1
	}
	return code
}

// serveGCPercent is the garbage collector's target when GOGC is not set. A gateway's live heap
// is small (its routing index and buffers) while every request allocates, so at Go's default
// of 100 the collector runs often and costs a seventh of the CPU of a request (make bench:
// 182 µs a request at 100, 157 µs at 200, embedded). The extra memory is bounded: the tuner
// below keeps a soft memory limit of gcRoomBytes, or twice the live heap when that is more, so a
// process whose live heap is large collects as at Go's default and never more often.
const serveGCPercent = 200

// gcRoomBytes is the memory the higher target may fill before it gives way to Go's default.
const gcRoomBytes = 40 << 20

// tuneGC sets the collector's target for serving, unless GOGC or GOMEMLIMIT say otherwise,
// and keeps its memory limit in step with the live heap until ctx ends.
func tuneGC(ctx context.Context, getenv func(string) string) {
	if getenv("GOGC") != "" || getenv("GOMEMLIMIT") != "" {
		return
	}
	debug.SetGCPercent(serveGCPercent)
	debug.SetMemoryLimit(gcLimit(liveHeap()))
	go func() {
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
				debug.SetMemoryLimit(gcLimit(liveHeap()))
			}
		}
	}()
}

// gcLimit is the soft memory limit for a live heap of live bytes: gcRoomBytes, or room for the
// heap to double (Go's default target) when that is more.
func gcLimit(live uint64) int64 {
	return int64(max(gcRoomBytes, 2*live))
}

// liveHeap is the heap the last collection found live.
func liveHeap() uint64 {
	sample := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(sample)
	if sample[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return sample[0].Value.Uint64()
}
