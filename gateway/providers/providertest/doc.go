// Package providertest runs local stand-ins for LLM providers: httptest servers on 127.0.0.1
// that speak each provider's real wire format as its documentation shows it, record every
// request, and can be scripted to fail. They are the only fake in the gateway's tests (the
// outside world). It also holds what every family's tests read an adapter's answer with
// (Drain, Content, Dig, ErrorFields, NoSecret, Rewrite).
//
// It imports the standard library and testify, nothing of the gateway (not even the contract,
// whose own tests use it), so that any package's tests can use it; and nothing but tests
// imports it.
package providertest
