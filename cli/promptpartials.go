package cli

import (
	"net/http"

	"github.com/spf13/cobra"
)

var (
	partialColumns = []column{col("ID", "id"), col("SLUG", "slug"), col("NAME", "name"), col("COLLECTION", "collection_id"),
		col("WORKSPACE", "workspace_id"), col("STATUS", "status"), col("UPDATED", "last_updated_at")}
	partialView = view{object: []column{col("id", "id"), col("slug", "slug"), col("name", "name"),
		col("collection_id", "collection_id"), col("workspace_id", "workspace_id"), col("status", "status"),
		col("default_version", "default_version"), col("version", "version"), col("version_id", "prompt_partial_version_id"),
		col("version_description", "version_description"), col("string", "string"), col("created_at", "created_at"),
		col("last_updated_at", "last_updated_at")}}
	partialVersionColumns = []column{col("VERSION", "version"), col("DEFAULT", "is_default"), col("LABEL", "label_id"),
		col("DESCRIPTION", "description"), col("CREATED", "created_at"), col("ID", "prompt_partial_version_id")}
)

// partialsCmd is `prompts partials`: templates that prompts include as {{> slug}}.
func (a *app) partialsCmd() *cobra.Command {
	list := &cobra.Command{Use: "list", Short: "list prompt partials", Args: args(),
		RunE: action(func(cmd *cobra.Command, _ []string) error {
			return a.get(cmd.Context(), "/prompts/partials", promptListQuery(cmd), view{list: partialColumns})
		})}
	promptListFlags(list, "partials", true)
	statusFlag(list)

	get := &cobra.Command{Use: "get <partial>", Short: "show a partial in its default version", Args: args("<partial>"),
		RunE: action(func(cmd *cobra.Command, in []string) error {
			return a.get(cmd.Context(), "/prompts/partials/"+seg(in[0]), listQuery(cmd, map[string]string{"status": "status"}), partialView)
		})}
	statusFlag(get)

	create := &cobra.Command{Use: "create", Short: "create a partial (filed in its workspace's default collection)", Args: args()}
	workspaceFlag(create, "the partial's workspace")
	createBody := withBody(create,
		field{flag: "name", key: "name", usage: "the partial's name"},
		field{flag: "slug", key: "slug", usage: "the partial's slug, which templates include as {{> slug}} (made from the name when left out)"},
		field{flag: "string", key: "string", kind: longTextField, usage: "the partial's template (Mustache, or @file)"},
		field{flag: "version-description", key: "version_description", usage: "what the version is"})
	create.RunE = action(func(cmd *cobra.Command, _ []string) error {
		body, err := createBody.build(a.opts.Stdin, workspaceRefBody(cmd))
		if err != nil {
			return err
		}
		return a.call(cmd.Context(), http.MethodPost, "/prompts/partials", nil, body, confirmed)
	})

	update := &cobra.Command{Use: "update <partial>", Short: "change a partial: a new --string is a new version", Args: args("<partial>")}
	updateBody := withBody(update,
		field{flag: "name", key: "name", usage: "the partial's name"},
		field{flag: "string", key: "string", kind: longTextField, usage: "the template (or @file): a new version, served once it is the default"},
		field{flag: "version-description", key: "version_description", usage: "what the new version changes"})
	update.RunE = action(func(cmd *cobra.Command, in []string) error {
		body, err := updateBody.build(a.opts.Stdin, nil)
		if err != nil {
			return err
		}
		return a.call(cmd.Context(), http.MethodPut, "/prompts/partials/"+seg(in[0]), nil, body, done("prompt_partial_version_id"))
	})

	del := &cobra.Command{Use: "delete <partial>", Aliases: []string{"archive"}, Short: "delete (archive) a partial", Args: args("<partial>"),
		RunE: action(func(cmd *cobra.Command, in []string) error {
			return a.call(cmd.Context(), http.MethodDelete, "/prompts/partials/"+seg(in[0]), nil, nil, said("partial %s archived", in[0]))
		})}

	versions := &cobra.Command{Use: "versions <partial>", Short: "list a partial's versions, newest first", Args: args("<partial>"),
		RunE: action(func(cmd *cobra.Command, in []string) error {
			return a.get(cmd.Context(), "/prompts/partials/"+seg(in[0])+"/versions", nil, view{list: partialVersionColumns})
		})}

	v := versioned{name: "partial", path: "/prompts/partials"}
	return group("partials", "prompt partials: templates that prompts include as {{> slug}}",
		append([]*cobra.Command{list, get, create, update, del, versions, v.makeDefaultCmd(a)}, v.labelCmds(a)...)...)
}
