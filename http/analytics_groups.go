package httpapi

import (
	"cmp"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gorilla/mux"

	"github.com/causeway/causeway/analytics"
	"github.com/causeway/causeway/domain"
)

// trafficPage reads current_page (0-based) and page_size, also spelled currentPage and
// pageSize, as page() does, bounded by what the store pages.
func trafficPage(r *http.Request) (int, int, error) {
	q := r.URL.Query()
	num := func(names []string, def, max int) (int, error) {
		for _, n := range names {
			if v := q.Get(n); v != "" {
				i, err := strconv.Atoi(v)
				if err != nil || i < 0 || i > max {
					return 0, domain.Invalid(n, "%s must be a whole number from 0 to %d", n, max)
				}
				return i, nil
			}
		}
		return def, nil
	}
	size, err := num([]string{"page_size", "pageSize"}, analytics.DefaultPageSize, analytics.MaxPageSize)
	if err != nil {
		return 0, 0, err
	}
	if size == 0 {
		size = analytics.DefaultPageSize
	}
	cur, err := num([]string{"current_page", "currentPage"}, 0, 1_000_000)
	return cur, size, err
}

// groupByAliases are the other spellings of the groupings: the fields a log answers each
// under (metrics.ai_org, response_status_code, api_key_id...), and plurals.
var groupByAliases = map[string]string{
	"ai_org": analytics.GroupAIService, "ai_orgs": analytics.GroupAIService, "ai_services": analytics.GroupAIService,
	"ai_model": analytics.GroupModel, "ai_models": analytics.GroupModel, "ai-models": analytics.GroupModel, "models": analytics.GroupModel,
	"response_status_code": analytics.GroupStatusCode, "status": analytics.GroupStatusCode, "status_codes": analytics.GroupStatusCode,
	"api_key_id": analytics.GroupAPIKey, "api_keys": analytics.GroupAPIKey, "api_key_ids": analytics.GroupAPIKey,
	"config_id": analytics.GroupConfig, "configs": analytics.GroupConfig,
	"workspace_id": analytics.GroupWorkspace, "workspace_slug": analytics.GroupWorkspace, "workspaces": analytics.GroupWorkspace,
	"providers": analytics.GroupProvider, "virtual_key": analytics.GroupProvider, "virtual_keys": analytics.GroupProvider,
	"prompt_id": analytics.GroupPrompt, "prompt_slug": analytics.GroupPrompt, "prompts": analytics.GroupPrompt,
}

// groupBy reads the path's groupBy in any of its spellings (any case), refusing an unknown
// one with the list of groupings.
func groupBy(raw string) (string, error) {
	name := strings.ToLower(strings.TrimSpace(raw))
	if alias, ok := groupByAliases[name]; ok {
		name = alias
	}
	if !slices.Contains(analytics.GroupBys, name) {
		return "", domain.Invalid("groupBy", "groupBy must be one of %s (got %q)", strings.Join(analytics.GroupBys, ", "), raw)
	}
	return name, nil
}

// columnAliases are the other spellings of the columns: the names the summary and logs answer
// the same figures under.
var columnAliases = map[string]string{
	"errors": analytics.ColErrorCount, "total_units": analytics.ColTotalTokens, "avg_units": analytics.ColAvgTokens,
	"avg_prompt_tokens": analytics.ColAvgInputTokens, "avg_completion_tokens": analytics.ColAvgOutputTokens,
}

// column reads a column name in any of its spellings (any case): requests or one of the
// thirteen; false for an unknown one.
func column(raw string) (string, bool) {
	name := strings.ToLower(strings.TrimSpace(raw))
	if alias, ok := columnAliases[name]; ok {
		name = alias
	}
	return name, name == analytics.ColRequests || slices.Contains(analytics.Columns, name)
}

// groupColumns reads columns (comma-separated or repeated) from the thirteen, after the fixed
// columns of a route (nil for none); requests is always answered, so asking for it is allowed
// and changes nothing, and so is asking for a column twice.
func groupColumns(r *http.Request, fixed []string) ([]string, error) {
	cols := slices.Clone(fixed)
	for _, raw := range queryList(r.URL.Query(), "columns") {
		c, ok := column(raw)
		if !ok {
			return nil, domain.Invalid("columns", "columns must be taken from %s (got %q)", strings.Join(analytics.Columns, ", "), raw)
		}
		if c != analytics.ColRequests && !slices.Contains(cols, c) {
			cols = append(cols, c)
		}
	}
	return cols, nil
}

