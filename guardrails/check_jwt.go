package guardrails

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/lestrrat-go/jwx/v3/jwa"
	"github.com/lestrrat-go/jwx/v3/jwk"
	"github.com/lestrrat-go/jwx/v3/jws"
	"github.com/lestrrat-go/jwx/v3/jwt"
)

const (
	// jwksFetchTimeout bounds one JWKS fetch, within the request's own deadline.
	jwksFetchTimeout = 10 * time.Second
	// jwksLimit bounds a JWKS document.
	jwksLimit = 1 << 20
	// kidRefreshInterval is how often a token with a kid the cached JWKS lacks may refetch it:
	// keys rotate seldom, and tokens with made-up kids must not make the gateway hammer the
	// issuer.
	kidRefreshInterval = 10 * time.Second
)

// jwtAlgorithms are the algorithms default.jwt accepts: the asymmetric ones, whose keys a
// JWKS publishes. HMAC (a JWKS key used as a shared secret is the classic forgery) and none
// are refused even when asked for.
var jwtAlgorithms = []string{"RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA"}

// NewJWTCheck builds default.jwt, the reference gateway's JWT plugin: a JWT in a request
// header is verified against the keys published at a JWKS URI.
//
// Parameters, as the reference's: jwksUri (required, http or https, checked by the egress
// guard now and on every connection), headerKey (the header holding the token, "Bearer "
// optional; default Authorization), cacheMaxAge (seconds the JWKS is cached, 1 to 604800,
// default 86400), clockTolerance (seconds of skew allowed on exp, nbf and iat, 0 to 300,
// default 5), maxTokenAge (how old iat may be, "<n><unit>" with unit s, m, h, d or w — or
// their long forms, as the reference's jose library reads them — up to 365d, default "1d";
// a token without iat then fails); and ours: algorithms (a subset of RS256, RS384, RS512,
// PS256, PS384, PS512, ES256, ES384, ES512, EdDSA; default all of them), issuer (the "iss" the
// token must carry) and audience (1 to 16 values, one of which its "aud" must hold). Every
// JWKS of a public identity provider verifies the tokens it issues for any of its customers'
// applications, so without an issuer and an audience a token minted for another application
// passes; set both. Hook: beforeRequestHook.
//
// The token's header must name an allowed alg and a kid; the key is the JWKS's key of that
// kid, whose type must fit the alg (and whose alg, if it has one, must be the token's). A kid
// the cached JWKS lacks refetches it, at most once per 10 seconds.
func NewJWTCheck(params map[string]any, deps Deps) (Check, error) {
	deps, err := netDeps(idJWT, deps, false)
	if err != nil {
		return nil, err
	}
	p := netParams(params)
	c := &jwtCheck{
		jwksURI:        p.url("jwksUri", true, "", deps.CheckURL),
		headerKey:      p.nonEmptyStr("headerKey", false, "Authorization", 256),
		cacheMaxAge:    time.Duration(p.integer("cacheMaxAge", 86400, 1, 604800)) * time.Second,
		clockTolerance: time.Duration(p.integer("clockTolerance", 5, 0, 300)) * time.Second,
		algs:           map[string]jwa.SignatureAlgorithm{},
		client:         deps.Client,
		now:            deps.Now,
		sem:            make(chan struct{}, 1),
	}
	if c.headerKey != "" && !validHeaderName(c.headerKey) {
		p.fail("headerKey", "is not a valid header name")
	}
	c.issuer = p.nonEmptyStr("issuer", false, "", 1024)
	c.audience = p.strList("audience", false, 16, 1024)
	maxAge := p.nonEmptyStr("maxTokenAge", false, "1d", 32)
	if d, ok := parseTokenAge(maxAge); ok && d > 0 && d <= 365*24*time.Hour {
		c.maxTokenAge = d
	} else {
		p.fail("maxTokenAge", `must be a duration such as "30m", "12h" or "1d", from 1s to 365d`)
	}
	names := p.strList("algorithms", false, len(jwtAlgorithms), 16)
	if names == nil {
		names = jwtAlgorithms
	}
	for i, n := range names {
		if !isAllowedJWTAlg(n) {
			p.fail(fmt.Sprintf("algorithms[%d]", i), "must be one of %s (HMAC and none are not allowed against a JWKS)", strings.Join(jwtAlgorithms, ", "))
			continue
		}
		alg, ok := jwa.LookupSignatureAlgorithm(n)
		if !ok {
			p.fail(fmt.Sprintf("algorithms[%d]", i), "is not supported")
			continue
		}
		c.algs[n] = alg
	}
	if err := p.done(); err != nil {
		return nil, err
	}
	return c, nil
}

