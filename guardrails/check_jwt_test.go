package guardrails_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/hmac"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lestrrat-go/jwx/v3/jwa"
	"github.com/lestrrat-go/jwx/v3/jwk"
	"github.com/lestrrat-go/jwx/v3/jwt"
	"github.com/stretchr/testify/require"

	"github.com/causeway/causeway/guardrails"
)

// clock is a test's Deps.Now.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// issuer holds signing keys and serves the public half of those it publishes as a JWKS,
// counting fetches.
type issuer struct {
	URL     string
	fetches atomic.Int64
	status  atomic.Int64 // answer with this status instead, when set

	mu        sync.Mutex
	published []jwk.Key
}

func newIssuer(t *testing.T) *issuer {
	t.Helper()
	is := &issuer{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		is.fetches.Add(1)
		if s := is.status.Load(); s != 0 {
			w.WriteHeader(int(s))
			return
		}
		is.mu.Lock()
		set := jwk.NewSet()
		for _, k := range is.published {
			pub, err := k.PublicKey()
			if err == nil {
				_ = set.AddKey(pub)
			}
		}
		is.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(set)
	}))
	t.Cleanup(srv.Close)
	is.URL = srv.URL + "/.well-known/jwks.json"
	return is
}

func (is *issuer) publish(keys ...jwk.Key) {
	is.mu.Lock()
	defer is.mu.Unlock()
	is.published = append(is.published, keys...)
}

// rsaKey is a private JWK with kid and, if alg is set, alg.
func rsaKey(t *testing.T, priv *rsa.PrivateKey, kid string, alg jwa.SignatureAlgorithm) jwk.Key {
	t.Helper()
	k, err := jwk.Import(priv)
	require.NoError(t, err)
	require.NoError(t, k.Set(jwk.KeyIDKey, kid))
	if alg.String() != "" {
		require.NoError(t, k.Set(jwk.AlgorithmKey, alg))
	}
	return k
}

func sign(t *testing.T, key jwk.Key, alg jwa.SignatureAlgorithm, iat, exp time.Time) string {
	t.Helper()
	tok := jwt.New()
	require.NoError(t, tok.Set(jwt.SubjectKey, "user-42"))
	if !iat.IsZero() {
		require.NoError(t, tok.Set(jwt.IssuedAtKey, iat))
	}
	require.NoError(t, tok.Set(jwt.ExpirationKey, exp))
	raw, err := jwt.Sign(tok, jwt.WithKey(alg, key))
	require.NoError(t, err)
	return string(raw)
}

func jwtInput(t *testing.T, header, value string) guardrails.Input {
	in := beforeInput(t)
	in.Headers = http.Header{}
	in.Headers.Set(header, value)
	return in
}

type jwtFixture struct {
	clock  *clock
	issuer *issuer
	priv   *rsa.PrivateKey
	key    jwk.Key // kid k1, RS256
	check  guardrails.Check
}

func newJWTFixture(t *testing.T, extra map[string]any) *jwtFixture {
	t.Helper()
	priv, err := rsa.GenerateKey(rand.Reader, 2048)
	require.NoError(t, err)
	f := &jwtFixture{clock: &clock{t: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)}, issuer: newIssuer(t), priv: priv}
	f.key = rsaKey(t, priv, "k1", jwa.RS256())
	f.issuer.publish(f.key)
	deps := guardedDeps(t)
	deps.Now = f.clock.Now
	p := map[string]any{"jwksUri": f.issuer.URL}
	for k, v := range extra {
		p[k] = v
	}
	f.check, err = guardrails.NewJWTCheck(p, deps)
	require.NoError(t, err)
	return f
}

func (f *jwtFixture) token(t *testing.T) string {
	now := f.clock.Now()
	return sign(t, f.key, jwa.RS256(), now.Add(-time.Minute), now.Add(time.Hour))
}

