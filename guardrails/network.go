package guardrails

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"
)

// The checks that leave the process. Partner and default checks the reference gateway has a
// plugin for keep its names; the others are default.<name>.
const (
	idWebhook        = "default.webhook"
	idExternalPolicy = "default.externalPolicy"
	idLassoClassify  = "lasso.classify"
	idInlineImage    = "default.inlineImage"
	idJWT            = "default.jwt"
)

// networkChecks returns the factories of the checks that call outside services, by id.
func networkChecks() map[string]Factory {
	return map[string]Factory{
		idWebhook:        NewWebhookCheck,
		idExternalPolicy: NewExternalPolicyCheck,
		idLassoClassify:  NewLassoClassifyCheck,
		idInlineImage:    NewInlineImageCheck,
		idJWT:            NewJWTCheck,
	}
}

// AddNetworkChecks adds the checks that call outside services (webhook, external policy,
// Lasso, inline image, JWT) to r, in the order of their ids. *Registry is such an r.
func AddNetworkChecks(r interface{ Add(id string, f Factory) }) {
	checks := networkChecks()
	ids := make([]string, 0, len(checks))
	for id := range checks {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		r.Add(id, checks[id])
	}
}

// SignatureHeader carries the signature of a body the gateway posts to a webhook or a policy
// service, in the manner of Stripe's:
//
//	X-Causeway-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>" keyed with Deps.Secret>
//
// A receiver recomputes v1 over the raw body with the shared secret, compares it in constant
// time and refuses a t too far from its clock (five minutes, say), so a captured call cannot
// be replayed later. guardrailstest.VerifySignature is such a receiver's check.
const SignatureHeader = "X-Causeway-Signature"

// signature is the value of SignatureHeader for body sent at t.
func signature(secret []byte, t time.Time, body []byte) string {
	ts := strconv.FormatInt(t.Unix(), 10)
	m := hmac.New(sha256.New, secret)
	m.Write([]byte(ts))
	m.Write([]byte{'.'})
	m.Write(body)
	return "t=" + ts + ",v1=" + hex.EncodeToString(m.Sum(nil))
}

// netDeps refuses Deps a network check cannot work without, and fills Now.
func netDeps(id string, d Deps, needSecret bool) (Deps, error) {
	switch {
	case d.Client == nil:
		return d, fmt.Errorf("%s: Deps.Client is required", id)
	case d.CheckURL == nil:
		return d, fmt.Errorf("%s: Deps.CheckURL is required", id)
	case needSecret && len(d.Secret) == 0:
		return d, fmt.Errorf("%s: Deps.Secret is required to sign its calls", id)
	}
	if d.Now == nil {
		d.Now = time.Now
	}
	return d, nil
}

// noRedirects is client without following redirects: a POST carries headers an admin set
// (API keys among them), which a redirect would hand to another host.
func noRedirects(client *http.Client) *http.Client {
	c := *client
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	return &c
}

// callError is a failed outbound call. Its message never holds the URL (whose query may hold
// a token) nor a header value; errors.Is and errors.As see the cause (a deadline, an egress
// refusal).
type callError struct {
	what string // "webhook", "policy service", ...
	msg  string
	err  error
}

func (e *callError) Error() string {
	if e.err == nil {
		return e.what + ": " + e.msg
	}
	return e.what + ": " + e.msg + ": " + e.err.Error()
}

func (e *callError) Unwrap() error { return e.err }

// transportError is a failed call without the URL that net/http puts in front of its error.
func transportError(what string, err error) error {
	return &callError{what: what, msg: "call failed", err: withoutURL(err)}
}

