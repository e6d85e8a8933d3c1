// Package pricing knows what a model costs and computes the cost of each logged request.
//
// Units. Prices are USD cents per token (per unit for additional units), the unit of the
// reference's ModelPricingConfig: 0.00025 is $2.50 per million tokens. Costs (Cost, and
// analytics.LogRecord.Cost that the gateway fills as it settles a request, hence the analytics
// cost column) are USD.
//
// Sources, in the specification's order (part 8):
//
//  1. an override set through the admin API (a workspace's, then its organisation's), read from
//     the in-memory read model; overrides are events, so every change of price is audited, and
//     they are never cached here, so a change applies at once;
//  2. the memory cache: every answer of the sources below, found or not, for CacheTTL (1 hour,
//     "model config cache in private deployments");
//  3. the proxy service (MODEL_CONFIGS_PROXY_FETCH_ENABLED=ON, MODEL_CONFIGS_PROXY_URL):
//     GET {url}/pricing/{provider}/{model}, answering a ModelPricingConfig (so the URL
//     https://api.portkey.ai/model-configs serves the public catalogue). It is asked at most
//     once per CacheTTL per model; a proxy that fails, times out or answers 404 is passed over,
//     never failing the lookup. Each price it answers is also written to the log store
//     directory, when there is one, for later runs and other instances;
//  4. the log store (MODEL_CONFIGS_PRICING_LOG_STORE_PATH);
//  5. local files (MODEL_CONFIGS_PRICING_LOCAL_PATH), then the prices shipped in data/.
//
// Files. A path names a directory of <provider>.json files, each an object of model name →
// entry, or a single file, an object of provider → model name → entry. An entry is a
// ModelPricingConfig ({"pay_as_you_go": {...}, "currency": "USD"}) or one wrapped as
// {"pricing_config": {...}} (the layout of the public models repository); a "default" key
// is not a model and is skipped. Models match exactly, then case-insensitively, then without
// a Bedrock region prefix (us., eu., apac., global.) and without a trailing date
// (-2024-08-06, -20241022, @20241022).
//
// Providers are named as the gateway's adapters (ai_service) name them, normalised by
// domain.NormaliseProvider: lower case, and aliases resolved (mistral → mistral-ai, azure →
// azure-openai, gemini → google, vertex → vertex-ai, together → together-ai).
//
// The package imports domain (the price types and names) and gateway/providers (the usage
// it prices); nothing of HTTP or storage.
package pricing

import (
	"context"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/causeway/causeway/domain"
)

//go:embed data/*.json
var shipped embed.FS

// Defaults of Config.
const (
	DefaultCacheTTL     = time.Hour
	DefaultProxyTimeout = 3 * time.Second
)

// Config is where prices come from. cmd/ reads it from the environment.
type Config struct {
	// ProxyFetch: MODEL_CONFIGS_PROXY_FETCH_ENABLED, on when "ON".
	ProxyFetch bool
	// ProxyURL: MODEL_CONFIGS_PROXY_URL, the base of GET {url}/pricing/{provider}/{model}.
	ProxyURL string
	// LogStorePath: MODEL_CONFIGS_PRICING_LOG_STORE_PATH, a directory (read, and written with
	// the proxy's answers) or a single file (read only). It need not exist yet.
	LogStorePath string
	// LocalPath: MODEL_CONFIGS_PRICING_LOCAL_PATH, a directory or file read before the shipped
	// prices; it must exist when set.
	LocalPath string
	// CacheTTL is how long an answer is kept in memory; zero: DefaultCacheTTL (1 hour).
	CacheTTL time.Duration
	// ProxyTimeout bounds one call to the proxy; zero: DefaultProxyTimeout.
	ProxyTimeout time.Duration
}

// Validate reports every problem of the configuration at once.
func (c Config) Validate() error {
	var errs []error
	if c.ProxyFetch && c.ProxyURL == "" {
		errs = append(errs, errors.New("MODEL_CONFIGS_PROXY_FETCH_ENABLED is ON but MODEL_CONFIGS_PROXY_URL is empty"))
	}
	if c.ProxyURL != "" {
		u, err := url.Parse(c.ProxyURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			errs = append(errs, fmt.Errorf("MODEL_CONFIGS_PROXY_URL must be an http or https URL (got %q)", c.ProxyURL))
		}
	}
	if c.LocalPath != "" {
		if _, err := os.Stat(c.LocalPath); err != nil {
			errs = append(errs, fmt.Errorf("MODEL_CONFIGS_PRICING_LOCAL_PATH: %w", err))
		}
	}
	if c.CacheTTL < 0 {
		errs = append(errs, fmt.Errorf("the pricing cache TTL must not be negative (got %s)", c.CacheTTL))
	}
	if c.ProxyTimeout < 0 {
		errs = append(errs, fmt.Errorf("the pricing proxy timeout must not be negative (got %s)", c.ProxyTimeout))
	}
	return errors.Join(errs...)
}

