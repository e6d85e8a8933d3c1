package guardrails

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"sync"
)

// default.pii finds personal data and secrets in the text without any outside service, and
// either fails the check or redacts what it found. The reference gateway has no local PII
// check (its PII checks call partners), hence the id of our own.
//
// Each category is a pattern and a validation that keeps false positives low:
//
//	email        local@domain.tld
//	phone        international numbers written with + (8 to 15 digits), and North American
//	             numbers written with separators: (415) 555-0132, 415-555-0132, +1 415 555 0132;
//	             a bare run of digits is not a phone number
//	credit_card  13 to 19 digits (spaces or dashes allowed) of a known network (Visa,
//	             Mastercard, American Express, Discover, JCB, Diners, UnionPay) passing Luhn
//	iban         a known country's length, checked with ISO 13616's mod-97
//	national_id  US Social Security numbers written 123-45-6789 or 123 45 6789 (area not 000,
//	             666 nor 9xx, group not 00, serial not 0000) and UK National Insurance
//	             numbers (AB 12 34 56 C, with the prefixes HMRC never issues refused)
//	api_key      OpenAI (sk-, sk-proj-...) and Anthropic (sk-ant-...) keys, AWS access key ids
//	             (AKIA..., ASIA...), GitHub tokens (ghp_..., github_pat_...), Google API keys
//	             (AIza...), Slack tokens (xoxb-, xoxp-...), Stripe secret keys, JWTs (three
//	             base64url parts whose header names an alg) and PEM private keys
//
// Matches are replaced by [REDACTED:<CATEGORY>] (EMAIL, PHONE, CREDIT_CARD, IBAN,
// NATIONAL_ID, API_KEY). The check's data counts matches per category and never repeats
// what it found.

var piiCategories = []string{"email", "phone", "credit_card", "iban", "national_id", "api_key"}

// piiAliases are the reference's PII category names (its partner checks') that mean ours.
var piiAliases = map[string]string{
	"EMAIL_ADDRESS": "email", "PHONE_NUMBER": "phone", "CREDIT_CARD": "credit_card", "SSN": "national_id",
}

type piiDetector struct {
	category string
	re       *regexp.Regexp
	// valid tells whether text[start:end] is the category's, looking around it if need be;
	// it returns the end of the value it accepted (a candidate may be cut shorter), or -1.
	valid func(text string, start, end int) int

	// Prefilters, so that a text without candidates costs a scan and not a regular expression
	// (Go's is linear but slow on a kilobyte): the pattern runs only when the text holds one of
	// must, and, with a span set, only on the spans of the set's bytes that hold minDigits.
	must      []string
	span      *[256]bool
	minDigits int
}

func byteSet(chars string) *[256]bool {
	var set [256]bool
	for i := 0; i < len(chars); i++ {
		set[chars[i]] = true
	}
	return &set
}

const (
	digits  = "0123456789"
	upperAZ = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
	lowerAZ = "abcdefghijklmnopqrstuvwxyz"
)

var (
	numberSpan = byteSet(digits + " -")
	phoneSpan  = byteSet(digits + " ().+-")
	codeSpan   = byteSet(upperAZ + digits + " ")
	emailSpan  = byteSet(upperAZ + lowerAZ + digits + "._%+-@")
)