// groupOrder reads order_by (requests or an answered column; default requests) and
// order_by_type (asc or desc; default desc), the reference's names.
func groupOrder(r *http.Request, cols []string) (string, bool, error) {
	q := r.URL.Query()
	by := analytics.ColRequests
	if raw := strings.TrimSpace(q.Get("order_by")); raw != "" {
		c, ok := column(raw)
		if !ok || c != analytics.ColRequests && !slices.Contains(cols, c) {
			return "", false, domain.Invalid("order_by", "order_by must be one of %s: requests or a column answered (got %q)",
				strings.Join(append([]string{analytics.ColRequests}, cols...), ", "), raw)
		}
		by = c
	}
	switch dir := strings.ToLower(strings.TrimSpace(q.Get("order_by_type"))); dir {
	case "", "desc":
		return by, true, nil
	case "asc":
		return by, false, nil
	default:
		return "", false, domain.Invalid("order_by_type", "order_by_type must be asc or desc (got %q)", dir)
	}
}

// groupRoute is one groups route: the grouping (empty: the path's {groupBy}), the field its
// key is answered under (empty: the grouping's name), and the columns it always answers (the
// reference's fields), before those the columns query adds.
type groupRoute struct {
	groupBy string
	key     string
	cols    []string
}

// groups answers a groups query of the route.
func (a *Admin) groups(v trafficView, route groupRoute) handler {
	return func(w http.ResponseWriter, r *http.Request) (int, any, error) {
		store, actor, err := a.trafficStore(r, v)
		if err != nil {
			return 0, nil, err
		}
		q := analytics.GroupsQuery{GroupBy: route.groupBy}
		if q.GroupBy == "" {
			if q.GroupBy, err = groupBy(mux.Vars(r)["groupBy"]); err != nil {
				return 0, nil, err
			}
		}
		if q.GroupBy == analytics.GroupMetadata {
			q.MetadataKey = mux.Vars(r)["metadataKey"]
			if err := domain.ValidateName("metadataKey", q.MetadataKey, true); err != nil {
				return 0, nil, err
			}
		}
		key := cmp.Or(route.key, q.GroupBy)
		if q.Filter, err = a.trafficFilter(r, actor, v); err != nil {
			return 0, nil, err
		}
		if q.Columns, err = groupColumns(r, route.cols); err != nil {
			return 0, nil, err
		}
		if q.SortBy, q.SortDesc, err = groupOrder(r, q.Columns); err != nil {
			return 0, nil, err
		}
		if q.Page, q.PageSize, err = trafficPage(r); err != nil {
			return 0, nil, err
		}
		res, err := store.Groups(r.Context(), q)
		if err != nil {
			return 0, nil, err
		}
		data := make([]map[string]any, 0, len(res.Groups))
		for _, g := range res.Groups {
			item := groupItem(g, q.Columns)
			item[key] = groupKey(q.GroupBy, g.Key)
			if q.GroupBy == analytics.GroupWorkspace {
				slug, err := a.reads().WorkspaceSlug(r.Context(), actor.OrganisationID, g.Key)
				if err != nil {
					return 0, nil, err
				}
				item["workspace_slug"] = slug
			}
			if q.GroupBy == analytics.GroupPrompt && g.Key != "" {
				// The slug the prompt holds now ("" once it is deleted), as rows record its id.
				p, found, err := a.Read.Prompt(r.Context(), actor.OrganisationID, g.Key)
				if err != nil {
					return 0, nil, err
				}
				item["prompt_slug"] = ""
				if found && p.Exists() {
					item["prompt_slug"] = p.Slug
				}
			}
			data = append(data, item)
		}
		return http.StatusOK, listAnswer[map[string]any]{Object: "list", Total: res.Total, CurrentPage: q.Page, PageSize: q.PageSize, Data: data}, nil
	}
}

// groupItem is one group's answer: requests and the asked columns, cost as money (USD, 10
// decimal places), latencies in milliseconds, rates as shares in [0, 1], last_seen and
// first_seen as RFC 3339 times.
func groupItem(g analytics.Group, cols []string) map[string]any {
	item := map[string]any{"object": "analytics-group", "requests": g.Requests}
	for _, c := range cols {
		v := g.Values[c]
		switch c {
		case analytics.ColLastSeen, analytics.ColFirstSeen:
			item[c] = time.UnixMilli(int64(v)).UTC()
		case analytics.ColCost:
			item[c] = amount(v)
		default:
			item[c] = v
		}
	}
	return item
}

// groupKey is a group's key as JSON: status codes are numbers.
func groupKey(groupBy, key string) any {
	if groupBy == analytics.GroupStatusCode {
		if n, err := strconv.Atoi(key); err == nil {
			return n
		}
	}
	return key
}