// Overrides are the prices organisations set through the admin API; the in-memory read model
// (projections/memory, memory.Model.Overrides) answers them without I/O.
type Overrides interface {
	ModelPricingOverride(orgID, workspaceID, provider, model string) (domain.ModelPricingOverride, bool)
}

// Options are the Book's collaborators; every field may be left zero.
type Options struct {
	Now       func() time.Time // nil: time.Now
	Client    *http.Client     // nil: a client of its own
	Overrides Overrides        // nil: no overrides
	Log       *slog.Logger     // nil: discard
}

// Source says where a price came from.
type Source string

const (
	SourceWorkspaceOverride    Source = "workspace_override"
	SourceOrganisationOverride Source = "organisation_override"
	SourceProxy                Source = "proxy"
	SourceLogStore             Source = "log_store"
	SourceLocal                Source = "local"
	SourceShipped              Source = "default"
)

// ModelPricing is the reference's ModelPricingConfig: prices in USD cents per token.
type ModelPricing struct {
	PayAsYouGo domain.ModelPrices `json:"pay_as_you_go"`
	Currency   string             `json:"currency"`
}

// Quote is a model's price and where it came from, under the normalised names.
type Quote struct {
	Provider string
	Model    string
	Pricing  ModelPricing
	Source   Source
}

