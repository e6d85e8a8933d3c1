package pricing

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path"
	"regexp"
	"sort"
	"strings"

	"github.com/causeway/causeway/domain"
)

// document is the prices of one source: provider → model → pricing, with a case-folded index.
type document struct {
	models map[string]map[string]ModelPricing
	folded map[string]map[string]string // provider → lower-case model → model
	// skipped names the entries that were not valid prices, for the log.
	skipped []string
}

func (d *document) add(provider, model string, raw json.RawMessage) {
	if model == "default" {
		return
	}
	p, err := parseEntry(raw)
	if err != nil {
		d.skipped = append(d.skipped, fmt.Sprintf("%s/%s: %v", provider, model, err))
		return
	}
	if d.models == nil {
		d.models, d.folded = map[string]map[string]ModelPricing{}, map[string]map[string]string{}
	}
	if d.models[provider] == nil {
		d.models[provider], d.folded[provider] = map[string]ModelPricing{}, map[string]string{}
	}
	d.models[provider][model] = p
	d.folded[provider][strings.ToLower(model)] = model
}

var (
	datedSuffix    = regexp.MustCompile(`(-\d{4}-\d{2}-\d{2}|-\d{8}|@\d{8})$`)
	bedrockRegions = regexp.MustCompile(`^(us|eu|apac|global|us-gov|ca|jp|au)\.`)
)

// find looks a model up: exactly, then case-insensitively, then without a Bedrock region
// prefix and without a trailing date. It answers the name it matched.
func (d document) find(provider, model string) (string, ModelPricing, bool) {
	undated := datedSuffix.ReplaceAllString(model, "")
	unregioned := bedrockRegions.ReplaceAllString(model, "")
	for _, m := range []string{model, unregioned, undated, datedSuffix.ReplaceAllString(unregioned, "")} {
		if m == "" || m == "default" {
			continue
		}
		if p, ok := d.models[provider][m]; ok {
			return m, p, true
		}
		if name, ok := d.folded[provider][strings.ToLower(m)]; ok {
			return name, d.models[provider][name], true
		}
	}
	return "", ModelPricing{}, false
}

// readDir reads every <provider>.json of dir in fsys: an object of model → entry.
func readDir(fsys fs.FS, dir string) (document, error) {
	entries, err := fs.ReadDir(fsys, dir)
	if err != nil {
		return document{}, err
	}
	var doc document
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || !strings.HasSuffix(name, ".json") || strings.HasPrefix(name, ".") {
			continue
		}
		raw, err := fs.ReadFile(fsys, path.Join(dir, name))
		if err != nil {
			return document{}, err
		}
		var models map[string]json.RawMessage
		if err := json.Unmarshal(raw, &models); err != nil {
			return document{}, fmt.Errorf("%s: %w", name, err)
		}
		provider := domain.NormaliseProvider(strings.TrimSuffix(name, ".json"))
		for _, model := range sortedKeys(models) {
			doc.add(provider, model, models[model])
		}
	}
	return doc, nil
}

// readFile reads one file: an object of provider → model → entry.
func readFile(name string) (document, error) {
	raw, err := os.ReadFile(name)
	if err != nil {
		return document{}, err
	}
	var all map[string]map[string]json.RawMessage
	if err := json.Unmarshal(raw, &all); err != nil {
		return document{}, fmt.Errorf("%s: %w", name, err)
	}
	var doc document
	for _, provider := range sortedKeys(all) {
		for _, model := range sortedKeys(all[provider]) {
			doc.add(domain.NormaliseProvider(provider), model, all[provider][model])
		}
	}
	return doc, nil
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// parseEntry reads one model's prices: a ModelPricingConfig, or one wrapped in
// {"pricing_config": ...}. Fields this package does not use (calculate, batch_config, image
// prices) are ignored; the prices it uses must be valid.
func parseEntry(raw json.RawMessage) (ModelPricing, error) {
	var e struct {
		PricingConfig json.RawMessage     `json:"pricing_config"`
		PayAsYouGo    *domain.ModelPrices `json:"pay_as_you_go"`
		Currency      string              `json:"currency"`
	}
	if err := json.Unmarshal(raw, &e); err != nil {
		return ModelPricing{}, err
	}
	if len(e.PricingConfig) > 0 && e.PayAsYouGo == nil {
		if err := json.Unmarshal(e.PricingConfig, &e); err != nil {
			return ModelPricing{}, err
		}
	}
	if e.PayAsYouGo == nil {
		return ModelPricing{}, fmt.Errorf("no pay_as_you_go prices")
	}
	if e.Currency != "" && !strings.EqualFold(e.Currency, domain.PricingCurrency) {
		return ModelPricing{}, fmt.Errorf("currency must be USD (got %q)", e.Currency)
	}
	if err := domain.ValidatePrices("pay_as_you_go", *e.PayAsYouGo); err != nil {
		return ModelPricing{}, err
	}
	return ModelPricing{PayAsYouGo: *e.PayAsYouGo, Currency: domain.PricingCurrency}, nil
}
