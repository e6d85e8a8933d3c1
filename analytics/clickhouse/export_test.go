package clickhouse_test

import "github.com/causeway/causeway/analytics/internal/sqlstore"

// Small scan pages make the contract suite's scans cross many page boundaries, one of them
// inside the run of rows that share a started_at (191 of the organisation's rows).
func init() { sqlstore.ScanPageSize = 149 }