// Book answers prices from its sources and computes costs. It is safe for concurrent use.
type Book struct {
	cfg       Config
	now       func() time.Time
	client    *http.Client
	overrides Overrides
	log       *slog.Logger
	shipped   document

	mu         sync.Mutex
	cache      map[key]cached
	proxyTried map[key]time.Time
	fetching   map[key]bool
	files      map[string]parsedFile
	closed     bool

	storeMu sync.Mutex // one writer of the log store at a time

	ctx    context.Context // background proxy fetches; ended by Close
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

type key struct{ provider, model string }

type cached struct {
	quote   Quote
	found   bool
	expires time.Time
}

// New returns a Book over cfg's sources and the shipped prices.
func New(cfg Config, opts Options) (*Book, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.CacheTTL == 0 {
		cfg.CacheTTL = DefaultCacheTTL
	}
	if cfg.ProxyTimeout == 0 {
		cfg.ProxyTimeout = DefaultProxyTimeout
	}
	doc, err := readDir(shipped, "data")
	if err == nil && len(doc.skipped) > 0 {
		err = fmt.Errorf("invalid entries: %s", strings.Join(doc.skipped, "; "))
	}
	if err != nil {
		return nil, fmt.Errorf("pricing: shipped prices: %w", err)
	}
	b := &Book{cfg: cfg, now: opts.Now, client: opts.Client, overrides: opts.Overrides, log: opts.Log, shipped: doc,
		cache: map[key]cached{}, proxyTried: map[key]time.Time{}, fetching: map[key]bool{}, files: map[string]parsedFile{}}
	if b.now == nil {
		b.now = time.Now
	}
	if b.client == nil {
		b.client = &http.Client{Timeout: cfg.ProxyTimeout}
	}
	if b.log == nil {
		b.log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	b.ctx, b.cancel = context.WithCancel(context.Background())
	return b, nil
}

// Close stops the background fetches from the proxy and waits for them.
func (b *Book) Close() error {
	b.mu.Lock()
	b.closed = true
	b.mu.Unlock()
	b.cancel()
	b.wg.Wait()
	return nil
}

// Lookup answers the price in force for provider's model in an organisation's workspace
// (workspaceID empty: the organisation's own). On a cold cache it asks the proxy, waiting at
// most ProxyTimeout (and ctx); it never fails because a source does, only reports false when
// no source knows the model.
func (b *Book) Lookup(ctx context.Context, orgID, workspaceID, provider, model string) (Quote, bool) {
	if q, ok := b.override(orgID, workspaceID, provider, model); ok {
		return q, true
	}
	return b.base(ctx, provider, model, true)
}

func (b *Book) override(orgID, workspaceID, provider, model string) (Quote, bool) {
	if b.overrides == nil || orgID == "" {
		return Quote{}, false
	}
	if workspaceID != "" {
		if o, ok := b.overrides.ModelPricingOverride(orgID, workspaceID, provider, model); ok {
			return Quote{Provider: o.Provider, Model: o.Model, Source: SourceWorkspaceOverride,
				Pricing: ModelPricing{PayAsYouGo: o.PayAsYouGo, Currency: domain.PricingCurrency}}, true
		}
	}
	if o, ok := b.overrides.ModelPricingOverride(orgID, "", provider, model); ok {
		return Quote{Provider: o.Provider, Model: o.Model, Source: SourceOrganisationOverride,
			Pricing: ModelPricing{PayAsYouGo: o.PayAsYouGo, Currency: domain.PricingCurrency}}, true
	}
	return Quote{}, false
}

// base answers from the cache, else the proxy, the log store and the local files. wait says
// whether the proxy may be waited for; when not, it is asked in the background and its answer
// replaces the cached one when it comes.
func (b *Book) base(ctx context.Context, provider, model string, wait bool) (Quote, bool) {
	k := key{domain.NormaliseProvider(provider), strings.TrimSpace(model)}
	if k.provider == "" || k.model == "" {
		return Quote{}, false
	}
	now := b.now()
	b.mu.Lock()
	if c, hit := b.cache[k]; hit && now.Before(c.expires) {
		b.mu.Unlock()
		return c.quote, c.found
	}
	// The proxy is asked at most once per CacheTTL per model, whatever it answered.
	askProxy := b.cfg.ProxyFetch && !b.fetching[k] && !b.closed
	if last, tried := b.proxyTried[k]; tried && now.Sub(last) < b.cfg.CacheTTL {
		askProxy = false
	}
	if askProxy {
		b.proxyTried[k] = now
		if !wait {
			b.fetching[k] = true
			b.wg.Add(1)
		}
	}
	b.mu.Unlock()

	if askProxy && wait {
		if q, ok := b.fetchProxy(ctx, k); ok {
			b.remember(k, q, true)
			return q, true
		}
	}
	q, found := b.local(k)
	b.remember(k, q, found)
	// Started only now, so that the proxy's answer cannot be overwritten by the local one.
	if askProxy && !wait {
		go b.fetchInBackground(k)
	}
	return q, found
}

func (b *Book) remember(k key, q Quote, found bool) {
	b.mu.Lock()
	b.cache[k] = cached{quote: q, found: found, expires: b.now().Add(b.cfg.CacheTTL)}
	b.mu.Unlock()
}

func (b *Book) fetchInBackground(k key) {
	defer b.wg.Done()
	q, ok := b.fetchProxy(b.ctx, k)
	b.mu.Lock()
	delete(b.fetching, k)
	b.mu.Unlock()
	if ok {
		b.remember(k, q, true)
	}
}

// local answers from the log store, the local files and the shipped prices, in that order.
func (b *Book) local(k key) (Quote, bool) {
	for _, s := range []struct {
		path   string
		source Source
	}{{b.cfg.LogStorePath, SourceLogStore}, {b.cfg.LocalPath, SourceLocal}} {
		if s.path == "" {
			continue
		}
		doc, err := b.readPath(s.path)
		if err != nil {
			if !errors.Is(err, fs.ErrNotExist) {
				b.log.Warn("pricing: a pricing file cannot be read; passing it over", "path", s.path, "err", err)
			}
			continue
		}
		if name, p, ok := doc.find(k.provider, k.model); ok {
			return Quote{Provider: k.provider, Model: name, Pricing: p, Source: s.source}, true
		}
	}
	if name, p, ok := b.shipped.find(k.provider, k.model); ok {
		return Quote{Provider: k.provider, Model: name, Pricing: p, Source: SourceShipped}, true
	}
	return Quote{}, false
}

// maxProxyBody bounds one answer of the proxy.
const maxProxyBody = 1 << 20

// fetchProxy asks the proxy for one model's price. Any failure is logged and reported as
// "not found here", so the next source answers.
func (b *Book) fetchProxy(ctx context.Context, k key) (Quote, bool) {
	ctx, cancel := context.WithTimeout(ctx, b.cfg.ProxyTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, proxyURL(b.cfg.ProxyURL, k), nil)
	if err != nil {
		b.log.Warn("pricing: bad proxy URL", "err", err)
		return Quote{}, false
	}
	req.Header.Set("Accept", "application/json")
	resp, err := b.client.Do(req)
	if err != nil {
		b.log.Warn("pricing: the proxy did not answer; using the next source", "provider", k.provider, "model", k.model, "err", err)
		return Quote{}, false
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxProxyBody+1))
	switch {
	case resp.StatusCode == http.StatusNotFound:
		return Quote{}, false
	case resp.StatusCode != http.StatusOK || err != nil || len(raw) > maxProxyBody:
		b.log.Warn("pricing: the proxy failed; using the next source", "provider", k.provider, "model", k.model,
			"status", resp.StatusCode, "err", err)
		return Quote{}, false
	}
	p, err := parseEntry(raw)
	if err != nil {
		b.log.Warn("pricing: the proxy's answer is not a valid price; using the next source", "provider", k.provider,
			"model", k.model, "err", err)
		return Quote{}, false
	}
	b.store(k, p)
	return Quote{Provider: k.provider, Model: k.model, Pricing: p, Source: SourceProxy}, true
}

// proxyURL is {base}/pricing/{provider}/{model}, each segment escaped; a model's own slashes
// (meta-llama/Llama-3.3-70B-Instruct-Turbo) stay path separators, as the reference's path has them.
func proxyURL(base string, k key) string {
	segs := strings.Split(k.model, "/")
	for i, s := range segs {
		segs[i] = url.PathEscape(s)
	}
	return strings.TrimRight(base, "/") + "/pricing/" + url.PathEscape(k.provider) + "/" + strings.Join(segs, "/")
}

// store writes a price the proxy answered into the log store directory, as <provider>.json,
// so that a later run or another instance finds it when the proxy cannot be reached. A log
// store that is a single file, or absent, is only read.
func (b *Book) store(k key, p ModelPricing) {
	dir := b.cfg.LogStorePath
	if dir == "" {
		return
	}
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return
	}
	b.storeMu.Lock()
	defer b.storeMu.Unlock()
	path := filepath.Join(dir, k.provider+".json")
	models := map[string]json.RawMessage{}
	if raw, err := os.ReadFile(path); err == nil {
		if err := json.Unmarshal(raw, &models); err != nil {
			b.log.Warn("pricing: the log store file is not valid JSON; leaving it as it is", "path", path, "err", err)
			return
		}
	}
	entry, _ := json.Marshal(p)
	models[k.model] = entry
	out, _ := json.MarshalIndent(models, "", "  ")
	tmp, err := os.CreateTemp(dir, "."+k.provider+"-*.json")
	if err == nil {
		_, err = tmp.Write(append(out, '\n'))
		if cerr := tmp.Close(); err == nil {
			err = cerr
		}
		if err == nil {
			err = os.Rename(tmp.Name(), path)
		}
		if err != nil {
			_ = os.Remove(tmp.Name())
		}
	}
	if err != nil {
		b.log.Warn("pricing: the log store cannot be written", "path", path, "err", err)
	}
}

