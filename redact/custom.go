package redact

import (
	"errors"
	"fmt"
	"io"
	"regexp"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/BurntSushi/toml"
	"github.com/dlclark/regexp2"
)

// ErrRule is wrapped by errors about a custom rule or an allowlist: a
// missing id, a pattern that does not compile, an unknown field.
var ErrRule = errors.New("bad redaction rule")

// Rule is a custom detection rule, with gitleaks' fields.
type Rule struct {
	// ID names the rule; masks and findings carry it as their label.
	ID          string
	Description string
	// Regex is the pattern. Go (RE2) syntax runs in linear time; a pattern
	// Go cannot compile (lookarounds, backreferences) runs on a
	// backtracking engine bounded by Config.MatchTimeout.
	Regex string
	// SecretGroup is the capture group holding the secret; 0 masks the
	// whole match.
	SecretGroup int
	// Keywords restrict the rule to text around them (case-insensitive):
	// without keywords it runs over every text.
	Keywords []string
	// Entropy is the minimum Shannon entropy (bits per byte) of the secret.
	Entropy float64
	// Allowlists exempt some of the rule's matches.
	Allowlists []Allowlist
}

// Allowlist exempts matches from being masked.
type Allowlist struct {
	Description string
	// Regexes exempt a match when one of them matches the target.
	Regexes []string
	// RegexTarget is what Regexes are matched against: "secret" (the
	// default and "match": the masked span) or "line" (its whole line).
	RegexTarget string
	// Stopwords exempt a secret that contains one of them
	// (case-insensitive).
	Stopwords []string
}

// pattern is a compiled Go or backtracking regular expression.
type pattern struct {
	re  *regexp.Regexp
	re2 *regexp2.Regexp
}

func compilePattern(expr string, timeout time.Duration) (*pattern, error) {
	if re, err := regexp.Compile(expr); err == nil {
		return &pattern{re: re}, nil
	}
	re2, err := regexp2.Compile(expr, regexp2.RE2)
	if err != nil {
		return nil, err
	}
	re2.MatchTimeout = timeout
	return &pattern{re2: re2}, nil
}

// matchString reports whether p matches s. A timeout counts as no match;
// its error, which quotes the input, is dropped.
func (p *pattern) matchString(s string) bool {
	if p.re != nil {
		return p.re.MatchString(s)
	}
	ok, err := p.re2.MatchString(s)
	return err == nil && ok
}

type allowlist struct {
	entries []allowEntry
}

type allowEntry struct {
	res   []*pattern
	line  bool
	stops []string
}

func compileAllowlist(als []Allowlist, timeout time.Duration, where string) (*allowlist, error) {
	if len(als) == 0 {
		return nil, nil
	}
	a := &allowlist{}
	for i, al := range als {
		e := allowEntry{}
		switch al.RegexTarget {
		case "", "secret", "match":
		case "line":
			e.line = true
		default:
			return nil, fmt.Errorf("%w: %s %d: regexTarget %q: want secret, match or line", ErrRule, where, i+1, al.RegexTarget)
		}
		for _, expr := range al.Regexes {
			p, err := compilePattern(expr, timeout)
			if err != nil {
				return nil, fmt.Errorf("%w: %s %d: regex %q: %v", ErrRule, where, i+1, expr, err)
			}
			e.res = append(e.res, p)
		}
		for _, w := range al.Stopwords {
			if w != "" {
				e.stops = append(e.stops, strings.ToLower(w))
			}
		}
		a.entries = append(a.entries, e)
	}
	return a, nil
}

// allows reports whether the span t[s:e] is exempt.
func (a *allowlist) allows(t string, s, e int) bool {
	if a == nil {
		return false
	}
	secret := t[s:e]
	var lower string
	for _, en := range a.entries {
		if len(en.stops) > 0 {
			if lower == "" {
				lower = strings.ToLower(secret)
			}
			for _, w := range en.stops {
				if strings.Contains(lower, w) {
					return true
				}
			}
		}
		target := secret
		if en.line {
			ls := strings.LastIndexByte(t[:s], '\n') + 1
			le := strings.IndexByte(t[e:], '\n')
			if le < 0 {
				le = len(t)
			} else {
				le += e
			}
			target = t[ls:le]
		}
		for _, p := range en.res {
			if p.matchString(target) {
				return true
			}
		}
	}
	return false
}