func TestJWTValid(t *testing.T) {
	f := newJWTFixture(t, nil)
	v, err := f.check.Run(context.Background(), jwtInput(t, "authorization", "Bearer "+f.token(t)))
	require.NoError(t, err)
	require.True(t, v.Pass, v.Explanation)
	require.Equal(t, map[string]any{"kid": "k1", "alg": "RS256", "sub": "user-42"}, v.Data)

	t.Run("cached", func(t *testing.T) {
		v, err := f.check.Run(context.Background(), jwtInput(t, "authorization", f.token(t)))
		require.NoError(t, err)
		require.True(t, v.Pass, v.Explanation)
		require.Equal(t, int64(1), f.issuer.fetches.Load())
	})

	t.Run("refetched after cacheMaxAge", func(t *testing.T) {
		f.clock.Advance(24*time.Hour + time.Second)
		v, err := f.check.Run(context.Background(), jwtInput(t, "authorization", f.token(t)))
		require.NoError(t, err)
		require.True(t, v.Pass, v.Explanation)
		require.Equal(t, int64(2), f.issuer.fetches.Load())
	})

	t.Run("another header", func(t *testing.T) {
		g := newJWTFixture(t, map[string]any{"headerKey": "X-Auth-Token"})
		v, err := g.check.Run(context.Background(), jwtInput(t, "x-auth-token", g.token(t)))
		require.NoError(t, err)
		require.True(t, v.Pass, v.Explanation)
	})

	t.Run("ES256", func(t *testing.T) {
		g := newJWTFixture(t, map[string]any{"algorithms": []any{"ES256"}})
		ec, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		require.NoError(t, err)
		k, err := jwk.Import(ec)
		require.NoError(t, err)
		require.NoError(t, k.Set(jwk.KeyIDKey, "ec1"))
		g.issuer.publish(k)
		now := g.clock.Now()
		v, err := g.check.Run(context.Background(), jwtInput(t, "authorization", sign(t, k, jwa.ES256(), now, now.Add(time.Hour))))
		require.NoError(t, err)
		require.True(t, v.Pass, v.Explanation)
		// RS256 is not among this check's algorithms.
		v, err = g.check.Run(context.Background(), jwtInput(t, "authorization", g.token(t)))
		require.NoError(t, err)
		require.False(t, v.Pass)
	})
}

func TestJWTRefused(t *testing.T) {
	f := newJWTFixture(t, nil)
	now := f.clock.Now()
	pubDER, err := x509.MarshalPKIXPublicKey(&f.priv.PublicKey)
	require.NoError(t, err)
	pubPEM := pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pubDER})
	otherPriv, err := rsa.GenerateKey(rand.Reader, 2048)
	require.NoError(t, err)

	cases := []struct {
		name  string
		token string
		want  string
	}{
		{"missing", "", "missing Authorization"},
		{"not a JWT", "Bearer abc", "compact"},
		{"expired", sign(t, f.key, jwa.RS256(), now.Add(-2*time.Hour), now.Add(-time.Hour)), "exp"},
		{"not yet issued", sign(t, f.key, jwa.RS256(), now.Add(time.Hour), now.Add(2*time.Hour)), "iat"},
		{"older than maxTokenAge", sign(t, f.key, jwa.RS256(), now.Add(-25*time.Hour), now.Add(time.Hour)), "maxTokenAge"},
		{"no iat", sign(t, f.key, jwa.RS256(), time.Time{}, now.Add(time.Hour)), "iat"},
		{"alg none", unsignedToken(`{"alg":"none","kid":"k1"}`, now), "not allowed"},
		{"HS256 keyed with the RSA public key", hmacToken(t, pubPEM, now), "not allowed"},
		{"HS256 keyed with the modulus", hmacToken(t, f.priv.PublicKey.N.Bytes(), now), "not allowed"},
		{"signed by another key under the same kid", sign(t, rsaKey(t, otherPriv, "k1", jwa.RS256()), jwa.RS256(), now, now.Add(time.Hour)), "verif"},
		{"alg other than the key's", sign(t, rsaKey(t, f.priv, "k1", jwa.RS384()), jwa.RS384(), now, now.Add(time.Hour)), "not a key for RS384"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			v, err := f.check.Run(context.Background(), jwtInput(t, "authorization", tc.token))
			require.NoError(t, err)
			require.False(t, v.Pass)
			require.Contains(t, v.Explanation, tc.want)
		})
	}

	t.Run("expired within the clock tolerance", func(t *testing.T) {
		v, err := f.check.Run(context.Background(), jwtInput(t, "authorization", sign(t, f.key, jwa.RS256(), now.Add(-time.Hour), now.Add(-3*time.Second))))
		require.NoError(t, err)
		require.True(t, v.Pass, v.Explanation)
	})

	t.Run("after hook", func(t *testing.T) {
		in := jwtInput(t, "authorization", f.token(t))
		in.Hook = guardrails.AfterRequest
		_, err := f.check.Run(context.Background(), in)
		require.Error(t, err)
	})
}