// piiDetectors are in priority order: where two matches overlap the earlier detector's wins.
// They are compiled when a PII check first runs, not at start: a gateway that runs none keeps
// their memory.
var piiDetectors = sync.OnceValue(func() []piiDetector {
	return []piiDetector{
		{category: "api_key", re: regexp.MustCompile(`(?s)-----BEGIN [A-Z ]*PRIVATE KEY-----.*?-----END [A-Z ]*PRIVATE KEY-----`), valid: whole, must: []string{"-----BEGIN "}},
		{category: "api_key", re: regexp.MustCompile(`\bsk-ant-[A-Za-z0-9_-]{20,}`), valid: whole, must: []string{"sk-ant-"}},
		{category: "api_key", re: regexp.MustCompile(`\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}`), valid: randomLooking(3), must: []string{"sk-"}},
		{category: "api_key", re: regexp.MustCompile(`\b(?:AKIA|ASIA|ABIA|ACCA)[0-9A-Z]{16}\b`), valid: whole, must: []string{"AKIA", "ASIA", "ABIA", "ACCA"}},
		{category: "api_key", re: regexp.MustCompile(`\b(?:gh[pousr]_[A-Za-z0-9]{36,255}|github_pat_[A-Za-z0-9_]{22,255})\b`), valid: whole, must: []string{"ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"}},
		{category: "api_key", re: regexp.MustCompile(`\bAIza[0-9A-Za-z_-]{35}`), valid: notFollowedBy(upperAZ + lowerAZ + digits + "_-"), must: []string{"AIza"}},
		{category: "api_key", re: regexp.MustCompile(`\bxox[abposr]-[A-Za-z0-9-]{10,}`), valid: whole, must: []string{"xox"}},
		{category: "api_key", re: regexp.MustCompile(`\b[rs]k_(?:live|test)_[A-Za-z0-9]{16,}`), valid: whole, must: []string{"k_live_", "k_test_"}},
		{category: "api_key", re: regexp.MustCompile(`\beyJ[A-Za-z0-9_-]{5,}\.eyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{10,}`), valid: jwtValid, must: []string{"eyJ"}},
		{category: "credit_card", re: regexp.MustCompile(`\b\d(?:[ -]?\d){12,22}\b`), valid: cardValid, span: numberSpan, minDigits: 13},
		{category: "iban", re: regexp.MustCompile(`\b[A-Z]{2}\d{2}(?: ?[A-Z0-9]{4}){2,8}(?: ?[A-Z0-9]{1,3})?\b`), valid: ibanValid, span: codeSpan, minDigits: 4},
		{category: "national_id", re: regexp.MustCompile(`\b\d{3}-\d{2}-\d{4}\b|\b\d{3} \d{2} \d{4}\b`), valid: ssnValid, span: numberSpan, minDigits: 9},
		{category: "national_id", re: regexp.MustCompile(`\b[A-CEGHJ-PR-TW-Z][A-CEGHJ-NPR-TW-Z] ?\d{2} ?\d{2} ?\d{2} ?[A-D]\b`), valid: ninoValid, span: codeSpan, minDigits: 6},
		{category: "email", re: regexp.MustCompile(`\b[A-Za-z0-9._%+-]+@[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*\.[A-Za-z]{2,24}\b`), valid: emailValid, must: []string{"@"}, span: emailSpan},
		{category: "phone", re: regexp.MustCompile(`\+\d[\d ().-]{6,22}\d`), valid: intlPhoneValid, must: []string{"+"}, span: phoneSpan, minDigits: 8},
		{category: "phone", re: regexp.MustCompile(`(?:\+?1[ .-]?)?(?:\([2-9]\d{2}\)|\b[2-9]\d{2})[ .-]?[2-9]\d{2}[ .-]\d{4}\b`), valid: nanpValid, span: phoneSpan, minDigits: 10},
	}
})

type piiMatch struct {
	start, end int
	category   string
}

// findPII returns the non-overlapping matches of the categories in text, in text order.
func findPII(text string, cats map[string]bool) []piiMatch {
	var out []piiMatch
	for _, d := range piiDetectors() {
		if !cats[d.category] || !mayHold(text, d.must) {
			continue
		}
		for _, loc := range d.candidates(text) {
			end := d.valid(text, loc[0], loc[1])
			if end < 0 {
				continue
			}
			m := piiMatch{loc[0], end, d.category}
			if !overlaps(out, m) {
				out = append(out, m)
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].start < out[j].start })
	return out
}

func mayHold(text string, must []string) bool {
	if len(must) == 0 {
		return true
	}
	for _, m := range must {
		if strings.Contains(text, m) {
			return true
		}
	}
	return false
}

// candidates are the pattern's matches in text, searched in the spans of the detector's set
// that hold enough digits (offsets are the text's).
func (d piiDetector) candidates(text string) [][]int {
	if d.span == nil {
		return d.re.FindAllStringIndex(text, -1)
	}
	var out [][]int
	for i := 0; i < len(text); {
		if !d.span[text[i]] {
			i++
			continue
		}
		j, n := i, 0
		for j < len(text) && d.span[text[j]] {
			if isDigit(text[j]) {
				n++
			}
			j++
		}
		if n >= d.minDigits {
			for _, loc := range d.re.FindAllStringIndex(text[i:j], -1) {
				out = append(out, []int{loc[0] + i, loc[1] + i})
			}
		}
		i = j
	}
	return out
}

func overlaps(ms []piiMatch, m piiMatch) bool {
	for _, x := range ms {
		if m.start < x.end && x.start < m.end {
			return true
		}
	}
	return false
}

