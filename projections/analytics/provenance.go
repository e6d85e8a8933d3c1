package analytics

import (
	"encoding/json"

	"github.com/causeway/causeway/gateway"
)

// provenanceJSON is how a row keeps what decided its request: JSON, or empty when nothing did.
func provenanceJSON(p *gateway.Provenance) string {
	if p == nil {
		return ""
	}
	raw, err := json.Marshal(p)
	if err != nil {
		return ""
	}
	return string(raw)
}

// storedProvenance reads it back; a value that does not parse is left out rather than
// failing the row.
func storedProvenance(s string) *gateway.Provenance {
	if s == "" {
		return nil
	}
	var p gateway.Provenance
	if json.Unmarshal([]byte(s), &p) != nil {
		return nil
	}
	return &p
}