// A kid the cached JWKS lacks refetches it once; more such tokens do not refetch it until
// kidRefreshInterval has passed, when a rotated key is found.
func TestJWTUnknownKidRefreshesOnce(t *testing.T) {
	f := newJWTFixture(t, nil)
	v, err := f.check.Run(context.Background(), jwtInput(t, "authorization", f.token(t)))
	require.NoError(t, err)
	require.True(t, v.Pass)
	require.Equal(t, int64(1), f.issuer.fetches.Load())

	priv2, err := rsa.GenerateKey(rand.Reader, 2048)
	require.NoError(t, err)
	k2 := rsaKey(t, priv2, "k2", jwa.RS256())
	now := f.clock.Now()
	rotated := sign(t, k2, jwa.RS256(), now, now.Add(time.Hour))

	v, err = f.check.Run(context.Background(), jwtInput(t, "authorization", rotated))
	require.NoError(t, err)
	require.False(t, v.Pass)
	require.Contains(t, v.Explanation, `no key for kid "k2"`)
	require.Equal(t, int64(2), f.issuer.fetches.Load(), "refetched once")

	f.issuer.publish(k2)
	v, err = f.check.Run(context.Background(), jwtInput(t, "authorization", rotated))
	require.NoError(t, err)
	require.False(t, v.Pass)
	require.Equal(t, int64(2), f.issuer.fetches.Load(), "not again within the interval")

	f.clock.Advance(11 * time.Second)
	v, err = f.check.Run(context.Background(), jwtInput(t, "authorization", rotated))
	require.NoError(t, err)
	require.True(t, v.Pass, v.Explanation)
	require.Equal(t, int64(3), f.issuer.fetches.Load())
}

func TestJWTJWKSErrors(t *testing.T) {
	t.Run("JWKS answers 500", func(t *testing.T) {
		f := newJWTFixture(t, nil)
		f.issuer.status.Store(500)
		_, err := f.check.Run(context.Background(), jwtInput(t, "authorization", f.token(t)))
		require.ErrorContains(t, err, "500")
	})

	t.Run("JWKS never answers", func(t *testing.T) {
		deps := guardedDeps(t)
		c, err := guardrails.NewJWTCheck(map[string]any{"jwksUri": blockingServer(t)}, deps)
		require.NoError(t, err)
		f := newJWTFixture(t, nil)
		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		defer cancel()
		_, err = runWithin(t, 10*time.Second, c, ctx, jwtInput(t, "authorization", f.token(t)))
		require.ErrorIs(t, err, context.DeadlineExceeded)
	})

	t.Run("JWKS refused at call", func(t *testing.T) {
		url, hits := refusedServer(t)
		deps := guardedDeps(t)
		deps.CheckURL = lenientCheck
		c, err := guardrails.NewJWTCheck(map[string]any{"jwksUri": url}, deps)
		require.NoError(t, err)
		f := newJWTFixture(t, nil)
		_, err = c.Run(context.Background(), jwtInput(t, "authorization", f.token(t)))
		require.ErrorContains(t, err, "not allowed")
		require.Zero(t, hits.Load())
	})
}