func redactMatches(text string, ms []piiMatch) string {
	var b strings.Builder
	last := 0
	for _, m := range ms {
		b.WriteString(text[last:m.start])
		b.WriteString("[REDACTED:" + strings.ToUpper(m.category) + "]")
		last = m.end
	}
	b.WriteString(text[last:])
	return b.String()
}

// --- validations ----------------------------------------------------------------------------

func whole(_ string, _, end int) int { return end }

func notFollowedBy(set string) func(string, int, int) int {
	return func(text string, _, end int) int {
		if end < len(text) && strings.IndexByte(set, text[end]) >= 0 {
			return -1
		}
		return end
	}
}

// randomLooking accepts a key whose characters mix upper case, lower case and digits (kinds
// of the three), so that hyphenated words (sk-learn-compatible-models) are not keys.
func randomLooking(kinds int) func(string, int, int) int {
	return func(text string, start, end int) int {
		var upper, lower, digit bool
		for _, r := range text[start:end] {
			upper = upper || r >= 'A' && r <= 'Z'
			lower = lower || r >= 'a' && r <= 'z'
			digit = digit || r >= '0' && r <= '9'
		}
		n := 0
		for _, b := range []bool{upper, lower, digit} {
			if b {
				n++
			}
		}
		if n < kinds {
			return -1
		}
		return end
	}
}

func jwtValid(text string, start, end int) int {
	header := text[start : strings.IndexByte(text[start:end], '.')+start]
	raw, err := base64.RawURLEncoding.DecodeString(header)
	if err != nil {
		return -1
	}
	var h map[string]any
	if json.Unmarshal(raw, &h) != nil || h["alg"] == nil {
		return -1
	}
	return end
}

func digitsOf(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] >= '0' && s[i] <= '9' {
			b.WriteByte(s[i])
		}
	}
	return b.String()
}

func luhn(digits string) bool {
	sum := 0
	double := false
	for i := len(digits) - 1; i >= 0; i-- {
		d := int(digits[i] - '0')
		if double {
			d *= 2
			if d > 9 {
				d -= 9
			}
		}
		sum += d
		double = !double
	}
	return sum%10 == 0
}

// cardNetwork tells whether digits start as a card network's numbers do and have its length.
func cardNetwork(d string) bool {
	n := len(d)
	p2 := atoiPrefix(d, 2)
	p3 := atoiPrefix(d, 3)
	p4 := atoiPrefix(d, 4)
	p6 := atoiPrefix(d, 6)
	switch {
	case d[0] == '4':
		return n == 13 || n == 16 || n == 19 // Visa
	case p2 >= 51 && p2 <= 55 || p4 >= 2221 && p4 <= 2720:
		return n == 16 // Mastercard
	case p2 == 34 || p2 == 37:
		return n == 15 // American Express
	case p4 == 6011 || p2 == 65 || p3 >= 644 && p3 <= 649 || p6 >= 622126 && p6 <= 622925:
		return n >= 16 && n <= 19 // Discover
	case p4 >= 3528 && p4 <= 3589:
		return n >= 16 && n <= 19 // JCB
	case p3 >= 300 && p3 <= 305 || p2 == 36 || p2 == 38 || p2 == 39 || p4 == 3095:
		return n >= 14 && n <= 19 // Diners Club
	case p2 == 62:
		return n >= 16 && n <= 19 // UnionPay
	}
	return false
}

func atoiPrefix(d string, n int) int {
	if len(d) < n {
		return -1
	}
	v := 0
	for i := 0; i < n; i++ {
		v = v*10 + int(d[i]-'0')
	}
	return v
}

// cardValid accepts the longest run of the candidate's digit groups, from its start, that is
// a card number: "4111 1111 1111 1111 2024" holds a card followed by a year.
func cardValid(text string, start, end int) int {
	if start > 0 && isAlnum(text[start-1]) {
		return -1
	}
	cand := text[start:end]
	cuts := []int{len(cand)}
	for i := len(cand) - 1; i > 0; i-- {
		if cand[i] == ' ' || cand[i] == '-' {
			cuts = append(cuts, i)
		}
	}
	for _, cut := range cuts {
		d := digitsOf(cand[:cut])
		if len(d) >= 13 && len(d) <= 19 && cardNetwork(d) && luhn(d) {
			return start + cut
		}
	}
	return -1
}