// withoutURL drops the *url.Error around a transport error, whose message quotes the URL.
func withoutURL(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

// postJSON posts body as JSON to rawURL with header and decodes a 2xx answer of at most
// limit bytes into out. Any other status, a larger answer or one that is not JSON is an error.
func postJSON(ctx context.Context, client *http.Client, what, rawURL string, header http.Header, body []byte, limit int64, out any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, rawURL, bytes.NewReader(body))
	if err != nil {
		return &callError{what: what, msg: "not a valid URL"}
	}
	for k, vs := range header {
		req.Header[k] = append([]string(nil), vs...)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		return transportError(what, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
		return &callError{what: what, msg: fmt.Sprintf("answered %d", resp.StatusCode)}
	}
	raw, err := io.ReadAll(io.LimitReader(resp.Body, limit+1))
	if err != nil {
		return transportError(what, err)
	}
	if int64(len(raw)) > limit {
		return &callError{what: what, msg: fmt.Sprintf("answer larger than %d bytes", limit)}
	}
	if err := json.Unmarshal(raw, out); err != nil {
		return &callError{what: what, msg: "answer is not the expected JSON"}
	}
	return nil
}

// checkURLContext runs a CheckURL, which cannot be cancelled, and stops waiting when ctx ends.
func checkURLContext(ctx context.Context, check func(string) error, raw string) error {
	done := make(chan error, 1)
	go func() { done <- check(raw) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// encodeJSONNoEscape is json.Marshal without escaping <, > and &: bodies are passed on, not put in
// HTML, and a rewritten request should differ from the client's only where it was rewritten.
func encodeJSONNoEscape(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte{'\n'}), nil
}

// netHookNames lists hooks for messages.
func netHookNames(hooks []Hook) string {
	s := make([]string, len(hooks))
	for i, h := range hooks {
		s[i] = string(h)
	}
	return strings.Join(s, " and ")
}

// hookSupported refuses a hook the check was not made for: the contract has no place to declare
// a check's hooks yet, so a check configured on the wrong one says so when it runs.
func hookSupported(id string, h Hook, hooks []Hook) error {
	for _, ok := range hooks {
		if h == ok {
			return nil
		}
	}
	return fmt.Errorf("%s runs on %s, not %q", id, netHookNames(hooks), h)
}

// netParams reads a network check's parameters with the reader every check uses. failOnError
// and timeout are known to every check: they are the runner's (Registry.Configure reads and
// bounds them), as in the reference gateway; a check with a timeout of its own reads it too.
func netParams(raw map[string]any) *paramReader {
	p := readParams(raw)
	p.boolean("failOnError", false)
	p.seen["timeout"] = true
	return p
}

// millis reads a duration in milliseconds from 1 to hi.
func (p *paramReader) millis(name string, def, hi int64) time.Duration {
	return time.Duration(p.integer(name, def, 1, hi)) * time.Millisecond
}

// strList reads a list of 1 to maxItems strings of 1 to maxLen bytes each; nil when absent.
func (p *paramReader) strList(name string, required bool, maxItems, maxLen int) []string {
	present := p.has(name)
	items := p.strings(name, required, maxItems, false)
	if present && len(items) == 0 && len(p.errs) == 0 {
		p.fail(name, "must hold at least one item")
	}
	for i, s := range items {
		if len(s) > maxLen {
			p.fail(fmt.Sprintf("%s[%d]", name, i), "is %d bytes, at most %d", len(s), maxLen)
		}
	}
	return items
}

// The headers an admin may not set on a call: the transport's, the signature's and the body's.
var reservedHeaders = map[string]bool{
	"Host": true, "Content-Length": true, "Content-Type": true, "Transfer-Encoding": true,
	"Connection": true, "Te": true, "Upgrade": true, "Trailer": true, "Keep-Alive": true,
	"Proxy-Connection": true, "Expect": true, http.CanonicalHeaderKey(SignatureHeader): true,
}

// headers reads an object of header names to string values (at most 32, each value at most
// 8 KiB). Values are never repeated in a message: they are often credentials.
func (p *paramReader) headers(name string) http.Header {
	m := p.object(name, false)
	if len(m) == 0 {
		return nil
	}
	if len(m) > 32 {
		p.fail(name, "must hold at most 32 headers")
		return nil
	}
	h := http.Header{}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		path := name + "." + k
		s, isStr := m[k].(string)
		switch {
		case !validHeaderName(k):
			p.fail(path, "is not a valid header name")
		case reservedHeaders[http.CanonicalHeaderKey(k)]:
			p.fail(path, "is set by the gateway and cannot be overridden")
		case !isStr:
			p.fail(path, "must be a string")
		case len(s) > 8<<10 || strings.ContainsAny(s, "\r\n\x00"):
			p.fail(path, "must be at most 8192 characters with no line breaks")
		default:
			h.Set(k, s)
		}
	}
	return h
}

func validHeaderName(k string) bool {
	if k == "" || len(k) > 256 {
		return false
	}
	for _, c := range []byte(k) {
		if c <= ' ' || c >= 0x7f || strings.IndexByte("\"(),/:;<=>?@[\\]{}", c) >= 0 {
			return false
		}
	}
	return true
}

// url reads an http(s) URL and, if check is set, has the egress guard check it now. The
// message never repeats the URL: its query may hold a token.
func (p *paramReader) url(name string, required bool, def string, check func(string) error) string {
	s := p.nonEmptyStr(name, required, "", 4096)
	if s == "" {
		return def
	}
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		p.fail(name, "must be an http or https URL")
		return def
	}
	if u.User != nil {
		p.fail(name, "must not hold credentials; use headers")
		return def
	}
	if check != nil {
		if err := check(s); err != nil {
			p.fail(name, "%s", err.Error())
			return def
		}
	}
	return s
}

// The inline-image check rewrites the body, so it runs before the others, in order
// (Transformer). A webhook rewrites only when its receiver answers transformedData: it is not
// a Transformer, so webhooks run side by side with the other checks, and a rewrite one answers
// is applied after them.
func (c *inlineImageCheck) Transforms() bool { return true }

// signedEndpoint is an outside service a check posts its input to, signed: its URL, the admin's
// headers, the call's timeout, and the signing key (the webhook and the external policy).
type signedEndpoint struct {
	url     string
	header  http.Header
	timeout time.Duration
	client  *http.Client
	secret  []byte
	now     func() time.Time
}

// post sends body with the admin's headers and the signature, within the timeout, and decodes
// the JSON answer (at most limit bytes) into ans; what names the service in errors.
func (e *signedEndpoint) post(ctx context.Context, what string, body []byte, limit int64, ans any) error {
	h := e.header.Clone()
	if h == nil {
		h = http.Header{}
	}
	h.Set(SignatureHeader, signature(e.secret, e.now(), body))
	ctx, cancel := context.WithTimeout(ctx, e.timeout)
	defer cancel()
	return postJSON(ctx, e.client, what, e.url, h, body, limit, ans)
}
