package gateway

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/causeway/causeway/domain"
)

// Gateway headers (5.3, 5.4) and their SDK spellings.
const (
	HeaderAPIKey         = "x-gateway-api-key"
	HeaderProvider       = "x-gateway-provider"
	HeaderVirtualKey     = "x-gateway-virtual-key"
	HeaderConfig         = "x-gateway-config"
	HeaderCustomHost     = "x-gateway-custom-host"
	HeaderMetadata       = "x-gateway-metadata"
	HeaderRequestTimeout = "x-gateway-request-timeout"
	HeaderForwardHeaders = "x-gateway-forward-headers"
	HeaderSpanID         = "x-gateway-span-id"
	HeaderParentSpanID   = "x-gateway-parent-span-id"
	HeaderSpanName       = "x-gateway-span-name"
	HeaderTarget         = "x-gateway-target"
	HeaderRetries        = "x-gateway-retry-count"
	// HeaderDecidedBy names, on a refusal, the policy or budget that refused (kind:id@vN),
	// and on an answer the config version that routed it.
	HeaderDecidedBy = "x-gateway-decided-by"
	// HeaderErrorSource is on every error answer: provider when the provider answered it (its
	// status and error passed on), gateway when the gateway refused or failed the request.
	HeaderErrorSource = "x-gateway-error-source"
)

// The values of HeaderErrorSource.
const (
	ErrorSourceProvider = "provider"
	ErrorSourceGateway  = "gateway"
)

// KeyHeaders are the header of 5.1 and its SDK aliases. x-api-key is not one: it is where
// Anthropic's SDK sends the provider's key, so reading it as the gateway's would make such a
// client's request ambiguous.
var KeyHeaders = []string{HeaderAPIKey, "api_key", "apiKey"}

// PresentedKey returns the gateway key a request carries, compared exactly: nothing is trimmed
// beyond what HTTP strips itself (spaces and tabs at either end). A request carrying more
// than one key (a header repeated, or aliases that disagree) is refused with a 400 naming the
// headers: the gateway must never pick one of two credentials.
func PresentedKey(h http.Header) (string, error) {
	key, from := "", ""
	for _, name := range KeyHeaders {
		values := h.Values(name)
		if len(values) > 1 {
			return "", domain.Invalid(name, "the header %s is repeated: send exactly one gateway API key", name)
		}
		if len(values) == 0 || values[0] == "" {
			continue
		}
		if from != "" && values[0] != key {
			return "", domain.Invalid(name, "the headers %s and %s carry different gateway API keys: send exactly one", from, name)
		}
		key, from = values[0], name
	}
	return key, nil
}

// header reads a gateway header by its x-gateway- name or its SDK spellings (snake_case and
// camelCase without the prefix), which are worked out once, not per request.
func header(h http.Header, name string) string {
	spellings, ok := headerSpellings[name]
	if !ok {
		return h.Get(name)
	}
	for _, canon := range spellings {
		if v := h[canon]; len(v) > 0 && v[0] != "" {
			return v[0]
		}
	}
	return ""
}

// headerSpellings are a gateway header's spellings (its own name first), each in the canonical
// form http.Header stores: looked up as they are, not canonicalised again on every request.
var headerSpellings = func() map[string][]string {
	out := map[string][]string{}
	for name, aliases := range headerAliases {
		spellings := []string{http.CanonicalHeaderKey(name)}
		for _, a := range aliases {
			spellings = append(spellings, http.CanonicalHeaderKey(a))
		}
		out[name] = spellings
	}
	return out
}()

var headerAliases = func() map[string][]string {
	out := map[string][]string{}
	for _, name := range []string{HeaderProvider, HeaderVirtualKey, HeaderConfig, HeaderCustomHost, HeaderMetadata,
		HeaderRequestTimeout, HeaderForwardHeaders, HeaderSpanID, HeaderParentSpanID, HeaderSpanName,
		HeaderCacheNamespace, HeaderCacheForceRefresh} {
		bare := strings.TrimPrefix(name, "x-gateway-")
		parts := strings.Split(bare, "-")
		for i := 1; i < len(parts); i++ {
			parts[i] = strings.ToUpper(parts[i][:1]) + parts[i][1:]
		}
		out[name] = []string{strings.ReplaceAll(bare, "-", "_"), strings.Join(parts, "")}
	}
	return out
}()

