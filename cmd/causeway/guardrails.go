package main

import (
	"crypto/hmac"
	"crypto/sha256"
	"time"

	"github.com/causeway/causeway/commands"
	"github.com/causeway/causeway/domain"
	"github.com/causeway/causeway/gateway"
	"github.com/causeway/causeway/gateway/egress"
	"github.com/causeway/causeway/guardrails"
)

// startGuardrails builds the guardrail engine: every check, local and network, with the
// egress guard as the network checks' way out (their URLs checked when a guardrail is saved and
// again at every dial), and webhook bodies signed with a key derived from the server secret.
// The same registry validates guardrails' checks when they are saved. With
// GUARDRAILS_ENABLED=OFF, nothing runs and saved checks are only checked for form.
func (m *Main) startGuardrails(guard *egress.Guard, secret []byte) (domain.CheckValidator, error) {
	if !m.Config.Features.Guardrails {
		return nil, nil
	}
	reg := guardrails.NewRegistry()
	guardrails.AddNetworkChecks(reg)
	mac := hmac.New(sha256.New, secret)
	mac.Write([]byte("causeway guardrail webhook signatures"))
	deps := guardrails.Deps{Client: guard.Client(0), CheckURL: guard.CheckURL, Secret: mac.Sum(nil), Now: time.Now}
	m.Guardrails = &gateway.Guardrails{Registry: reg, Deps: deps, Directory: m.Index, Log: m.Logger}
	return commands.EngineChecks(reg, deps), nil
}
