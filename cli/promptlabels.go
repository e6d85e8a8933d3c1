package cli

import (
	"net/http"

	"github.com/spf13/cobra"
)

var (
	labelColumns = []column{col("ID", "id"), col("NAME", "name"), col("DESCRIPTION", "description"), col("COLOR", "color_code"),
		col("WORKSPACE", "workspace_id"), col("UNIVERSAL", "is_universal"), col("STATUS", "status")}
	labelView = view{object: []column{col("id", "id"), col("name", "name"), col("description", "description"),
		col("color_code", "color_code"), col("workspace_id", "workspace_id"), col("is_universal", "is_universal"),
		col("status", "status"), col("created_at", "created_at"), col("last_updated_at", "last_updated_at")}}
)

func labelFields() []field {
	return []field{
		{flag: "name", key: "name", usage: "the label's name, unique in the organisation (not latest, default or a number)"},
		{flag: "description", key: "description", usage: "what the label marks"},
		{flag: "color", key: "color_code", usage: "its colour, e.g. #1f883d"},
	}
}

// labelsCmd is `labels`: names that point at a version of a prompt or partial (production,
// staging), served as <prompt>@<label>.
func (a *app) labelsCmd() *cobra.Command {
	list := &cobra.Command{Use: "list", Short: "list labels: the organisation's, and with --workspace also that workspace's", Args: args(),
		RunE: action(func(cmd *cobra.Command, _ []string) error {
			return a.get(cmd.Context(), "/labels", promptListQuery(cmd), view{list: labelColumns})
		})}
	promptListFlags(list, "labels", false)
	pageFlags(list)

	get := &cobra.Command{Use: "get <label>", Short: "show a label (by id or name)", Args: args("<label>"),
		RunE: action(func(cmd *cobra.Command, in []string) error {
			return a.get(cmd.Context(), "/labels/"+seg(in[0]), nil, labelView)
		})}

	create := &cobra.Command{Use: "create", Short: "create a label: an organisation's (every workspace may use it), or with --workspace a workspace's",
		Args: args()}
	workspaceFlag(create, "the label's workspace; left out: the organisation's")
	createBody := withBody(create, labelFields()...)
	create.RunE = action(func(cmd *cobra.Command, _ []string) error {
		body, err := createBody.build(a.opts.Stdin, workspaceRefBody(cmd))
		if err != nil {
			return err
		}
		return a.call(cmd.Context(), http.MethodPost, "/labels", nil, body, confirmed)
	})

	update := &cobra.Command{Use: "update <label>", Short: "change a label's name, description or colour", Args: args("<label>")}
	updateBody := withBody(update, labelFields()...)
	update.RunE = action(func(cmd *cobra.Command, in []string) error {
		body, err := updateBody.build(a.opts.Stdin, nil)
		if err != nil {
			return err
		}
		return a.call(cmd.Context(), http.MethodPut, "/labels/"+seg(in[0]), nil, body, said("label %s updated", in[0]))
	})

	del := &cobra.Command{Use: "delete <label>", Aliases: []string{"archive"}, Short: "delete (archive) a label", Args: args("<label>"),
		RunE: action(func(cmd *cobra.Command, in []string) error {
			return a.call(cmd.Context(), http.MethodDelete, "/labels/"+seg(in[0]), nil, nil, said("label %s archived", in[0]))
		})}

	return group("labels", "prompt labels: names for a version (production, staging), served as <prompt>@<label>",
		list, get, create, update, del)
}
