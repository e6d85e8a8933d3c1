package guardrails

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"regexp"
	"regexp/syntax"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// The text checks read Input.Text (see textOf). They mirror the reference gateway's default
// plugins of the same names; where they differ (Go's RE2 regular expressions, counts of an
// empty text, URL validation without the network) the factory's comment says so.

const (
	maxPatternLen = 4096
	maxListItems  = 1000
	maxCount      = 1_000_000_000
)

func excerpt(s string) string {
	if len(s) <= 100 {
		return s
	}
	cut := 100
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "..."
}

func inverted(ok, not bool) bool { return ok != not }

// --- default.regexMatch ---------------------------------------------------------------

type regexMatch struct {
	re   *regexp.Regexp
	rule string
	not  bool
	// words: the rule has a word boundary (\b, \B), so a window is matched without the word
	// pieces at its ends, which would read as whole words ("bad" in "badge").
	words bool
}

// newRegexMatch: rule (required, RE2 syntax: the reference's JavaScript lookarounds and
// backreferences are refused), not (default false). Passes when the rule matches the text.
func newRegexMatch(params map[string]any, _ Deps) (Check, error) {
	p := readParams(params)
	rule := p.nonEmptyStr("rule", true, "", maxPatternLen)
	not := p.boolean("not", false)
	p.runner()
	var re *regexp.Regexp
	if rule != "" {
		var err error
		if re, err = regexp.Compile(rule); err != nil {
			p.fail("rule", "is not a valid regular expression (RE2 syntax): %v", err)
		}
	}
	if err := p.done(); err != nil {
		return nil, err
	}
	return &regexMatch{re: re, rule: rule, not: not, words: hasOp(re, syntax.OpWordBoundary, syntax.OpNoWordBoundary)}, nil
}

// Windowed: with not, a match in any window fails the whole answer, unless the rule is
// anchored (^, $, \A, \z): a window's ends are not the text's, so such a rule is judged on
// the whole answer only.
func (c *regexMatch) Windowed() bool {
	return c.not && !hasOp(c.re, syntax.OpBeginLine, syntax.OpEndLine, syntax.OpBeginText, syntax.OpEndText)
}

// hasOp: the expression holds one of ops.
func hasOp(re *regexp.Regexp, ops ...syntax.Op) bool {
	if re == nil {
		return false
	}
	tree, err := syntax.Parse(re.String(), syntax.Perl)
	if err != nil {
		return false
	}
	var walk func(*syntax.Regexp) bool
	walk = func(r *syntax.Regexp) bool {
		return slices.Contains(ops, r.Op) || slices.ContainsFunc(r.Sub, walk)
	}
	return walk(tree)
}

func (c *regexMatch) Run(_ context.Context, in Input) (Verdict, error) {
	text := textOf(in)
	if c.words && in.Stream && !in.Final {
		text = wholeWords(text, in.Cut)
	}
	loc := c.re.FindStringSubmatchIndex(text)
	pass := inverted(loc != nil, c.not)
	data := map[string]any{"regexPattern": c.rule, "not": c.not, "verdict": pass, "textExcerpt": excerpt(text)}
	if loc != nil {
		var captures []any
		for i := 2; i+1 < len(loc); i += 2 {
			if loc[i] < 0 {
				captures = append(captures, nil)
				continue
			}
			captures = append(captures, text[loc[i]:loc[i+1]])
		}
		data["matchDetails"] = map[string]any{"matchedText": text[loc[0]:loc[1]], "index": loc[0], "captures": captures}
	}
	var expl string
	switch {
	case pass && c.not:
		expl = fmt.Sprintf("The regex pattern '%s' did not match the text as expected.", c.rule)
	case pass:
		expl = fmt.Sprintf("The regex pattern '%s' successfully matched the text.", c.rule)
	case c.not:
		expl = fmt.Sprintf("The regex pattern '%s' matched the text when it should not have.", c.rule)
	default:
		expl = fmt.Sprintf("The regex pattern '%s' did not match the text.", c.rule)
	}
	return Verdict{Pass: pass, Explanation: expl, Data: data}, nil
}

// --- default.sentenceCount, default.wordCount, default.characterCount ----------------------

type countCheck struct {
	what             string // sentence, word, character
	minName, maxName string
	min, max         int64
	not              bool
	count            func(string) int
}

