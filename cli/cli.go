package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// The global settings' defaults, and the environment variables that stand for their flags.
const (
	DefaultURL     = "http://localhost:8787/v1"
	defaultTimeout = 30 * time.Second

	envURL     = "CAUSEWAY_URL"
	envAPIKey  = "CAUSEWAY_API_KEY"
	envTimeout = "CAUSEWAY_TIMEOUT"
	envOutput  = "CAUSEWAY_OUTPUT"
)

// Options are what Run takes from its process.
type Options struct {
	Stdin          io.Reader
	Stdout, Stderr io.Writer
	Getenv         func(string) string
	// Version names the CLI in its User-Agent.
	Version string
}

// app is one run of the CLI: its options, the global settings once read, and the client.
type app struct {
	opts    Options
	url     string
	apiKey  string
	output  string
	timeout time.Duration
	api     *client
	// workspaces caches the workspaces read to resolve a --workspace given as a slug or an id.
	workspaces map[string]workspaceRef
}

// usageError is a mistake in how the CLI was called: exit code 2.
type usageError struct{ err error }

func (e *usageError) Error() string { return e.err.Error() }
func (e *usageError) Unwrap() error { return e.err }

func usagef(format string, args ...any) error { return &usageError{fmt.Errorf(format, args...)} }

// runError is an error met while a command ran (the API's answer, the network, a file): exit
// code 1.
type runError struct{ err error }

func (e *runError) Error() string { return e.err.Error() }
func (e *runError) Unwrap() error { return e.err }

// Run runs the CLI on args (the program's arguments after its name) and returns the exit code:
// 0 success, 1 an error, 2 a usage error.
func Run(ctx context.Context, args []string, o Options) int {
	if o.Getenv == nil {
		o.Getenv = os.Getenv
	}
	if o.Stdin == nil {
		o.Stdin = strings.NewReader("")
	}
	a := &app{opts: o, workspaces: map[string]workspaceRef{}}
	root := a.root()
	root.SetArgs(args)
	root.SetIn(o.Stdin)
	root.SetOut(o.Stdout)
	root.SetErr(o.Stderr)
	cmd, err := root.ExecuteContextC(ctx)
	if err == nil {
		return 0
	}
	if re := (*runError)(nil); errors.As(err, &re) {
		fmt.Fprintf(o.Stderr, "causeway: %v\n", re.err)
		return 1
	}
	// Everything else is cobra's or ours about the command line.
	fmt.Fprintf(o.Stderr, "causeway: %v\nRun '%s --help' for usage.\n", err, cmd.CommandPath())
	return 2
}

// Has reports whether Run takes args[0]: one of the CLI's commands, or a flag (its global
// flags may come before the command).
func Has(name string) bool {
	if strings.HasPrefix(name, "-") && name != "-h" && name != "--help" {
		return true
	}
	for _, c := range (&app{}).root().Commands() {
		if c.Name() == name || slices.Contains(c.Aliases, name) {
			return c.Name() != "help"
		}
	}
	return false
}

// Usage lists the CLI's commands, one a line, for the binary's usage text.
func Usage() string {
	var b strings.Builder
	for _, c := range (&app{}).root().Commands() {
		if c.Name() == "help" || c.Hidden {
			continue
		}
		fmt.Fprintf(&b, "  %-15s%s\n", c.Name(), c.Short)
	}
	return b.String()
}

// root is the `causeway` command with every CLI subcommand beneath it.
func (a *app) root() *cobra.Command {
	root := &cobra.Command{
		Use:   "causeway",
		Short: "Causeway's admin command line: the admin API under /v1, for scripting",
		Long: `Causeway's admin command line. Every command calls the admin API of a running Causeway
at --url (CAUSEWAY_URL, default ` + DefaultURL + `) with the API key --api-key
(CAUSEWAY_API_KEY), and prints a table, or the API's JSON with -o json.

Exit codes: 0 success, 1 an error (the API's message and code on stderr), 2 a usage error.`,
		SilenceErrors:     true,
		SilenceUsage:      true,
		PersistentPreRunE: a.setUp,
		// Global flags alone, with no command.
		RunE: func(cmd *cobra.Command, _ []string) error {
			return usagef("a command is needed: causeway help lists them")
		},
	}
	root.CompletionOptions.DisableDefaultCmd = true
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return &usageError{err} })
	pf := root.PersistentFlags()
	pf.String("url", "", "the admin API's base URL, ending in /v1 (env "+envURL+"; default "+DefaultURL+")")
	pf.String("api-key", "", "the API key sent as x-gateway-api-key (env "+envAPIKey+"); never printed")
	pf.StringP("output", "o", "", "output: table or json (the API's JSON, indented) (env "+envOutput+"; default table)")
	pf.Duration("timeout", 0, "how long one API call may take (env "+envTimeout+"; default 30s)")
	root.AddCommand(
		a.workspacesCmd(),
		a.keysCmd(),
		a.policiesCmd(),
		a.configsCmd(),
		a.providersCmd(),
		a.integrationsCmd(),
		a.guardrailsCmd(),
		a.logsCmd(),
		a.analyticsCmd(),
		a.auditCmd(),
		a.notificationsCmd(),
		a.webhooksCmd(),
		a.cacheCmd(),
		a.promptsCmd(),
		a.labelsCmd(),
		a.collectionsCmd(),
		a.healthCmd(),
	)
	return root
}

