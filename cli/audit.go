package cli

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/spf13/cobra"
)

var (
	auditColumns = []column{col("TIME", "timestamp"), col("ACTION", "action"), col("RESOURCE", "resource_type"),
		col("RESOURCE ID", "resource_id"), col("BY", "user_type"), col("ACTOR ID", "user_id"), col("STATUS", "response_status_code"),
		col("ID", "id")}
	auditView = view{object: []column{col("id", "id"), col("timestamp", "timestamp"), col("action", "action"),
		col("resource_type", "resource_type"), col("resource_id", "resource_id"), col("user_type", "user_type"),
		col("user_id", "user_id"), col("workspace_id", "workspace_id"), col("method", "method"), col("uri", "uri"),
		col("response_status_code", "response_status_code"), col("request_id", "request_id"),
		col("client_ip", "client_ip"), col("details", "details"), col("before", "before"), col("after", "after")}}
)

func (a *app) auditCmd() *cobra.Command {
	list := &cobra.Command{Use: "list", Short: "list the audit log: every change, who made it, and refused attempts", Args: args(),
		RunE: action(func(cmd *cobra.Command, _ []string) error {
			q := listQuery(cmd, map[string]string{"from": "start_time", "to": "end_time", "actor": "user_id",
				"actor-type": "user_type", "resource-type": "resource_type", "resource-id": "resource_id",
				"action": "action", "method": "method", "status": "response_status_code", "request-id": "request_id",
				"client-ip": "client_ip", "order": "order"})
			if flagChanged(cmd.Flags(), "since") {
				since, _ := cmd.Flags().GetDuration("since")
				if since <= 0 {
					return usagef("--since must be a positive duration, such as 1h (got %s)", since)
				}
				q.Set("start_time", time.Now().Add(-since).UTC().Format(time.RFC3339Nano))
			}
			if err := a.workspaceQuery(cmd.Context(), cmd, q); err != nil {
				return err
			}
			return a.get(cmd.Context(), "/audit-logs", q, view{list: auditColumns})
		})}
	fs := list.Flags()
	pageFlags(list)
	workspaceFlag(list, "only changes in this workspace")
	fs.Duration("since", 0, "only records of this last while, e.g. 1h")
	fs.String("from", "", "only records from this instant (RFC 3339)")
	fs.String("to", "", "only records up to this instant (RFC 3339)")
	list.MarkFlagsMutuallyExclusive("since", "from")
	fs.String("actor", "", "only what this user or API key (id) did")
	fs.String("actor-type", "", "only what actors of this type did: user, api_key or system")
	fs.String("resource-type", "", "only changes of this resource type, e.g. api_key, workspace, rate_limit_policy")
	fs.String("resource-id", "", "only changes of this resource")
	fs.String("action", "", "only this action (an event type, e.g. ApiKeyCreated)")
	fs.String("method", "", "only requests of this HTTP method")
	fs.String("status", "", "only requests answered with this HTTP status (refusals are recorded too)")
	fs.String("request-id", "", "only the records of this request")
	fs.String("client-ip", "", "only requests from this address")
	fs.String("order", "", "desc (newest first, the default) or asc")

	get := &cobra.Command{Use: "get <record-id>", Short: "show one audit record with the state before and after", Args: args("<record-id>"),
		RunE: action(func(cmd *cobra.Command, in []string) error {
			return a.get(cmd.Context(), "/audit-logs/"+seg(in[0]), nil, auditView)
		})}

	return group("audit", "the audit log", list, get)
}

// errUnhealthy ends `causeway health` with exit code 1 when a backend is down.
var errUnhealthy = errors.New("a backend is down")

func (a *app) healthCmd() *cobra.Command {
	return &cobra.Command{Use: "health", Short: "the status of each backend (exit code 1 unless all are up)", Args: args(),
		RunE: action(func(cmd *cobra.Command, _ []string) error {
			raw, err := a.api.do(cmd.Context(), http.MethodGet, "/health", nil, nil)
			if err != nil {
				return err
			}
			if err := a.print(raw, view{custom: writeHealth}); err != nil {
				return err
			}
			doc, err := decode(raw)
			if err != nil {
				return err
			}
			if status := text(lookup(doc, "status")); status != "ok" {
				return fmt.Errorf("%w: status %s", errUnhealthy, status)
			}
			return nil
		})}
}

// writeHealth prints the status, then each check.
func writeHealth(w io.Writer, doc any) error {
	if err := writeObject(w, []column{col("status", "status"), col("version", "version"),
		col("uptime_seconds", "uptime_seconds")}, doc); err != nil {
		return err
	}
	checks, _ := lookup(doc, "checks").(map[string]any)
	var rows []any
	for _, name := range keysOf(checks) {
		c, _ := checks[name].(map[string]any)
		row := map[string]any{"name": name}
		for k, v := range c {
			row[k] = v
		}
		rows = append(rows, row)
	}
	fmt.Fprintln(w)
	return writeTable(w, []column{col("CHECK", "name"), col("STATUS", "status"), col("BACKEND", "backend"),
		col("LATENCY MS", "latency_ms"), col("ERROR", "error")}, rows)
}
