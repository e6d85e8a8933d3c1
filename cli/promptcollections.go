package cli

import (
	"net/http"
	"net/url"

	"github.com/spf13/cobra"
)

var (
	collectionColumns = []column{col("ID", "id"), col("SLUG", "slug"), col("NAME", "name"), col("WORKSPACE", "workspace_id"),
		col("PARENT", "parent_collection_id"), col("DEFAULT", "is_default"), col("PROMPTS", "collection_details.prompts_count"),
		col("CHILDREN", "collection_details.child_collections_count"), col("STATUS", "status")}
	collectionView = view{object: []column{col("id", "id"), col("slug", "slug"), col("name", "name"),
		col("workspace_id", "workspace_id"), col("parent_collection_id", "parent_collection_id"), col("is_default", "is_default"),
		col("status", "status"), col("prompts", "collection_details.prompts_count"),
		col("prompts_last_updated_at", "collection_details.prompts_last_updated_at"),
		{head: "child_collections", path: "child_collections", format: childNames},
		col("created_at", "created_at"), col("last_updated_at", "last_updated_at")}}
)

// childNames writes a collection's children by name and id.
func childNames(v any) string {
	children, _ := v.([]any)
	if len(children) == 0 {
		return "-"
	}
	var names []any
	for _, c := range children {
		names = append(names, text(lookup(c, "name"))+" ("+text(lookup(c, "id"))+")")
	}
	return text(names)
}

// collectionsCmd is `collections`: where a workspace's prompts are filed.
func (a *app) collectionsCmd() *cobra.Command {
	// query names a collection's workspace, which a slug needs (slugs are unique in a
	// workspace); sent as it is given.
	query := func(cmd *cobra.Command) url.Values {
		q := url.Values{}
		if ws := workspace(cmd); ws != "" {
			q.Set("workspace_id", ws)
		}
		return q
	}
	const slugWorkspace = "the collection's workspace, when it is named by its slug"

	list := &cobra.Command{Use: "list", Short: "list prompt collections", Args: args(),
		RunE: action(func(cmd *cobra.Command, _ []string) error {
			return a.get(cmd.Context(), "/collections", promptListQuery(cmd), view{list: collectionColumns})
		})}
	promptListFlags(list, "collections", false)
	pageFlags(list)

	get := &cobra.Command{Use: "get <collection>", Short: "show a collection (by id or slug) and its child collections",
		Args: args("<collection>"),
		RunE: action(func(cmd *cobra.Command, in []string) error {
			return a.get(cmd.Context(), "/collections/"+seg(in[0]), query(cmd), collectionView)
		})}
	workspaceFlag(get, slugWorkspace)

	create := &cobra.Command{Use: "create", Short: "create a collection (--parent nests it in another)", Args: args()}
	workspaceFlag(create, "the collection's workspace")
	createBody := withBody(create,
		field{flag: "name", key: "name", usage: "the collection's name"},
		field{flag: "slug", key: "slug", usage: "the collection's slug, unique in its workspace (made from the name when left out)"},
		field{flag: "parent", key: "parent_collection_id", usage: "the collection it is nested in (id or slug)"})
	create.RunE = action(func(cmd *cobra.Command, _ []string) error {
		body, err := createBody.build(a.opts.Stdin, workspaceRefBody(cmd))
		if err != nil {
			return err
		}
		return a.call(cmd.Context(), http.MethodPost, "/collections", nil, body, confirmed)
	})

	update := &cobra.Command{Use: "update <collection>", Short: "rename a collection", Args: args("<collection>")}
	workspaceFlag(update, slugWorkspace)
	updateBody := withBody(update, field{flag: "name", key: "name", usage: "the collection's new name"})
	update.RunE = action(func(cmd *cobra.Command, in []string) error {
		body, err := updateBody.build(a.opts.Stdin, nil)
		if err != nil {
			return err
		}
		return a.call(cmd.Context(), http.MethodPut, "/collections/"+seg(in[0]), query(cmd), body, said("collection %s updated", in[0]))
	})

	del := &cobra.Command{Use: "delete <collection>", Aliases: []string{"archive"},
		Short: "delete (archive) a collection; one that holds anything live, or a default one, is not", Args: args("<collection>"),
		RunE: action(func(cmd *cobra.Command, in []string) error {
			return a.call(cmd.Context(), http.MethodDelete, "/collections/"+seg(in[0]), query(cmd), nil, said("collection %s archived", in[0]))
		})}
	workspaceFlag(del, slugWorkspace)

	return group("collections", "prompt collections: where a workspace's prompts are filed", list, get, create, update, del)
}