// setUp reads the global settings, each from its flag, else its environment variable, else
// its default, and builds the client.
func (a *app) setUp(cmd *cobra.Command, _ []string) error {
	pf := cmd.Flags()
	setting := func(flag, env, def string) string {
		if f := pf.Lookup(flag); f != nil && f.Changed {
			return f.Value.String()
		}
		if v := strings.TrimSpace(a.opts.Getenv(env)); v != "" {
			return v
		}
		return def
	}
	a.url = setting("url", envURL, DefaultURL)
	if !strings.HasPrefix(a.url, "http://") && !strings.HasPrefix(a.url, "https://") {
		return usagef("--url (%s) must be an http:// or https:// URL, such as %s (got %q)", envURL, DefaultURL, a.url)
	}
	a.apiKey = setting("api-key", envAPIKey, "")
	a.output = strings.ToLower(setting("output", envOutput, "table"))
	if a.output != "table" && a.output != "json" {
		return usagef("-o/--output (%s) must be table or json (got %q)", envOutput, a.output)
	}
	raw := setting("timeout", envTimeout, defaultTimeout.String())
	t, err := time.ParseDuration(raw)
	if err != nil || t <= 0 {
		return usagef("--timeout (%s) must be a positive duration such as 30s (got %q)", envTimeout, raw)
	}
	a.timeout = t
	version := a.opts.Version
	if version == "" {
		version = "dev"
	}
	a.api = newClient(a.url, a.apiKey, "causeway-cli/"+version, a.timeout)
	return nil
}

// action wraps a command's work: an error it returns is a run error (exit 1) unless it is a
// usage error (exit 2).
func action(fn func(cmd *cobra.Command, args []string) error) func(*cobra.Command, []string) error {
	return func(cmd *cobra.Command, args []string) error {
		err := fn(cmd, args)
		if err == nil {
			return nil
		}
		if ue := (*usageError)(nil); errors.As(err, &ue) {
			return err
		}
		return &runError{err}
	}
}

// group is a command that only holds subcommands: called alone or with an unknown
// subcommand, it is a usage error.
func group(use, short string, children ...*cobra.Command) *cobra.Command {
	c := &cobra.Command{Use: use, Short: short, Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			var names []string
			for _, c := range cmd.Commands() {
				names = append(names, c.Name())
			}
			if len(args) == 0 {
				return usagef("%s needs a subcommand: %s", cmd.CommandPath(), strings.Join(names, ", "))
			}
			return usagef("unknown command %q for %q (its subcommands: %s)", args[0], cmd.CommandPath(), strings.Join(names, ", "))
		}}
	c.AddCommand(children...)
	return c
}

// args is an argument check whose failure is a usage error naming what is expected.
func args(names ...string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, got []string) error {
		if len(got) != len(names) {
			if len(names) == 0 {
				return usagef("%s takes no arguments (got %q)", cmd.CommandPath(), got)
			}
			return usagef("%s takes %s (got %d argument(s))", cmd.CommandPath(), strings.Join(names, " "), len(got))
		}
		for i, g := range got {
			if strings.TrimSpace(g) == "" {
				return usagef("%s: %s must not be empty", cmd.CommandPath(), names[i])
			}
		}
		return nil
	}
}

// flagChanged reports whether the command line set the flag.
func flagChanged(fs *pflag.FlagSet, name string) bool {
	f := fs.Lookup(name)
	return f != nil && f.Changed
}
