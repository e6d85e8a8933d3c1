package cli

import (
	"context"
	"encoding/json"
	"net/url"
	"strings"
	"time"

	"github.com/spf13/cobra"
)

// trafficFilters adds the filters the request-log routes (logs, analytics) take.
func trafficFilters(cmd *cobra.Command) {
	fs := cmd.Flags()
	fs.Duration("since", 0, "only requests of this last while, e.g. 15m or 24h (the API's default: 7 days)")
	fs.String("from", "", "only requests from this instant (RFC 3339)")
	fs.String("to", "", "only requests before this instant (RFC 3339)")
	cmd.MarkFlagsMutuallyExclusive("since", "from")
	workspaceFlag(cmd, "only requests of this workspace")
	fs.StringSlice("model", nil, "only requests for these models (repeat or comma-separate)")
	fs.StringSlice("status", nil, "only requests answered with these HTTP statuses, e.g. 200,429")
	fs.StringArray("metadata", nil, "only requests whose metadata holds key=value (repeat for several)")
	fs.StringSlice("provider", nil, "only requests through these managed providers (slugs)")
	fs.StringSlice("config", nil, "only requests routed by these saved configs (slugs or ids)")
	fs.StringSlice("key-id", nil, "only requests of these API keys (ids)")
	fs.String("trace-id", "", "only the requests of this trace")
	fs.StringSlice("prompt", nil, "only requests that ran these prompts (slugs or ids)")
}

// trafficQuery is the query of the traffic filters given; now is the instant --since counts
// back from.
func (a *app) trafficQuery(ctx context.Context, cmd *cobra.Command, now time.Time) (url.Values, error) {
	fs := cmd.Flags()
	q := url.Values{}
	if flagChanged(fs, "since") {
		since, _ := fs.GetDuration("since")
		if since <= 0 {
			return nil, usagef("--since must be a positive duration, such as 15m (got %s)", since)
		}
		q.Set("time_of_generation_min", now.Add(-since).UTC().Format(time.RFC3339Nano))
	}
	for flag, param := range map[string]string{"from": "time_of_generation_min", "to": "time_of_generation_max"} {
		v, _ := fs.GetString(flag)
		if v == "" {
			continue
		}
		if _, err := time.Parse(time.RFC3339Nano, v); err != nil {
			return nil, usagef("--%s must be an RFC 3339 time, such as 2026-01-02T15:04:05Z (got %q)", flag, v)
		}
		q.Set(param, v)
	}
	slug, err := a.workspaceSlug(ctx, workspace(cmd))
	if err != nil {
		return nil, err
	}
	if slug != "" {
		q.Set("workspace_slug", slug)
	}
	for flag, param := range map[string]string{"model": "models", "status": "status_code", "provider": "providers",
		"config": "configs", "key-id": "api_key_ids", "prompt": "prompt_slug"} {
		if vals, _ := fs.GetStringSlice(flag); len(vals) > 0 {
			q.Set(param, strings.Join(vals, ","))
		}
	}
	if pairs, _ := fs.GetStringArray("metadata"); len(pairs) > 0 {
		meta := map[string]string{}
		for _, p := range pairs {
			k, v, ok := strings.Cut(p, "=")
			if !ok || strings.TrimSpace(k) == "" {
				return nil, usagef("--metadata takes key=value (got %q)", p)
			}
			meta[strings.TrimSpace(k)] = v
		}
		raw, _ := json.Marshal(meta)
		q.Set("metadata", string(raw))
	}
	stringQuery(cmd, q, "trace-id", "trace_id")
	return q, nil
}