// newCounter builds a range check over a count of the text. The reference's defaults hold:
// min 0, max 99999 (sentences, words) or 9999999 (characters). An empty text counts 0 (the
// reference errs on it). Sentences are counted as the reference does: the number of '.',
// '!' and '?'; words are runs of non-space; characters are Unicode code points (the
// reference counts UTF-16 units).
func newCounter(what, minName, maxName string, defMax int64, count func(string) int) Factory {
	return func(params map[string]any, _ Deps) (Check, error) {
		p := readParams(params)
		lo := p.integer(minName, 0, 0, maxCount)
		hi := p.integer(maxName, defMax, 0, maxCount)
		not := p.boolean("not", false)
		p.runner()
		if lo > hi {
			p.fail(minName, "must not exceed %s (%d), got %d", maxName, hi, lo)
		}
		if err := p.done(); err != nil {
			return nil, err
		}
		return &countCheck{what: what, minName: minName, maxName: maxName, min: lo, max: hi, not: not, count: count}, nil
	}
}

func countSentences(s string) int {
	return strings.Count(s, ".") + strings.Count(s, "!") + strings.Count(s, "?")
}
func countWords(s string) int { return len(strings.Fields(s)) }
func countCharacters(s string) int {
	return utf8.RuneCountInString(s)
}

func (c *countCheck) Run(_ context.Context, in Input) (Verdict, error) {
	text := textOf(in)
	n := int64(c.count(text))
	inRange := n >= c.min && n <= c.max
	pass := inverted(inRange, c.not)
	var expl string
	if inRange {
		expl = fmt.Sprintf("The %s count (%d) is within the range of %d to %d", c.what, n, c.min, c.max)
	} else {
		expl = fmt.Sprintf("The %s count (%d) is outside the range of %d to %d", c.what, n, c.min, c.max)
	}
	if c.not {
		expl += " (inverted)"
	}
	return Verdict{Pass: pass, Explanation: expl + ".", Data: map[string]any{
		c.what + "Count": n, c.minName: c.min, c.maxName: c.max, "not": c.not, "verdict": pass, "textExcerpt": excerpt(text),
	}}, nil
}

// --- default.contains -----------------------------------------------------------------------

type containsCheck struct {
	words    []string
	operator string
}

// newContains: words (required, case-sensitive substrings), operator any|all|none (default
// any, as the reference's schema).
func newContains(params map[string]any, _ Deps) (Check, error) {
	p := readParams(params)
	words := p.strings("words", true, maxListItems, false)
	op := p.enum("operator", "any", "any", "all", "none")
	p.runner()
	if err := p.done(); err != nil {
		return nil, err
	}
	return &containsCheck{words: words, operator: op}, nil
}

// Windowed: with none, a word in any window fails the whole answer.
func (c *containsCheck) Windowed() bool { return c.operator == "none" }

func (c *containsCheck) Run(_ context.Context, in Input) (Verdict, error) {
	text := textOf(in)
	found, missing := []string{}, []string{}
	for _, w := range c.words {
		if strings.Contains(text, w) {
			found = append(found, w)
		} else {
			missing = append(missing, w)
		}
	}
	pass := opVerdict(c.operator, len(found), len(missing))
	return Verdict{Pass: pass, Explanation: opExplanation("words", c.operator, pass), Data: map[string]any{
		"foundWords": found, "missingWords": missing, "operator": c.operator,
	}}, nil
}

// opVerdict is the any/all/none rule over what was found and what was missing.
func opVerdict(op string, found, missing int) bool {
	switch op {
	case "all":
		return missing == 0
	case "none":
		return found == 0
	}
	return found > 0
}

func opExplanation(what, op string, pass bool) string {
	s := fmt.Sprintf("Check %s for '%s' %s.", map[bool]string{true: "passed", false: "failed"}[pass], op, what)
	switch {
	case op == "any" && pass, op == "none" && !pass:
		return s + " At least one was found."
	case op == "all" && pass:
		return s + " All were found."
	case op == "all":
		return s + " Some were missing."
	}
	return s + " None were found."
}

// --- default.endsWith -----------------------------------------------------------------------

type endsWith struct {
	suffix string
	not    bool
}

// newEndsWith: suffix (required), not. As the reference, a text ending with the suffix and a
// period passes too; trailing white space is ignored.
func newEndsWith(params map[string]any, _ Deps) (Check, error) {
	p := readParams(params)
	suffix := p.nonEmptyStr("suffix", true, "", maxPatternLen)
	not := p.boolean("not", false)
	p.runner()
	if err := p.done(); err != nil {
		return nil, err
	}
	return &endsWith{suffix: suffix, not: not}, nil
}

