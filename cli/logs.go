package cli

import (
	"time"

	"github.com/spf13/cobra"
)

var (
	logColumns = []column{col("TIME", "created_at"), col("STATUS", "metrics.response_status_code"),
		col("MODEL", "metrics.ai_model"), col("PROVIDER", "metrics.ai_org"), col("TOKENS", "metrics.total_units"),
		col("COST", "metrics.cost"), col("LATENCY MS", "metrics.response_time"), col("WORKSPACE", "metrics.workspace_slug"),
		col("ID", "_id")}
	logView = view{object: []column{col("id", "_id"), col("created_at", "created_at"),
		col("status", "metrics.response_status_code"), col("ai_org", "metrics.ai_org"), col("model", "metrics.ai_model"),
		col("provider", "metrics.provider"), col("endpoint", "metrics.endpoint"), col("workspace", "metrics.workspace_slug"),
		col("api_key_id", "metrics.api_key_id"), col("config_id", "metrics.config_id"),
		col("prompt_id", "metrics.prompt_id"), col("prompt_version", "metrics.prompt_version"),
		col("prompt_label", "metrics.prompt_label"),
		col("prompt_tokens", "metrics.req_units"), col("completion_tokens", "metrics.res_units"),
		col("total_tokens", "metrics.total_units"), col("cost", "metrics.cost"), col("latency_ms", "metrics.response_time"),
		col("cache_status", "metrics.cache_status"), col("retry_count", "metrics.retry_count"),
		col("trace_id", "metrics.trace_id"), col("metadata", "metrics.metadata"), col("error", "metrics.error"),
		col("provenance", "provenance"), col("request", "request.body"), col("response", "response.body")}}
)

func (a *app) logsCmd() *cobra.Command {
	list := &cobra.Command{Use: "list", Short: "list request logs, newest first", Args: args(),
		RunE: action(func(cmd *cobra.Command, _ []string) error {
			q, err := a.trafficQuery(cmd.Context(), cmd, time.Now())
			if err != nil {
				return err
			}
			pageQuery(cmd, q)
			return a.get(cmd.Context(), "/logs", q, view{list: logColumns})
		})}
	trafficFilters(list)
	pageFlags(list)

	get := &cobra.Command{Use: "get <log-id>", Short: "show one request log, with its bodies", Args: args("<log-id>"),
		RunE: action(func(cmd *cobra.Command, in []string) error {
			return a.get(cmd.Context(), "/logs/"+seg(in[0]), nil, logView)
		})}

	return group("logs", "request logs: list, get, tail", list, get, a.tailCmd())
}