func TestJWTParams(t *testing.T) {
	deps := guardedDeps(t)
	u := "http://127.0.0.1:9/jwks"
	cases := []struct {
		name   string
		params map[string]any
		param  string
	}{
		{"jwksUri missing", map[string]any{}, "jwksUri"},
		{"jwksUri refused", map[string]any{"jwksUri": "http://192.168.1.10/jwks"}, "jwksUri"},
		{"headerKey invalid", map[string]any{"jwksUri": u, "headerKey": "bad header"}, "headerKey"},
		{"cacheMaxAge zero", map[string]any{"jwksUri": u, "cacheMaxAge": 0}, "cacheMaxAge"},
		{"clockTolerance too large", map[string]any{"jwksUri": u, "clockTolerance": 301}, "clockTolerance"},
		{"clockTolerance negative", map[string]any{"jwksUri": u, "clockTolerance": -1}, "clockTolerance"},
		{"maxTokenAge unreadable", map[string]any{"jwksUri": u, "maxTokenAge": "forever"}, "maxTokenAge"},
		{"maxTokenAge too long", map[string]any{"jwksUri": u, "maxTokenAge": "400d"}, "maxTokenAge"},
		{"maxTokenAge a number", map[string]any{"jwksUri": u, "maxTokenAge": 3600}, "maxTokenAge"},
		{"HS256", map[string]any{"jwksUri": u, "algorithms": []any{"RS256", "HS256"}}, "algorithms[1]"},
		{"none", map[string]any{"jwksUri": u, "algorithms": []any{"none"}}, "algorithms[0]"},
		{"algorithms empty", map[string]any{"jwksUri": u, "algorithms": []any{}}, "algorithms"},
		{"unknown", map[string]any{"jwksUri": u, "issuers": "x"}, "issuers"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := guardrails.NewJWTCheck(tc.params, deps)
			requireParamError(t, err, tc.param)
		})
	}
	for _, age := range []string{"1d", "12h", "30 minutes", "2w", "90s", "1.5h"} {
		_, err := guardrails.NewJWTCheck(map[string]any{"jwksUri": u, "maxTokenAge": age}, deps)
		require.NoError(t, err, age)
	}
}

func b64(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }

func claims(now time.Time) string {
	raw, _ := json.Marshal(map[string]any{"sub": "user-42", "iat": now.Unix(), "exp": now.Add(time.Hour).Unix()})
	return string(raw)
}

func unsignedToken(header string, now time.Time) string {
	return b64(header) + "." + b64(claims(now)) + "."
}

// hmacToken is the algorithm-confusion forgery: HS256 keyed with public key material.
func hmacToken(t *testing.T, secret []byte, now time.Time) string {
	t.Helper()
	signing := b64(`{"alg":"HS256","kid":"k1","typ":"JWT"}`) + "." + b64(claims(now))
	m := hmac.New(sha256.New, secret)
	m.Write([]byte(signing))
	return signing + "." + base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// issue and audience name who must have issued the token and for whom: a token of the same
// JWKS minted for another application, or by another issuer, is refused, naming the claim.
func TestJWTIssuerAndAudience(t *testing.T) {
	f := newJWTFixture(t, map[string]any{"issuer": "https://idp.example", "audience": []any{"causeway", "gateway"}})
	now := f.clock.Now()
	token := func(claims map[string]any) string {
		tok := jwt.New()
		require.NoError(t, tok.Set(jwt.IssuedAtKey, now.Add(-time.Minute)))
		require.NoError(t, tok.Set(jwt.ExpirationKey, now.Add(time.Hour)))
		for k, v := range claims {
			require.NoError(t, tok.Set(k, v))
		}
		raw, err := jwt.Sign(tok, jwt.WithKey(jwa.RS256(), f.key))
		require.NoError(t, err)
		return string(raw)
	}
	cases := []struct {
		name   string
		claims map[string]any
		want   string // "" passes
	}{
		{"issuer and one audience", map[string]any{"iss": "https://idp.example", "aud": []string{"other", "gateway"}}, ""},
		{"another issuer", map[string]any{"iss": "https://evil.example", "aud": "causeway"}, `"iss"`},
		{"no issuer", map[string]any{"aud": "causeway"}, `"iss"`},
		{"another application", map[string]any{"iss": "https://idp.example", "aud": "billing"}, `"aud"`},
		{"no audience", map[string]any{"iss": "https://idp.example"}, `"aud"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			v, err := f.check.Run(context.Background(), jwtInput(t, "authorization", "Bearer "+token(tc.claims)))
			require.NoError(t, err)
			if tc.want == "" {
				require.True(t, v.Pass, v.Explanation)
				return
			}
			require.False(t, v.Pass)
			require.Contains(t, v.Explanation, tc.want)
		})
	}

	for name, params := range map[string]map[string]any{
		"audience empty":      {"audience": []any{}},
		"audience not a list": {"audience": 3},
		"issuer empty":        {"issuer": ""},
	} {
		t.Run(name, func(t *testing.T) {
			params["jwksUri"] = f.issuer.URL
			_, err := guardrails.NewJWTCheck(params, guardedDeps(t))
			var pe *guardrails.ParamError
			require.ErrorAs(t, err, &pe)
		})
	}
}
