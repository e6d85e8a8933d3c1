package analytics

import (
	"encoding/json"
	"strconv"
)

// Decider names one thing that decided a request: a rate-limit policy, a budget (a key's,
// a workspace's, a managed provider's, an integration's, a usage-limit policy's entity) or a
// config, with the version it was at.
type Decider struct {
	Kind string `json:"kind"` // rate_limit_policy, api_key, workspace, provider, integration_workspace, usage_limit_policy, config
	ID   string `json:"id"`
	// Sub narrows it: a workspace budget's type, a policy entity's value key, an integration's
	// workspace, a rate limit's unit.
	Sub string `json:"sub,omitempty"`
	// Version is the resource's version (how many events its stream holds); VersionID a
	// config version's id.
	Version   uint64 `json:"version,omitempty"`
	VersionID string `json:"version_id,omitempty"`
	// Limit and Used are the figures it decided by, where it has them.
	Limit float64 `json:"limit,omitempty"`
	Used  float64 `json:"used,omitempty"`
}

// String is the decision as the x-gateway-decided-by header carries it:
// kind:id[:sub]@v<version> (a config: config:id@<version id>).
func (d Decider) String() string {
	s := d.Kind + ":" + d.ID
	if d.Sub != "" {
		s += ":" + d.Sub
	}
	switch {
	case d.VersionID != "":
		s += "@" + d.VersionID
	case d.Version > 0:
		s += "@v" + strconv.FormatUint(d.Version, 10)
	}
	return s
}

// Charge is one budget a request was charged to, and by how much.
type Charge struct {
	Decider
	Amount float64 `json:"amount"`
}

// Provenance is what decided a request, kept in its log row: the policy or budget that
// refused it, or the budgets it was charged to; the config version that routed it.
type Provenance struct {
	RefusedBy *Decider `json:"refused_by,omitempty"`
	Charged   []Charge `json:"charged,omitempty"`
	Config    *Decider `json:"config,omitempty"`
	// HookResults are the guardrails' verdicts on the request and its answer, in the
	// reference's hook_results shape.
	HookResults json.RawMessage `json:"hook_results,omitempty"`
}
