package cli

import (
	"fmt"
	"io"
	"net/http"

	"github.com/spf13/cobra"
)

var (
	keyColumns = []column{col("ID", "id"), col("NAME", "name"), col("TYPE", "type"), col("WORKSPACE", "workspace_id"),
		col("STATUS", "status"), col("KEY", "key"), col("CREATED", "created_at")}
	keyView = view{object: []column{col("id", "id"), col("name", "name"), col("type", "type"),
		col("workspace_id", "workspace_id"), col("user_id", "user_id"), col("status", "status"), col("key", "key"),
		col("scopes", "scopes"), col("usage_limits", "usage_limits"), col("rate_limits", "rate_limits"),
		col("current_usage", "current_usage"), col("expires_at", "expires_at"), col("rotation_policy", "rotation_policy"),
		col("created_at", "created_at"), col("last_updated_at", "last_updated_at")}}
)

// keyFields are the flags of a key's common fields, for create and update.
func keyFields() []field {
	return []field{
		{flag: "name", key: "name", usage: "the key's name"},
		{flag: "scopes", key: "scopes", kind: listField, usage: "the key's scopes, comma-separated (e.g. completions.write,logs.list)"},
		{flag: "budget", key: "usage_limits.credit_limit", kind: numberField, usage: "the key's budget (usage_limits.credit_limit)"},
		{flag: "budget-type", key: "usage_limits.type", usage: "what the budget counts: cost (USD) or tokens"},
		{flag: "alert-threshold", key: "usage_limits.alert_threshold", kind: numberField, usage: "usage at which an alert is sent"},
		{flag: "rate-limits", key: "rate_limits", kind: jsonField, usage: `rate limits as JSON, e.g. [{"type":"requests","unit":"rpm","value":60}] (or @file)`},
		{flag: "expires-at", key: "expires_at", usage: "when the key stops working (RFC 3339)"},
		{flag: "alert-emails", key: "alert_emails", kind: listField, usage: "who is told of the key's alerts, comma-separated"},
	}
}

func (a *app) keysCmd() *cobra.Command {
	list := &cobra.Command{Use: "list", Short: "list API keys (masked)", Args: args(),
		RunE: action(func(cmd *cobra.Command, _ []string) error {
			q := listQuery(cmd, nil)
			if err := a.workspaceQuery(cmd.Context(), cmd, q); err != nil {
				return err
			}
			return a.get(cmd.Context(), "/api-keys", q, view{list: keyColumns})
		})}
	workspaceFlag(list, "only the keys of this workspace")
	pageFlags(list)

	get := &cobra.Command{Use: "get <key-id>", Short: "show an API key (masked)", Args: args("<key-id>"),
		RunE: action(func(cmd *cobra.Command, in []string) error {
			return a.get(cmd.Context(), "/api-keys/"+seg(in[0]), nil, keyView)
		})}

	create := &cobra.Command{Use: "create", Short: "create an API key; the key is printed this once", Args: args(),
		Long: `Creates an API key and prints it: this is the only time the key itself is shown; reads show
its prefix and last four characters. A workspace key (the default when a workspace is named)
is of --sub-type service or user; --type organisation makes an organisation service key.`}
	workspaceFlag(create, "the key's workspace")
	typ := create.Flags().String("type", "", "workspace (the default with --workspace) or organisation")
	sub := create.Flags().String("sub-type", "service", "service or user (a user key also needs --user-id)")
	createBody := withBody(create, append(keyFields(), field{flag: "user-id", key: "user_id", usage: "the user a user key acts for"})...)
	create.RunE = action(func(cmd *cobra.Command, _ []string) error {
		kind := *typ
		if kind == "" {
			if workspace(cmd) == "" && createBody.data == "" && createBody.file == "" {
				return usagef("%s needs --workspace for a workspace key, or --type organisation", cmd.CommandPath())
			}
			kind = "workspace"
		}
		set, err := a.workspaceBody(cmd.Context(), cmd)
		if err != nil {
			return err
		}
		body, err := createBody.build(a.opts.Stdin, set)
		if err != nil {
			return err
		}
		return a.call(cmd.Context(), http.MethodPost, "/api-keys/"+seg(kind)+"/"+seg(*sub), nil, body, a.secretView(keyShownOnce, "id", "key"))
	})

	update := &cobra.Command{Use: "update <key-id>", Short: "change an API key's name, scopes, limits or expiry", Args: args("<key-id>")}
	updateBody := withBody(update, append(keyFields(),
		field{flag: "reset-usage", key: "reset_usage", kind: boolField, usage: "start the key's usage again from zero"})...)
	update.RunE = action(func(cmd *cobra.Command, in []string) error {
		body, err := updateBody.build(a.opts.Stdin, nil)
		if err != nil {
			return err
		}
		return a.call(cmd.Context(), http.MethodPut, "/api-keys/"+seg(in[0]), nil, body, keyView)
	})

	rotate := &cobra.Command{Use: "rotate <key-id>", Short: "rotate an API key; the new key is printed this once", Args: args("<key-id>"),
		Long: `Rotates an API key: a new key replaces it, printed this once; the old one keeps working for the
transition period (--transition, at least 30m; the API's default when left out).`}
	transition := rotate.Flags().Duration("transition", 0, "how long the old key keeps working (at least 30m)")
	rotate.RunE = action(func(cmd *cobra.Command, in []string) error {
		var body []byte
		if flagChanged(cmd.Flags(), "transition") {
			body = fmt.Appendf(nil, `{"key_transition_period_ms":%d}`, transition.Milliseconds())
		}
		return a.call(cmd.Context(), http.MethodPost, "/api-keys/"+seg(in[0])+"/rotate", nil, body,
			a.secretView(keyShownOnce, "id", "key", "key_transition_expires_at"))
	})

	revoke := &cobra.Command{Use: "revoke <key-id>", Short: "revoke (delete) an API key", Args: args("<key-id>"),
		RunE: action(func(cmd *cobra.Command, in []string) error {
			return a.call(cmd.Context(), http.MethodDelete, "/api-keys/"+seg(in[0]), nil, nil, confirmed)
		})}

	return group("keys", "API keys: create, rotate, revoke", list, get, create, update, rotate, revoke)
}

// keyShownOnce is what a command that prints a new API key says on stderr.
const keyShownOnce = "The key is shown this once: store it now. Reads show only its masked form."

// secretView prints an answer that holds a new secret (fields, among them the secret), and
// says on stderr, in note, that it is shown once.
func (a *app) secretView(note string, fields ...string) view {
	shown := done(fields...)
	return view{custom: func(w io.Writer, doc any) error {
		if err := shown.custom(w, doc); err != nil {
			return err
		}
		fmt.Fprintln(a.opts.Stderr, note)
		return nil
	}}
}