// customRule is the compiled form of a Rule.
type customRule struct {
	pat   *pattern
	group int
	allow *allowlist
}

// customWindow is how far around a keyword a custom rule looks.
const customWindow = 1024

func compileRule(cr Rule, timeout time.Duration) (*rule, error) {
	if strings.TrimSpace(cr.ID) == "" {
		return nil, fmt.Errorf("%w: a rule has no id", ErrRule)
	}
	if cr.Regex == "" {
		return nil, fmt.Errorf("%w: rule %q: no regex", ErrRule, cr.ID)
	}
	p, err := compilePattern(cr.Regex, timeout)
	if err != nil {
		return nil, fmt.Errorf("%w: rule %q: regex: %v", ErrRule, cr.ID, err)
	}
	groups := 0
	if p.re != nil {
		groups = p.re.NumSubexp()
	} else {
		groups = len(p.re2.GetGroupNumbers()) - 1
	}
	if cr.SecretGroup < 0 || cr.SecretGroup > groups {
		return nil, fmt.Errorf("%w: rule %q: secretGroup %d, but the regex has %d groups", ErrRule, cr.ID, cr.SecretGroup, groups)
	}
	allow, err := compileAllowlist(cr.Allowlists, timeout, "rule "+cr.ID+" allowlist")
	if err != nil {
		return nil, err
	}
	var kws []string
	for _, k := range cr.Keywords {
		if k != "" {
			kws = append(kws, k)
		}
	}
	return &rule{
		id: sanitizeLabel(cr.ID), label: sanitizeLabel(cr.ID), description: cr.Description, keywords: kws, prio: prioCustom,
		before: customWindow, after: customWindow, minEntropy: cr.Entropy, noBoundary: true, keepPlaceholders: true,
		custom: &customRule{pat: p, group: cr.SecretGroup, allow: allow},
	}, nil
}

// find runs the rule over t[ws:we].
func (c *customRule) find(sc *scan, r *rule, ws, we int) {
	t := sc.text
	// Windows start and end on line boundaries where one is near, so a
	// pattern anchored with ^ or $ sees whole lines.
	if ws > 0 {
		if i := strings.IndexByte(t[ws:min(we, ws+256)], '\n'); i >= 0 && ws+i+1 < we {
			ws += i + 1
		}
	}
	if we < len(t) {
		if i := strings.LastIndexByte(t[max(ws, we-256):we], '\n'); i >= 0 {
			we = max(ws, we-256) + i
		}
	}
	chunk := t[ws:we]
	report := func(s, e, ms, me int) {
		if c.allow.allows(t, s, e) {
			return
		}
		sc.accept(r, s, e, ms, me)
	}
	if c.pat.re != nil {
		for _, m := range c.pat.re.FindAllStringSubmatchIndex(chunk, -1) {
			if s := m[2*c.group]; s >= 0 {
				report(ws+s, ws+m[2*c.group+1], ws+m[0], ws+m[1])
			}
		}
		return
	}
	// The backtracking engine works on runes: map its offsets to bytes.
	runes := make([]rune, 0, len(chunk))
	offs := make([]int, 0, len(chunk)+1)
	for i := 0; i < len(chunk); {
		rn, w := utf8.DecodeRuneInString(chunk[i:])
		runes = append(runes, rn)
		offs = append(offs, i)
		i += w
	}
	offs = append(offs, len(chunk))
	m, err := c.pat.re2.FindRunesMatch(runes)
	for err == nil && m != nil {
		g := m.GroupByNumber(c.group)
		if g != nil && len(g.Captures) > 0 {
			s, e := offs[g.Index], offs[g.Index+g.Length]
			report(ws+s, ws+e, ws+offs[m.Index], ws+offs[m.Index+m.Length])
		}
		m, err = c.pat.re2.FindNextMatch(m)
	}
	if err != nil {
		sc.timeouts++ // the error quotes the input: never pass it on
	}
}

