package domain

// UsageLimitPolicyPrefix names usage-limit policy streams.
const UsageLimitPolicyPrefix = "usagelimitpolicy"

// UsageLimitPolicy caps cost or tokens over time for the traffic its conditions select.
type UsageLimitPolicy struct {
	ID string `json:"id"`
}

func (p *UsageLimitPolicy) Apply(e Event) {}

func usageLimitPolicyModule() module {
	return module{prefix: UsageLimitPolicyPrefix, aggregate: func() Aggregate { return &UsageLimitPolicy{} }}
}