// parsedFile is a pricing file or directory read once and kept until it changes.
type parsedFile struct {
	stamp string
	doc   document
}

// readPath reads a directory or file of prices, parsing it again only when it changed.
func (b *Book) readPath(path string) (document, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return document{}, err
	}
	stamp, err := pathStamp(path, fi)
	if err != nil {
		return document{}, err
	}
	b.mu.Lock()
	pf, ok := b.files[path]
	b.mu.Unlock()
	if ok && pf.stamp == stamp {
		return pf.doc, nil
	}
	var doc document
	if fi.IsDir() {
		doc, err = readDir(os.DirFS(path), ".")
	} else {
		doc, err = readFile(path)
	}
	if err != nil {
		return document{}, err
	}
	for _, bad := range doc.skipped {
		b.log.Warn("pricing: an entry of a pricing file is not a valid price; passing it over", "path", path, "entry", bad)
	}
	b.mu.Lock()
	b.files[path] = parsedFile{stamp: stamp, doc: doc}
	b.mu.Unlock()
	return doc, nil
}

// pathStamp changes whenever a file, or one of a directory's files, is written.
func pathStamp(path string, fi fs.FileInfo) (string, error) {
	if !fi.IsDir() {
		return fmt.Sprintf("%d/%d", fi.ModTime().UnixNano(), fi.Size()), nil
	}
	entries, err := os.ReadDir(path)
	if err != nil {
		return "", err
	}
	var sb strings.Builder
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".json") || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		info, err := e.Info()
		if err != nil {
			continue
		}
		fmt.Fprintf(&sb, "%s:%d/%d;", e.Name(), info.ModTime().UnixNano(), info.Size())
	}
	return sb.String(), nil
}
