package cli

import (
	"net/http"
	"net/url"

	"github.com/spf13/cobra"
)

func (a *app) cacheCmd() *cobra.Command {
	purge := &cobra.Command{Use: "purge", Short: "delete a workspace's cached answers, of one namespace", Args: args(),
		Long: `Deletes the answer cache's entries of a workspace in one namespace: the default one (requests
that send no x-gateway-cache-namespace) unless --namespace names another. Prints how many
entries were deleted.`,
		RunE: action(func(cmd *cobra.Command, _ []string) error {
			ws := workspace(cmd)
			if ws == "" {
				return usagef("%s needs --workspace", cmd.CommandPath())
			}
			// The route takes the workspace's id or slug as it is.
			q := url.Values{}
			stringQuery(cmd, q, "namespace", "namespace")
			return a.call(cmd.Context(), http.MethodDelete, "/workspaces/"+seg(ws)+"/cache", q, nil,
				done("workspace_id", "namespace", "deleted"))
		})}
	workspaceFlag(purge, "the workspace whose cache is purged")
	purge.Flags().String("namespace", "", "the namespace to purge (x-gateway-cache-namespace); the default one when left out")

	return group("cache", "the answer cache: purge", purge)
}