// ibanLengths are the lengths of the IBANs of the countries that issue them (SWIFT's registry).
var ibanLengths = map[string]int{
	"AD": 24, "AE": 23, "AL": 28, "AT": 20, "AZ": 28, "BA": 20, "BE": 16, "BG": 22, "BH": 22, "BR": 29,
	"BY": 28, "CH": 21, "CR": 22, "CY": 28, "CZ": 24, "DE": 22, "DK": 18, "DO": 28, "EE": 20, "EG": 29,
	"ES": 24, "FI": 18, "FO": 18, "FR": 27, "GB": 22, "GE": 22, "GI": 23, "GL": 18, "GR": 27, "GT": 28,
	"HR": 21, "HU": 28, "IE": 22, "IL": 23, "IQ": 23, "IS": 26, "IT": 27, "JO": 30, "KW": 30, "KZ": 20,
	"LB": 28, "LC": 32, "LI": 21, "LT": 20, "LU": 20, "LV": 21, "LY": 25, "MC": 27, "MD": 24, "ME": 22,
	"MK": 19, "MR": 27, "MT": 31, "MU": 30, "NL": 18, "NO": 15, "PK": 24, "PL": 28, "PS": 29, "PT": 25,
	"QA": 29, "RO": 24, "RS": 22, "SA": 24, "SC": 31, "SD": 18, "SE": 24, "SI": 19, "SK": 24, "SM": 27,
	"ST": 25, "SV": 28, "TL": 23, "TN": 24, "TR": 26, "UA": 29, "VA": 22, "VG": 24, "XK": 20,
}

func ibanValid(text string, start, end int) int {
	if start > 0 && isAlnum(text[start-1]) {
		return -1
	}
	cand := text[start:end]
	want, ok := ibanLengths[cand[:2]]
	if !ok {
		return -1
	}
	// The candidate may run into a following word: keep the prefix of the IBAN's length.
	n := 0
	for i := 0; i < len(cand); i++ {
		if cand[i] == ' ' {
			continue
		}
		n++
		if n == want {
			if i+1 < len(cand) && cand[i+1] != ' ' || i+1 == len(cand) && end < len(text) && isAlnum(text[end]) {
				return -1 // the value goes on past the length
			}
			if mod97(strings.ReplaceAll(cand[:i+1], " ", "")) {
				return start + i + 1
			}
			return -1
		}
	}
	return -1
}

// mod97 is ISO 13616's check: the country and check digits moved to the end, letters as
// 10 to 35, the number modulo 97 is 1.
func mod97(iban string) bool {
	s := iban[4:] + iban[:4]
	rem := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= '0' && c <= '9':
			rem = (rem*10 + int(c-'0')) % 97
		case c >= 'A' && c <= 'Z':
			v := int(c-'A') + 10
			rem = (rem*100 + v) % 97
		default:
			return false
		}
	}
	return rem == 1
}

// ssnValid refuses numbers the Social Security Administration never issues, the famous
// specimen, and numbers inside longer dashed sequences.
func ssnValid(text string, start, end int) int {
	if start > 0 && (text[start-1] == '-' || text[start-1] == '.') || end < len(text)-1 && text[end] == '-' && isDigit(text[end+1]) {
		return -1
	}
	d := digitsOf(text[start:end])
	area, group, serial := d[:3], d[3:5], d[5:]
	if area == "000" || area == "666" || area[0] == '9' || group == "00" || serial == "0000" || d == "078051120" {
		return -1
	}
	return end
}

func isDigit(b byte) bool { return b >= '0' && b <= '9' }

var ninoBadPrefixes = []string{"BG", "GB", "NK", "KN", "TN", "NT", "ZZ"}

func ninoValid(text string, start, end int) int {
	if start > 0 && isAlnum(text[start-1]) || end < len(text) && isAlnum(text[end]) || inList(ninoBadPrefixes, text[start:start+2]) {
		return -1
	}
	return end
}

func emailValid(text string, start, end int) int {
	local := text[start : strings.IndexByte(text[start:end], '@')+start]
	if strings.HasPrefix(local, ".") || strings.HasSuffix(local, ".") || strings.Contains(local, "..") {
		return -1
	}
	return end
}

