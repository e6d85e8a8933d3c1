package cli

import (
	"net/http"

	"github.com/spf13/cobra"
)

var (
	webhookColumns = []column{col("ID", "id"), col("NAME", "name"), col("URL", "url"), col("KINDS", "kinds"),
		col("WORKSPACE", "workspace_id"), col("DISABLED", "disabled"), col("STATUS", "status"), col("SECRET ROTATED", "secret_rotated_at")}
	webhookView = view{object: []column{col("id", "id"), col("name", "name"), col("url", "url"), col("kinds", "kinds"),
		col("workspace_id", "workspace_id"), col("disabled", "disabled"), col("status", "status"),
		col("secret_rotated_at", "secret_rotated_at"), col("created_by", "created_by"), col("updated_by", "updated_by"),
		col("created_at", "created_at"), col("last_updated_at", "last_updated_at")}}
)

// webhookSecretShownOnce is what a command that prints a webhook's new signing secret says
// on stderr.
const webhookSecretShownOnce = "The signing secret is shown this once: store it now. No read shows it; rotate-secret makes a new one."

// webhookFields are the flags of a webhook's fields, for create and update.
func webhookFields() []field {
	return []field{
		{flag: "name", key: "name", usage: "the webhook's name"},
		// Not --url, which names the admin API.
		{flag: "hook-url", key: "url", usage: "the URL notifications are posted to (checked by the egress guard)"},
		{flag: "kinds", key: "kinds", kind: listField,
			usage: "the notification kinds it receives, comma-separated (e.g. api_key.rotated,usage.exhausted); none: every kind"},
		{flag: "disabled", key: "disabled", kind: boolField, usage: "receive nothing for now (=false: again)"},
	}
}

func (a *app) webhooksCmd() *cobra.Command {
	list := &cobra.Command{Use: "list", Short: "list webhooks (never their secrets)", Args: args(),
		RunE: action(func(cmd *cobra.Command, _ []string) error {
			q := listQuery(cmd, map[string]string{"status": "status"})
			if err := a.workspaceQuery(cmd.Context(), cmd, q); err != nil {
				return err
			}
			return a.get(cmd.Context(), "/webhooks", q, view{list: webhookColumns})
		})}
	workspaceFlag(list, "only the webhooks of this workspace")
	pageFlags(list)
	statusFlag(list)

	get := &cobra.Command{Use: "get <webhook-id>", Short: "show a webhook (never its secret)", Args: args("<webhook-id>"),
		RunE: action(func(cmd *cobra.Command, in []string) error {
			return a.get(cmd.Context(), "/webhooks/"+seg(in[0]), listQuery(cmd, map[string]string{"status": "status"}), webhookView)
		})}
	statusFlag(get)

	secretFields := []string{"id", "name", "url", "kinds", "workspace_id", "status", "secret"}
	create := &cobra.Command{Use: "create", Short: "create a webhook; its signing secret is printed this once", Args: args(),
		Long: `Creates a webhook that notifications are posted to, signed as Standard Webhooks says, and
prints its signing secret (whsec_...): this is the only time it is shown, until rotate-secret
makes a new one. With --workspace it receives only that workspace's notifications.`}
	workspaceFlag(create, "receive only this workspace's notifications")
	createBody := withBody(create, webhookFields()...)
	create.RunE = action(func(cmd *cobra.Command, _ []string) error {
		set, err := a.workspaceBody(cmd.Context(), cmd)
		if err != nil {
			return err
		}
		body, err := createBody.build(a.opts.Stdin, set)
		if err != nil {
			return err
		}
		return a.call(cmd.Context(), http.MethodPost, "/webhooks", nil, body, a.secretView(webhookSecretShownOnce, secretFields...))
	})

	update := &cobra.Command{Use: "update <webhook-id>", Short: "change a webhook's name, URL, kinds or whether it is disabled",
		Args: args("<webhook-id>")}
	updateBody := withBody(update, webhookFields()...)
	update.RunE = action(func(cmd *cobra.Command, in []string) error {
		body, err := updateBody.build(a.opts.Stdin, nil)
		if err != nil {
			return err
		}
		return a.call(cmd.Context(), http.MethodPut, "/webhooks/"+seg(in[0]), nil, body, webhookView)
	})

	del := &cobra.Command{Use: "delete <webhook-id>", Aliases: []string{"archive"}, Short: "delete (archive) a webhook",
		Args: args("<webhook-id>"),
		RunE: action(func(cmd *cobra.Command, in []string) error {
			return a.call(cmd.Context(), http.MethodDelete, "/webhooks/"+seg(in[0]), nil, nil, confirmed)
		})}

	rotate := &cobra.Command{Use: "rotate-secret <webhook-id>", Short: "give a webhook a new signing secret, printed this once",
		Long: `Replaces a webhook's signing secret and prints the new one, this once; calls made from now on
are signed with it alone.`, Args: args("<webhook-id>"),
		RunE: action(func(cmd *cobra.Command, in []string) error {
			return a.call(cmd.Context(), http.MethodPost, "/webhooks/"+seg(in[0])+"/rotate-secret", nil, nil,
				a.secretView(webhookSecretShownOnce, secretFields...))
		})}

	return group("webhooks", "webhooks: where notifications are posted, signed", list, get, create, update, del, rotate)
}