func (c *endsWith) Run(_ context.Context, in Input) (Verdict, error) {
	text := strings.TrimRightFunc(textOf(in), unicode.IsSpace)
	ends := strings.HasSuffix(text, c.suffix) || strings.HasSuffix(text, c.suffix+".")
	pass := inverted(ends, c.not)
	expl := fmt.Sprintf("The text ends with %q.", c.suffix)
	if !ends {
		expl = fmt.Sprintf("The text does not end with %q.", c.suffix)
	}
	return Verdict{Pass: pass, Explanation: expl, Data: map[string]any{
		"suffix": c.suffix, "not": c.not, "verdict": pass, "textExcerpt": excerpt(text),
	}}, nil
}

// --- default.alluppercase, default.alllowercase ---------------------------------------------

type caseCheck struct {
	upper bool
	not   bool
}

// newCase: not. Every letter (any script) must be upper (lower) case; a text without letters
// passes.
func newCase(upper bool) Factory {
	return func(params map[string]any, _ Deps) (Check, error) {
		p := readParams(params)
		not := p.boolean("not", false)
		p.runner()
		if err := p.done(); err != nil {
			return nil, err
		}
		return &caseCheck{upper: upper, not: not}, nil
	}
}

// Windowed: without not, a letter of the wrong case in any window fails the whole answer.
func (c *caseCheck) Windowed() bool { return !c.not }

func (c *caseCheck) Run(_ context.Context, in Input) (Verdict, error) {
	text := textOf(in)
	wrong := unicode.IsLower
	want := "uppercase"
	if !c.upper {
		wrong, want = unicode.IsUpper, "lowercase"
	}
	all := strings.IndexFunc(text, wrong) < 0
	pass := inverted(all, c.not)
	expl := "All letters of the text are " + want + "."
	if !all {
		expl = "The text has letters that are not " + want + "."
	}
	return Verdict{Pass: pass, Explanation: expl, Data: map[string]any{"not": c.not, "verdict": pass, "textExcerpt": excerpt(text)}}, nil
}

// --- default.containsCode -------------------------------------------------------------------

var codeFormats = []string{"SQL", "Python", "TypeScript", "JavaScript", "Java", "C#", "C++", "C", "Ruby", "PHP",
	"Swift", "Kotlin", "Go", "Rust", "Scala", "R", "Perl", "Shell", "HTML", "CSS", "XML", "JSON", "YAML", "Markdown", "Dockerfile"}

// codeLanguages maps a fence's language tag to a format, as the reference does.
var codeLanguages = map[string]string{
	"sql": "SQL", "py": "Python", "python": "Python", "gyp": "Python", "ts": "TypeScript", "tsx": "TypeScript",
	"typescript": "TypeScript", "js": "JavaScript", "jsx": "JavaScript", "javascript": "JavaScript", "java": "Java",
	"cs": "C#", "cpp": "C++", "c": "C", "rb": "Ruby", "php": "PHP", "swift": "Swift", "kt": "Kotlin", "go": "Go",
	"rs": "Rust", "scala": "Scala", "r": "R", "pl": "Perl", "sh": "Shell", "html": "HTML", "css": "CSS", "xml": "XML",
	"json": "JSON", "yml": "YAML", "md": "Markdown", "dockerfile": "Dockerfile",
}

var codeFence = regexp.MustCompile("(?s)```(\\w+)\\n.*?\\n```")

type containsCode struct {
	format string
	not    bool
}

// newContainsCode: format (required, one of the reference's formats), not. Looks for fenced
// code blocks (```lang) whose language is the format.
func newContainsCode(params map[string]any, _ Deps) (Check, error) {
	p := readParams(params)
	format := p.str("format", true, "")
	if format != "" && !inList(codeFormats, format) {
		p.fail("format", "must be one of %s, got %q", strings.Join(codeFormats, ", "), format)
	}
	not := p.boolean("not", false)
	p.runner()
	if err := p.done(); err != nil {
		return nil, err
	}
	return &containsCode{format: format, not: not}, nil
}