// LoadRules reads custom rules in gitleaks' TOML format: [[rules]] with id,
// description, regex, secretGroup, keywords, entropy and
// [rules.allowlist] / [[rules.allowlists]] (regexes, regexTarget,
// stopwords); a global [allowlist] / [[allowlists]]; and [extend] with
// disabledRules (ids of built-in rules to turn off) and useDefault (false
// turns every built-in rule off). Built-in rules run unless a file says
// useDefault = false. Fields gitleaks uses for scanning repositories
// (title, tags, paths, commits) are accepted and ignored; any other field is
// an error, so a typo does not silently disable a rule.
func LoadRules(r io.Reader) (Config, error) {
	var f tomlFile
	md, err := toml.NewDecoder(r).Decode(&f)
	if err != nil {
		return Config{}, fmt.Errorf("%w: %v", ErrRule, err)
	}
	if und := md.Undecoded(); len(und) > 0 {
		keys := make([]string, len(und))
		for i, k := range und {
			keys[i] = k.String()
		}
		return Config{}, fmt.Errorf("%w: unknown field(s): %s", ErrRule, strings.Join(keys, ", "))
	}
	var cfg Config
	cfg.Disable = f.Extend.DisabledRules
	if md.IsDefined("extend", "useDefault") && !f.Extend.UseDefault {
		cfg.NoBuiltin = true
	}
	for _, a := range f.Allowlists {
		cfg.Allowlists = append(cfg.Allowlists, a.allowlist())
	}
	if f.AllowlistOne != nil {
		cfg.Allowlists = append(cfg.Allowlists, f.AllowlistOne.allowlist())
	}
	for i, tr := range f.Rules {
		if tr.Regex == "" && tr.Path != "" {
			return Config{}, fmt.Errorf("%w: rule %d (%q): path-only rules match file names, which a redactor does not see", ErrRule, i+1, tr.ID)
		}
		rl := Rule{ID: tr.ID, Description: tr.Description, Regex: tr.Regex, SecretGroup: tr.SecretGroup,
			Keywords: tr.Keywords, Entropy: tr.Entropy}
		for _, a := range tr.Allowlists {
			rl.Allowlists = append(rl.Allowlists, a.allowlist())
		}
		if tr.AllowlistOne != nil {
			rl.Allowlists = append(rl.Allowlists, tr.AllowlistOne.allowlist())
		}
		cfg.Rules = append(cfg.Rules, rl)
	}
	return cfg, nil
}

type tomlFile struct {
	Title  string `toml:"title"`
	Extend struct {
		UseDefault    bool     `toml:"useDefault"`
		DisabledRules []string `toml:"disabledRules"`
		Path          string   `toml:"path"`
	} `toml:"extend"`
	Rules        []tomlRule  `toml:"rules"`
	AllowlistOne *tomlAllow  `toml:"allowlist"`
	Allowlists   []tomlAllow `toml:"allowlists"`
}

type tomlAllow struct {
	Description string   `toml:"description"`
	Regexes     []string `toml:"regexes"`
	RegexTarget string   `toml:"regexTarget"`
	Stopwords   []string `toml:"stopwords"`
	// Scanning-only fields, accepted and ignored.
	Paths     []string `toml:"paths"`
	Commits   []string `toml:"commits"`
	Condition string   `toml:"condition"`
}

func (a tomlAllow) allowlist() Allowlist {
	return Allowlist{Description: a.Description, Regexes: a.Regexes, RegexTarget: a.RegexTarget, Stopwords: a.Stopwords}
}

type tomlRule struct {
	ID           string      `toml:"id"`
	Description  string      `toml:"description"`
	Regex        string      `toml:"regex"`
	SecretGroup  int         `toml:"secretGroup"`
	Keywords     []string    `toml:"keywords"`
	Entropy      float64     `toml:"entropy"`
	Path         string      `toml:"path"`
	Tags         []string    `toml:"tags"`
	SkipReport   bool        `toml:"skipReport"`
	AllowlistOne *tomlAllow  `toml:"allowlist"`
	Allowlists   []tomlAllow `toml:"allowlists"`
}
