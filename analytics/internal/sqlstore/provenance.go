package sqlstore

import (
	"encoding/json"

	"github.com/causeway/causeway/analytics"
)

// ProvenanceJSON is how a row keeps what decided its request: JSON, or empty when nothing did.
func ProvenanceJSON(p *analytics.Provenance) string {
	if p == nil {
		return ""
	}
	raw, err := json.Marshal(p)
	if err != nil {
		return ""
	}
	return string(raw)
}

// StoredProvenance reads it back; a value that does not parse is left out rather than
// failing the row.
func StoredProvenance(s string) *analytics.Provenance {
	if s == "" {
		return nil
	}
	var p analytics.Provenance
	if json.Unmarshal([]byte(s), &p) != nil {
		return nil
	}
	return &p
}