// parseMetadata reads x-gateway-metadata: a JSON object of strings (special keys _user,
// _prompt, _organisation, _environment), over the key's default metadata.
func parseMetadata(h http.Header, key *domain.APIKey) (map[string]string, error) {
	out := map[string]string{}
	if key.Defaults != nil {
		for k, v := range key.Defaults.Metadata {
			if s, ok := v.(string); ok {
				out[k] = s
			}
		}
	}
	raw := header(h, HeaderMetadata)
	if raw == "" {
		return out, nil
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(raw), &m); err != nil || m == nil {
		return nil, domain.Invalid(HeaderMetadata, "%s must be a JSON object", HeaderMetadata)
	}
	if len(m) > 128 {
		return nil, domain.Invalid(HeaderMetadata, "%s may hold at most 128 keys", HeaderMetadata)
	}
	for k, v := range m {
		switch v := v.(type) {
		case string:
			out[k] = v
		case float64, bool:
			out[k] = fmt.Sprint(v)
		default:
			return nil, domain.Invalid(HeaderMetadata, "%s values must be strings (the value of %q is not)", HeaderMetadata, k)
		}
	}
	return out, nil
}

// forwardHeaders are the client's headers that names lists (x-gateway-forward-headers, and a
// config's forward_headers), passed to the provider unprocessed. Gateway headers and
// Authorization are never forwarded this way.
func forwardHeaders(h http.Header, names []string) http.Header {
	if len(names) == 0 {
		return nil
	}
	out := http.Header{}
	for _, n := range names {
		n = strings.TrimSpace(n)
		if n == "" || strings.HasPrefix(strings.ToLower(n), "x-gateway-") || strings.EqualFold(n, "authorization") {
			continue
		}
		if v := h.Values(n); len(v) > 0 {
			out[http.CanonicalHeaderKey(n)] = v
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// forwardHeaderNames reads the x-gateway-forward-headers list: a JSON array or a
// comma-separated list of header names.
func forwardHeaderNames(h http.Header) []string {
	list := header(h, HeaderForwardHeaders)
	if list == "" {
		return nil
	}
	var names []string
	if err := json.Unmarshal([]byte(list), &names); err != nil {
		names = strings.Split(list, ",")
	}
	return names
}

// requestTimeout reads x-gateway-request-timeout (milliseconds); zero when absent.
func requestTimeout(h http.Header) (time.Duration, error) {
	raw := header(h, HeaderRequestTimeout)
	if raw == "" {
		return 0, nil
	}
	ms, err := strconv.Atoi(raw)
	if err != nil || ms < 1 {
		return 0, domain.Invalid(HeaderRequestTimeout, "%s must be a whole number of milliseconds, at least 1", HeaderRequestTimeout)
	}
	return time.Duration(ms) * time.Millisecond, nil
}

// cloudOptions reads the cloud-specific headers of 5.3 (x-gateway-<cloud>-<name>) as provider
// options named <cloud>_<name> (azure_resource_name, aws_region, ...), and the OpenAI
// organisation and project headers.
func cloudOptions(h http.Header) map[string]string {
	out := map[string]string{}
	for name, values := range h {
		if len(name) <= len("x-gateway-") || !strings.EqualFold(name[:len("x-gateway-")], "x-gateway-") {
			continue
		}
		lower := strings.ToLower(name)
		for _, prefix := range []string{"x-gateway-azure-", "x-gateway-vertex-", "x-gateway-aws-", "x-gateway-anthropic-", "x-gateway-openai-"} {
			if opt, ok := strings.CutPrefix(lower, prefix); ok && len(values) > 0 {
				out[strings.ReplaceAll(strings.TrimPrefix(prefix, "x-gateway-")+opt, "-", "_")] = values[0]
			}
		}
	}
	return out
}

func bearer(h http.Header) string {
	auth := h.Get("Authorization")
	if v, ok := strings.CutPrefix(auth, "Bearer "); ok {
		return strings.TrimSpace(v)
	}
	return strings.TrimSpace(auth)
}

// NamesProvider reports whether a request names where it goes: a provider, a config or a
// virtual key, by its x-gateway- header or an SDK spelling of it. A request to a path the
// gateway does not know that names none is a mistyped route, not a pass-through.
func NamesProvider(h http.Header) bool {
	return header(h, HeaderProvider) != "" || header(h, HeaderConfig) != "" || header(h, HeaderVirtualKey) != ""
}