// intlPhoneValid accepts +<8 to 15 digits> standing on its own (not a sum like 3+4567890).
func intlPhoneValid(text string, start, end int) int {
	if start > 0 && (isDigit(text[start-1]) || isLetter(text[start-1])) {
		return -1
	}
	if end < len(text) && (isDigit(text[end]) || isLetter(text[end])) {
		return -1
	}
	cand := text[start:end]
	if strings.Count(cand, "(") != strings.Count(cand, ")") || strings.Contains(cand, "  ") || strings.Contains(cand, "--") {
		return -1
	}
	if n := len(digitsOf(cand)); n < 8 || n > 15 {
		return -1
	}
	return end
}

func nanpValid(text string, start, end int) int {
	if start > 0 && (isDigit(text[start-1]) || text[start-1] == '-' || isLetter(text[start-1])) {
		return -1
	}
	if end < len(text) && text[end] == '-' {
		return -1
	}
	return end
}

func isLetter(b byte) bool { return b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' }

// isAlnum is a byte that would make a match part of a longer word (the spans the patterns
// run on cut words where the text does not).
func isAlnum(b byte) bool { return isLetter(b) || isDigit(b) || b >= 0x80 }

// --- the check ------------------------------------------------------------------------------

type piiCheck struct {
	cats   map[string]bool
	list   []string
	redact bool
}

// newPII: categories (default all: email, phone, credit_card, iban, national_id, api_key; the
// reference's EMAIL_ADDRESS, PHONE_NUMBER, CREDIT_CARD and SSN are accepted for email, phone,
// credit_card and national_id), redact (default false). Without redact the check fails when
// it finds one; with redact it passes and returns the body with every match, in every message
// (or every choice of the answer), replaced. A streamed answer cannot be rewritten: there a
// match fails the check whatever redact says.
func newPII(params map[string]any, _ Deps) (Check, error) {
	p := readParams(params)
	var list []string
	if p.has("categories") {
		for i, c := range p.strings("categories", true, 2*len(piiCategories), false) {
			if alias, ok := piiAliases[c]; ok {
				c = alias
			}
			if !inList(piiCategories, c) {
				p.fail(fmt.Sprintf("categories[%d]", i), "must be one of %s, got %q", strings.Join(piiCategories, ", "), c)
				continue
			}
			if !inList(list, c) {
				list = append(list, c)
			}
		}
	} else {
		p.lookup("categories")
		list = piiCategories
	}
	redact := p.boolean("redact", false)
	p.runner()
	if err := p.done(); err != nil {
		return nil, err
	}
	cats := map[string]bool{}
	for _, c := range list {
		cats[c] = true
	}
	return &piiCheck{cats: cats, list: list, redact: redact}, nil
}

func (c *piiCheck) Transforms() bool { return c.redact }

// Windowed: PII in any window of a stream is PII in the answer.
func (c *piiCheck) Windowed() bool { return true }

func (c *piiCheck) Run(_ context.Context, in Input) (Verdict, error) {
	counts := map[string]int{}
	body := hookBody(in)
	if in.Stream || len(body) == 0 {
		for _, m := range findPII(textOf(in), c.cats) {
			counts[strings.ToUpper(m.category)]++
		}
		v := c.verdict(counts, false)
		if len(counts) > 0 && c.redact {
			v.Explanation += " A streamed answer cannot be redacted."
		}
		return v, nil
	}
	doc, err := decodeBody(body)
	if err != nil {
		return Verdict{}, fmt.Errorf("reading the body: %w", err)
	}
	visitTexts(in.Hook, doc, true, func(s string) string {
		ms := findPII(s, c.cats)
		for _, m := range ms {
			counts[strings.ToUpper(m.category)]++
		}
		if !c.redact || len(ms) == 0 {
			return s
		}
		return redactMatches(s, ms)
	})
	v := c.verdict(counts, c.redact)
	if c.redact && len(counts) > 0 {
		if v.Transformed, err = encodeBody(doc); err != nil {
			return Verdict{}, err
		}
	}
	return v, nil
}

func (c *piiCheck) verdict(counts map[string]int, redacted bool) Verdict {
	total := 0
	for _, n := range counts {
		total += n
	}
	data := map[string]any{"categories": c.list, "detected": counts, "redacted": redacted && total > 0}
	switch {
	case total == 0:
		return Verdict{Pass: true, Explanation: "No PII found.", Data: data}
	case redacted:
		return Verdict{Pass: true, Explanation: fmt.Sprintf("Redacted %d PII match(es).", total), Data: data}
	}
	return Verdict{Pass: false, Explanation: fmt.Sprintf("Found %d PII match(es).", total), Data: data}
}