func isAllowedJWTAlg(n string) bool {
	for _, a := range jwtAlgorithms {
		if n == a {
			return true
		}
	}
	return false
}

var tokenAgeRE = regexp.MustCompile(`^(\d+|\d+\.\d+) ?(seconds?|secs?|s|minutes?|mins?|m|hours?|hrs?|h|days?|d|weeks?|w)$`)

// parseTokenAge reads maxTokenAge as the reference's jose library does (years left out).
func parseTokenAge(s string) (time.Duration, bool) {
	m := tokenAgeRE.FindStringSubmatch(strings.ToLower(strings.TrimSpace(s)))
	if m == nil {
		return 0, false
	}
	n, err := strconv.ParseFloat(m[1], 64)
	if err != nil {
		return 0, false
	}
	var unit time.Duration
	switch u := m[2]; {
	case strings.HasPrefix(u, "s"):
		unit = time.Second
	case strings.HasPrefix(u, "m"):
		unit = time.Minute
	case strings.HasPrefix(u, "h"):
		unit = time.Hour
	case strings.HasPrefix(u, "d"):
		unit = 24 * time.Hour
	default:
		unit = 7 * 24 * time.Hour
	}
	if n > float64(400*24*time.Hour/unit) {
		return 0, false
	}
	return time.Duration(n * float64(unit)), true
}

var _ Check = (*jwtCheck)(nil)

type jwtCheck struct {
	jwksURI        string
	headerKey      string
	cacheMaxAge    time.Duration
	clockTolerance time.Duration
	maxTokenAge    time.Duration
	issuer         string
	audience       []string
	algs           map[string]jwa.SignatureAlgorithm
	client         *http.Client
	now            func() time.Time

	// sem guards the cache below and lets one JWKS fetch run at a time; a waiter gives up
	// when its context ends.
	sem            chan struct{}
	set            jwk.Set
	fetchedAt      time.Time
	kidRefreshedAt time.Time
}

// requestHeader is a header of the client's request.
func requestHeader(in Input, name string) string { return in.Headers.Get(name) }

func (c *jwtCheck) deny(format string, args ...any) (Verdict, error) {
	return Verdict{Pass: false, Explanation: "JWT validation failed: " + fmt.Sprintf(format, args...)}, nil
}

func (c *jwtCheck) Run(ctx context.Context, in Input) (Verdict, error) {
	if err := hookSupported(idJWT, in.Hook, c.Hooks()); err != nil {
		return Verdict{}, err
	}
	token := strings.TrimSpace(requestHeader(in, c.headerKey))
	if len(token) > 7 && strings.EqualFold(token[:7], "bearer ") {
		token = strings.TrimSpace(token[7:])
	}
	if token == "" {
		return c.deny("missing %s header", c.headerKey)
	}
	if strings.Count(token, ".") != 2 || len(token) > 16<<10 {
		return c.deny("not a signed JWT in compact form")
	}
	msg, err := jws.ParseString(token)
	if err != nil || len(msg.Signatures()) != 1 {
		return c.deny("not a signed JWT in compact form")
	}
	hdr := msg.Signatures()[0].ProtectedHeaders()
	alg, _ := hdr.Algorithm()
	allowed, ok := c.algs[alg.String()]
	if !ok {
		return c.deny("algorithm %q is not allowed", clipText(alg.String(), 32))
	}
	kid, _ := hdr.KeyID()
	if kid == "" {
		return c.deny("the token has no kid")
	}
	key, err := c.key(ctx, kid)
	if err != nil {
		return Verdict{}, err
	}
	if key == nil {
		return c.deny("no key for kid %q in the JWKS", clipText(kid, 128))
	}
	if !keyFitsAlg(key, allowed) {
		return c.deny("the key of kid %q is not a key for %s", clipText(kid, 128), allowed)
	}

	now := c.now()
	tok, err := jwt.ParseString(token,
		jwt.WithKey(allowed, key),
		jwt.WithValidate(true),
		jwt.WithAcceptableSkew(c.clockTolerance),
		jwt.WithClock(jwt.ClockFunc(func() time.Time { return now })),
	)
	if err == nil {
		err = c.validateParties(tok)
	}
	if err != nil {
		msg := err.Error()
		for _, prefix := range []string{"jwt.ParseString: ", "failed to parse string: ", "jwt.Validate: "} {
			msg = strings.TrimPrefix(msg, prefix)
		}
		return c.deny("%s", clipText(msg, 256))
	}
	iat, ok := tok.IssuedAt()
	if !ok {
		return c.deny(`the token has no "iat", which maxTokenAge needs`)
	}
	if now.Sub(iat) > c.maxTokenAge+c.clockTolerance {
		return c.deny("the token is older than maxTokenAge")
	}
	data := map[string]any{"kid": kid, "alg": allowed.String()}
	if sub, ok := tok.Subject(); ok {
		data["sub"] = sub
	}
	return Verdict{Pass: true, Explanation: "JWT token validation succeeded", Data: data}, nil
}

