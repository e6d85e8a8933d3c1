package analytics

import (
	"slices"
	"strings"
	"time"

	"github.com/causeway/causeway/domain"
)

// Validate checks q and fills its defaults, naming the bound that is broken.
func (q *GroupsQuery) Validate() error {
	if err := q.Filter.Validate(); err != nil {
		return err
	}
	if !slices.Contains(GroupBys, q.GroupBy) && !slices.Contains(ExtraGroupBys, q.GroupBy) {
		return domain.Invalid("groupBy", "groupBy must be one of %s",
			strings.Join(append(slices.Clone(GroupBys), ExtraGroupBys...), ", "))
	}
	if q.GroupBy == GroupMetadata {
		if err := domain.ValidateName("metadataKey", q.MetadataKey, true); err != nil {
			return err
		}
	}
	seen := map[string]bool{}
	for _, c := range q.Columns {
		if !slices.Contains(Columns, c) {
			return domain.Invalid("columns", "column %q is not one of %s", c, strings.Join(Columns, ", "))
		}
		if seen[c] {
			return domain.Invalid("columns", "column %q is asked twice", c)
		}
		seen[c] = true
	}
	if err := validatePage(q.Page, &q.PageSize); err != nil {
		return err
	}
	if q.SortBy == "" {
		q.SortBy, q.SortDesc = ColRequests, true
	}
	if q.SortBy != ColRequests && !seen[q.SortBy] {
		return domain.Invalid("order_by", "order_by must be requests or one of the asked columns")
	}
	return nil
}

// Validate checks q and returns the start of its first bucket in Unix milliseconds and the
// number of buckets.
func (q GraphQuery) Validate() (first int64, n int, err error) {
	if err := q.Filter.Validate(); err != nil {
		return 0, 0, err
	}
	if q.From.IsZero() {
		return 0, 0, domain.Invalid("time_of_generation_min", "time_of_generation_min is required")
	}
	if q.To.IsZero() {
		return 0, 0, domain.Invalid("time_of_generation_max", "time_of_generation_max is required")
	}
	if !slices.Contains(Graphs, q.Kind) {
		return 0, 0, domain.Invalid("graph", "graph must be one of %s", strings.Join(Graphs, ", "))
	}
	if q.Kind == GraphErrorStatusCodes {
		return 0, 0, nil
	}
	if q.Bucket < time.Minute || q.Bucket%time.Minute != 0 {
		return 0, 0, domain.Invalid("bucket", "bucket must be a whole number of minutes, at least 1")
	}
	b := q.Bucket.Milliseconds()
	// To is exclusive: the last bucket is the one of the last millisecond before it.
	first, last := floorTo(q.From.UnixMilli(), b), floorTo(q.To.UnixMilli()-1, b)
	if buckets := (last-first)/b + 1; buckets > MaxGraphBuckets {
		return 0, 0, domain.Invalid("time_of_generation_min",
			"the time range must span at most %d buckets of %s (got %d)", MaxGraphBuckets, q.Bucket, buckets)
	}
	return first, int((last-first)/b + 1), nil
}

// floorTo rounds ms down to a multiple of b, before the epoch too.
func floorTo(ms, b int64) int64 {
	r := ms % b
	if r < 0 {
		r += b
	}
	return ms - r
}

// Validate checks q and fills its default page size.
func (q *LogsQuery) Validate() error {
	if err := q.Filter.Validate(); err != nil {
		return err
	}
	return validatePage(q.Page, &q.PageSize)
}

// validatePage checks a page and fills the default page size.
func validatePage(page int, pageSize *int) error {
	if page < 0 {
		return domain.Invalid("current_page", "current_page must be at least 0")
	}
	if *pageSize == 0 {
		*pageSize = DefaultPageSize
	}
	if *pageSize < 1 || *pageSize > MaxPageSize {
		return domain.Invalid("page_size", "page_size must be between 1 and %d", MaxPageSize)
	}
	return nil
}