func (c *containsCode) Run(_ context.Context, in Input) (Verdict, error) {
	text := textOf(in)
	found := []string{}
	has := false
	for _, m := range codeFence.FindAllStringSubmatch(text, -1) {
		lang := strings.ToLower(m[1])
		if f, ok := codeLanguages[lang]; ok {
			lang = f
		}
		found = append(found, lang)
		has = has || lang == c.format
	}
	pass := inverted(has, c.not)
	expl := fmt.Sprintf("Found code block(s) in %s format.", c.format)
	if !has {
		expl = fmt.Sprintf("No code blocks in %s format found.", c.format)
	}
	return Verdict{Pass: pass, Explanation: expl, Data: map[string]any{
		"searchedFormat": c.format, "not": c.not, "foundFormats": found, "textExcerpt": excerpt(text),
	}}, nil
}

// --- default.validUrls ----------------------------------------------------------------------

var urlPattern = regexp.MustCompile(`https?://[^\s,"'{}\[\]]+`)

type validURLs struct {
	onlyDNS bool
	not     bool
}

// newValidURLs: onlyDNS, not. Unlike the reference, which sends a HEAD request to every URL
// (or asks a DNS-over-HTTPS resolver with onlyDNS), this check never leaves the process: a URL
// is valid when it parses as an http(s) URL whose host is an IP address or a well-formed
// domain name; onlyDNS checks the host alone. Trailing punctuation is not part of a URL. A
// text without URLs fails, as in the reference.
func newValidURLs(params map[string]any, _ Deps) (Check, error) {
	p := readParams(params)
	onlyDNS := p.boolean("onlyDNS", false)
	not := p.boolean("not", false)
	p.runner()
	if err := p.done(); err != nil {
		return nil, err
	}
	return &validURLs{onlyDNS: onlyDNS, not: not}, nil
}

func (c *validURLs) Run(_ context.Context, in Input) (Verdict, error) {
	text := textOf(in)
	method := "syntax"
	if c.onlyDNS {
		method = "host syntax"
	}
	urls := urlPattern.FindAllString(text, -1)
	if len(urls) == 0 {
		return Verdict{Pass: false, Explanation: "No URLs found in the text.", Data: map[string]any{
			"urls": []string{}, "validationMethod": method, "not": c.not, "textExcerpt": excerpt(text),
		}}, nil
	}
	valid, invalid := []string{}, []string{}
	for _, u := range urls {
		u = strings.TrimRight(u, ".,;:!?)>")
		if c.urlValid(u) {
			valid = append(valid, u)
		} else {
			invalid = append(invalid, u)
		}
	}
	allValid := len(invalid) == 0
	pass := inverted(allValid, c.not)
	expl := fmt.Sprintf("All URLs are valid (%d found).", len(valid))
	if !allValid {
		expl = fmt.Sprintf("Some URLs are invalid (%d of %d).", len(invalid), len(urls))
	}
	return Verdict{Pass: pass, Explanation: expl, Data: map[string]any{
		"validUrls": valid, "invalidUrls": invalid, "validationMethod": method, "not": c.not, "verdict": pass,
		"textExcerpt": excerpt(text),
	}}, nil
}

func (c *validURLs) urlValid(raw string) bool {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.Opaque != "" {
		return false
	}
	if !hostValid(u.Hostname()) {
		return false
	}
	if port := u.Port(); port != "" {
		n, err := strconv.Atoi(port)
		if err != nil || n < 1 || n > 65535 {
			return false
		}
	}
	if c.onlyDNS {
		return true
	}
	return utf8.ValidString(raw) && !strings.ContainsAny(raw, "<>\\^`|")
}

// hostValid accepts an IP address, localhost, or a domain name of letter-digit-hyphen labels
// (1 to 63 bytes, no leading or trailing hyphen) with an alphabetic (or punycode) top level.
func hostValid(h string) bool {
	if net.ParseIP(h) != nil {
		return true
	}
	h = strings.TrimSuffix(h, ".")
	if h == "localhost" {
		return true
	}
	if len(h) == 0 || len(h) > 253 {
		return false
	}
	labels := strings.Split(strings.ToLower(h), ".")
	if len(labels) < 2 {
		return false
	}
	for _, l := range labels {
		if len(l) == 0 || len(l) > 63 || l[0] == '-' || l[len(l)-1] == '-' {
			return false
		}
		for i := 0; i < len(l); i++ {
			b := l[i]
			if !(b >= 'a' && b <= 'z' || b >= '0' && b <= '9' || b == '-') {
				return false
			}
		}
	}
	tld := labels[len(labels)-1]
	if strings.HasPrefix(tld, "xn--") {
		return true
	}
	if len(tld) < 2 {
		return false
	}
	for i := 0; i < len(tld); i++ {
		if tld[i] < 'a' || tld[i] > 'z' {
			return false
		}
	}
	return true
}