// validateParties checks who issued the token and for whom, when the check names them.
func (c *jwtCheck) validateParties(tok jwt.Token) error {
	if c.issuer != "" {
		if iss, _ := tok.Issuer(); iss != c.issuer {
			return fmt.Errorf(`the token's "iss" is not the issuer this check trusts`)
		}
	}
	if len(c.audience) > 0 {
		aud, _ := tok.Audience()
		for _, a := range aud {
			if slices.Contains(c.audience, a) {
				return nil
			}
		}
		return fmt.Errorf(`the token's "aud" names none of the audiences this check accepts`)
	}
	return nil
}

// Hooks are the hooks the check runs on.
func (c *jwtCheck) Hooks() []Hook { return []Hook{BeforeRequest} }

// keyFitsAlg: the key's type is the alg's, and the key's own alg, if it names one, is it.
func keyFitsAlg(key jwk.Key, alg jwa.SignatureAlgorithm) bool {
	if ka, ok := key.Algorithm(); ok && ka.String() != alg.String() {
		return false
	}
	kty := key.KeyType()
	switch n := alg.String(); {
	case strings.HasPrefix(n, "RS"), strings.HasPrefix(n, "PS"):
		return kty == jwa.RSA()
	case strings.HasPrefix(n, "ES"):
		return kty == jwa.EC()
	case n == "EdDSA":
		return kty == jwa.OKP()
	}
	return false
}

// key returns the JWKS's key for kid, or nil when it has none: it fetches the JWKS when it is
// not cached or is older than cacheMaxAge, and refetches it once for a kid it lacks.
func (c *jwtCheck) key(ctx context.Context, kid string) (jwk.Key, error) {
	select {
	case c.sem <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	defer func() { <-c.sem }()

	now := c.now()
	fresh := false
	if c.set == nil || now.Sub(c.fetchedAt) >= c.cacheMaxAge {
		set, err := c.fetch(ctx)
		if err != nil {
			return nil, err
		}
		c.set, c.fetchedAt, fresh = set, now, true
	}
	if k, ok := c.set.LookupKeyID(kid); ok {
		return k, nil
	}
	if fresh || (!c.kidRefreshedAt.IsZero() && now.Sub(c.kidRefreshedAt) < kidRefreshInterval) {
		return nil, nil
	}
	c.kidRefreshedAt = now
	set, err := c.fetch(ctx)
	if err != nil {
		return nil, err
	}
	c.set, c.fetchedAt = set, now
	if k, ok := c.set.LookupKeyID(kid); ok {
		return k, nil
	}
	return nil, nil
}

// fetch gets the JWKS and keeps its public asymmetric keys: a symmetric key has no place in
// a published set, and a private one is used only as its public half.
func (c *jwtCheck) fetch(ctx context.Context) (jwk.Set, error) {
	ctx, cancel := context.WithTimeout(ctx, jwksFetchTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.jwksURI, nil)
	if err != nil {
		return nil, &callError{what: "JWKS", msg: "not a valid URL"}
	}
	req.Header.Set("Accept", "application/json")
	resp, err := c.client.Do(req)
	if err != nil {
		return nil, transportError("JWKS", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return nil, &callError{what: "JWKS", msg: fmt.Sprintf("answered %d", resp.StatusCode)}
	}
	raw, err := io.ReadAll(io.LimitReader(resp.Body, jwksLimit+1))
	if err != nil {
		return nil, transportError("JWKS", err)
	}
	if len(raw) > jwksLimit {
		return nil, &callError{what: "JWKS", msg: fmt.Sprintf("answer larger than %d bytes", jwksLimit)}
	}
	all, err := jwk.Parse(raw)
	if err != nil {
		return nil, &callError{what: "JWKS", msg: "answer is not a JSON Web Key Set"}
	}
	set := jwk.NewSet()
	for i := 0; i < all.Len(); i++ {
		k, _ := all.Key(i)
		switch k.KeyType() {
		case jwa.RSA(), jwa.EC(), jwa.OKP():
		default:
			continue
		}
		pub, err := k.PublicKey()
		if err != nil {
			continue
		}
		if err := set.AddKey(pub); err != nil {
			continue
		}
	}
	return set, nil
}

func clipText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return strings.ToValidUTF8(s[:n], "") + "..."
}