// --- default.notNull ------------------------------------------------------------------------

type notNull struct{ not bool }

// newNotNull: not. Passes when the text is not empty nor only white space.
func newNotNull(params map[string]any, _ Deps) (Check, error) {
	p := readParams(params)
	not := p.boolean("not", false)
	p.runner()
	if err := p.done(); err != nil {
		return nil, err
	}
	return &notNull{not: not}, nil
}

func (c *notNull) Run(_ context.Context, in Input) (Verdict, error) {
	isNull := strings.TrimSpace(textOf(in)) == ""
	pass := inverted(!isNull, c.not)
	expl := "Content exists and is not null."
	if isNull {
		expl = "Content is null, undefined, or empty."
	}
	return Verdict{Pass: pass, Explanation: expl, Data: map[string]any{"isNull": isNull, "not": c.not}}, nil
}

// --- default.regexReplace -------------------------------------------------------------------

var jsRegexLiteral = regexp.MustCompile(`^/(.+?)/([a-z]*)$`)

type regexReplace struct {
	re              *regexp.Regexp
	rule            string
	redactText      string
	global          bool
	failOnDetection bool
}

// newRegexReplace: rule (required; a pattern or a /pattern/flags literal with flags among
// g, i, m, s, u), redactText (default [REDACTED]), failOnDetection (default false). It
// replaces the matches in the text the hook's checks read (the last message, the answer):
// every match with g, the first without, as JavaScript's replace does.
func newRegexReplace(params map[string]any, _ Deps) (Check, error) {
	p := readParams(params)
	rule := p.nonEmptyStr("rule", true, "", maxPatternLen)
	redact := p.str("redactText", false, "[REDACTED]")
	failOn := p.boolean("failOnDetection", false)
	p.runner()
	c := &regexReplace{rule: rule, redactText: redact, failOnDetection: failOn}
	if rule != "" {
		pattern, prefix := rule, ""
		if m := jsRegexLiteral.FindStringSubmatch(rule); m != nil {
			pattern = m[1]
			for _, f := range m[2] {
				switch f {
				case 'g':
					c.global = true
				case 'i', 'm', 's':
					prefix += string(f)
				case 'u':
				default:
					p.fail("rule", "flag %q is not supported (g, i, m, s, u)", f)
				}
			}
		}
		if prefix != "" {
			pattern = "(?" + prefix + ")" + pattern
		}
		var err error
		if c.re, err = regexp.Compile(pattern); err != nil {
			p.fail("rule", "is not a valid regular expression (RE2 syntax): %v", err)
		}
	}
	if err := p.done(); err != nil {
		return nil, err
	}
	return c, nil
}

func (c *regexReplace) Transforms() bool { return true }

func (c *regexReplace) replace(s string) string {
	if c.global {
		return c.re.ReplaceAllLiteralString(s, c.redactText)
	}
	loc := c.re.FindStringIndex(s)
	if loc == nil {
		return s
	}
	return s[:loc[0]] + c.redactText + s[loc[1]:]
}

func (c *regexReplace) Run(_ context.Context, in Input) (Verdict, error) {
	v := Verdict{Pass: true, Data: map[string]any{"regexPattern": c.rule}}
	body := hookBody(in)
	var found bool
	if in.Stream || len(body) == 0 {
		found = c.re.MatchString(in.Text)
	} else {
		doc, err := decodeBody(body)
		if err != nil {
			return Verdict{}, fmt.Errorf("reading the body: %w", err)
		}
		visitTexts(in.Hook, doc, false, func(s string) string {
			out := c.replace(s)
			found = found || out != s
			return out
		})
		if found {
			if v.Transformed, err = encodeBody(doc); err != nil {
				return Verdict{}, err
			}
		}
	}
	v.Explanation = fmt.Sprintf("The regex pattern '%s' did not match any text.", c.rule)
	if found {
		v.Explanation = fmt.Sprintf("Pattern '%s' matched and was replaced with '%s'.", c.rule, c.redactText)
		v.Pass = !c.failOnDetection
	}
	return v, nil
}
