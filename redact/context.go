package redact

import (
	"net/url"
	"strings"
)

// The context detector finds values assigned to secret-like names, in the
// syntaxes agents meet: env and .env lines, shell exports and flags, YAML,
// TOML, INI, Java properties, JSON, Python and Go source, XML, HTTP headers,
// netrc, URL query strings and connection strings. It is written in Go
// rather than as one large regular expression: the name, the operator and
// the value each need judgement (is "max_tokens" secret-like? is
// "${TOKEN}" a value?) that a pattern expresses poorly and slowly.

// nameClass says how much a name tells about its value.
type nameClass int

const (
	nameNone     nameClass = iota
	nameWeak               // "key" and the like: only a random-looking value counts
	nameSecret             // token, secret, api key: any credible value counts
	namePassword           // passwords: human-chosen values count too
	nameLonePass           // "pass" alone: a password only when quoted or set with =, not "--- PASS: Test"
	nameHeader             // Authorization: the value may carry a scheme
)

// contextKeywords route the keyword pass to the detector. Each is a whole
// word of a secret-like name; longer words (password, credentials) are
// keywords of their own, so a hit followed by more lowercase letters
// ("author", "tokens", "keyboard") is not one.
var contextKeywords = []string{
	"password", "passwd", "passphrase", "passcode", "pass", "pwd", "secret", "token", "key", "apikey",
	"auth", "authorization", "credential", "credentials", "creds", "cred", "sig", "pat", "session", "sessid", "jsessionid",
	"dockerconfigjson", "dockercfg", "sessionid",
}

func contextRules() []*rule {
	return []*rule{
		{id: "secret-assignment", description: "value assigned to a secret-like name (env, YAML, JSON, TOML, INI, code, headers, flags, netrc)",
			keywords: contextKeywords, prio: prioContext, detect: detectAssignment},
		{id: "bearer-token", description: "token after the Bearer scheme", keywords: []string{"bearer"}, prio: prioHeader, detect: detectBearer},
	}
}

func isNameByte(c byte) bool {
	return isAlnum(c) || c == '_' || c == '-' || c == '.'
}

const maxName = 80

// detectAssignment is the context detector's entry: kwStart..kwEnd is a
// keyword inside a name.
func detectAssignment(sc *scan, kwStart, kwEnd int) {
	t := sc.text
	if kwEnd < len(t) && t[kwEnd] >= 'a' && t[kwEnd] <= 'z' {
		return // the word goes on: "author", "tokens", "keyboard"
	}
	ns, ne, ok := expandName(t, kwStart, kwEnd)
	if !ok || ns == sc.lastName {
		return
	}
	sc.lastName = ns
	name := t[ns:ne]
	flag := false
	for len(name) > 0 && name[0] == '-' {
		name, ns, flag = name[1:], ns+1, true
	}
	name = strings.TrimRight(name, ".-")
	ne = ns + len(name)
	if name == "" {
		return
	}
	if ns >= 2 && t[ns-2:ns] == "//" || ns >= 1 && t[ns-1] == '@' {
		return // the user of a URL (https://x-access-token:...@host)
	}
	if ne+1 < len(t) && t[ne] == '=' && isQuote(t[ne+1]) && (name == "key" || name == "name" || name == "id") {
		return // an XML attribute naming a setting: <add key="ApiKey" value="..."/>
	}
	class, label := classifyName(name)
	if class == nameWeak || (class != nameNone && label == "secret-key" && len(splitWords(name)) == 1) {
		// "public key: ...", "API key = ...": the word before a bare "key"
		// says what it is.
		switch q := prevWord(t, ns); {
		case keyNot[q]:
			return
		case q == "api":
			class, label = nameSecret, "api-key"
		case keyStrong[q]:
			class = nameSecret
		}
	}
	if class == nameNone {
		return
	}
	if flag && ns >= 2 && !isSpace(t[ns-2]) && t[ns-2] != '-' && t[ns-2] != '"' && t[ns-2] != '\'' {
		flag = false // "x-api-key" inside a word, not a flag
	}
	vs, ve, ok := findValue(t, ns, ne, class, flag)
	if pvs, pve, paired := pairedValue(t, ns, ne); paired {
		vs, ve, ok = pvs, pve, true
	}
	if ok && (label == "auth" || label == "credential") && (t[vs] == '(' || t[vs] == '[') {
		// auth=("user", "password"): a pair whose second string is the
		// password.
		vs, ve, ok = tupleSecond(t, vs)
	}
	if !ok {
		return
	}
	// Keywords inside the value are not read again, whether it is taken or
	// not: the scan stays linear on "password=password=...", and whether a
	// name inside a value counts does not depend on the value's length
	// (which masking changes: Redact must be idempotent).
	sc.skipTo(sc.curRule, max(sc.skipFrom(sc.curRule), ve))
	quoted := vs > 0 && (isQuote(t[vs-1]) || (t[vs-1] >= 0x80 || isHex(t[vs-1])) && typographicOpen(t, vs))
	vs, ve = stripScheme(t, vs, ve, class)
	if !quoted {
		// An unquoted value ends at a blank: "password=hunter2 # old",
		// "TOKEN=abc cmd". (Rest-of-line reading only kept the blanks so a
		// trailing comment could be told apart.)
		if i := strings.IndexAny(t[vs:ve], " \t"); i > 0 {
			ve = vs + i
		}
	}
	if class == nameLonePass {
		if !quoted && !strings.HasPrefix(strings.TrimLeft(t[ne:vs], " \t\"'"), "=") {
			return
		}
		class = namePassword
	}
	v := t[vs:ve]
	if ns > 0 && (t[ns-1] == '?' || t[ns-1] == '&') {
		// A query parameter: judged decoded (%24%7BTOKEN%7D is ${TOKEN}),
		// and a "key" in a URL's query is an API key's name.
		if d, err := url.QueryUnescape(v); err == nil {
			v = d
		}
		if class == nameWeak {
			class = nameSecret
		}
	}
	if !plausibleValue(v, class) || (!quoted && !shellAssignment(t, ns, ne, vs) && codeValue(t, ns, vs, ve, class)) || echoesName(v, name) {
		return
	}
	if quoted && concatenated(t, ve) {
		return // 'username:' + password: one piece of an expression
	}
	sc.add(vs, ve, sc.eng.labelRule(refineLabel(label, name, v)))
}

// shellAssignment reports NAME=value with an environment-style name glued
// to "=" (PASSWORD=summer_tiger18, as in .env files, shells, docker -e):
// the value is a literal string, never a variable of a program.
func shellAssignment(t string, ns, ne, vs int) bool {
	return ne < len(t) && t[ne] == '=' && vs == ne+1 && looksLikeEnvVarName(t[ns:ne])
}

// looksLikeEnvVarName reports an upper-case name: PASSWORD, DB_PASSWORD.
func looksLikeEnvVarName(n string) bool {
	if n == "" || !(n[0] >= 'A' && n[0] <= 'Z') {
		return false
	}
	for i := 0; i < len(n); i++ {
		if c := n[i]; !(c >= 'A' && c <= 'Z') && !(c >= '0' && c <= '9') && c != '_' {
			return false
		}
	}
	return true
}

// tupleSecond reads the second of two strings in parentheses or brackets
// at t[i]: ("user", "password").
func tupleSecond(t string, i int) (int, int, bool) {
	_, e1, ok := readValue(t, skipBlanks(t, i+1), false, false, false)
	if !ok || e1 >= len(t) || !isQuote(t[e1]) {
		return 0, 0, false
	}
	k := skipBlanks(t, e1+1)
	if k >= len(t) || t[k] != ',' {
		return 0, 0, false
	}
	k = skipBlanks(t, k+1)
	if k >= len(t) || !isQuote(t[k]) {
		return 0, 0, false
	}
	return readValue(t, k, false, false, false)
}

// tableRow reports a name in the first cell of a Markdown table row.
func tableRow(t string, ns int) bool {
	i := skipBlanksBack(t, ns)
	return i > 0 && t[i-1] == '|' && lineSepBefore(t, skipBlanksBack(t, i-1))
}

// pairKeys name the field that holds a setting's name in a list of
// name/value pairs; pairValues the field that holds its value.
var (
	pairKeys   = set("name", "key", "parameterkey", "variable", "var", "envname", "env_name", "optionname")
	pairValues = []string{"value", "parametervalue", "optionvalue", "secretvalue", "val"}
)

// pairedValue finds the value of a setting whose name is itself the value
// of a name field, in the name/value pairs of container definitions, ECS
// and Kubernetes env lists, CloudFormation parameters:
//
//	{"name": "DB_PASSWORD", "value": "..."}
//	- name: STRIPE_SECRET
//	  value: "..."
//	ParameterKey=DbPassword,ParameterValue=...
func pairedValue(t string, ns, ne int) (int, int, bool) {
	// The name field before the name: name: NAME, "name": "NAME", Key=NAME.
	i := ns
	if i > 0 && isQuote(t[i-1]) {
		i--
	}
	i = skipBlanksBack(t, i)
	if i == 0 || (t[i-1] != ':' && t[i-1] != '=') {
		return 0, 0, false
	}
	i = skipBlanksBack(t, i-1)
	if i > 0 && isQuote(t[i-1]) {
		i--
	}
	ke := i
	for i > 0 && (isAlnum(t[i-1]) || t[i-1] == '_') && ke-i < 16 {
		i--
	}
	if !pairKeys[strings.ToLower(t[i:ke])] {
		return 0, 0, false
	}
	// The value field after it, before the pair ends: a closing brace,
	// another name field, or (in YAML) the next item of the list.
	indent, _ := indentAt(t, i)
	limit := min(len(t), ne+400)
	for j := ne; j < limit; j++ {
		c := t[j]
		if c == '}' || (c == '\n' && j+1 < len(t) && listItemAt(t, j+1, indent)) {
			return 0, 0, false
		}
		if !(c|0x20 == 'v' || c|0x20 == 'p' || c|0x20 == 'o' || c|0x20 == 's') || (j > 0 && isAlnum(t[j-1])) {
			continue
		}
		for _, f := range pairValues {
			if !hasPrefixFold(t[j:], f) || (j+len(f) < len(t) && isAlnum(t[j+len(f)])) {
				continue
			}
			k := j + len(f)
			if k < len(t) && isQuote(t[k]) {
				k++
			}
			k = skipBlanks(t, k)
			if k >= len(t) || (t[k] != ':' && t[k] != '=') {
				continue
			}
			k = skipBlanks(t, k+1)
			vs, ve, ok := readValue(t, k, false, false, false)
			if ok {
				ve = min(ve, limit)
				for ve > vs && (t[ve-1] == ',' || t[ve-1] == '}') {
					ve--
				}
			}
			return vs, ve, ok && ve > vs
		}
	}
	return 0, 0, false
}

// listItemAt reports a YAML list item ("- ") starting the line at i,
// indented no deeper than indent+2 (the next item of the list holding the
// pair).
func listItemAt(t string, i, indent int) bool {
	n := 0
	for i+n < len(t) && t[i+n] == ' ' {
		n++
	}
	return n <= indent && i+n+1 < len(t) && t[i+n] == '-' && t[i+n+1] == ' '
}

func skipBlanksBack(t string, i int) int {
	for i > 0 && (t[i-1] == ' ' || t[i-1] == '\t') {
		i--
	}
	return i
}

// codeValue reports an unquoted value that is a piece of program rather
// than a credential: Go's ":=" never assigns a bare secret; a value opening
// a composite literal or a call (yaml_token_t{, get(), taking an address or
// a pointer type (&analysis.Pass, *Pass), a numeric literal (0x8028), or a
// chain of identifiers made of words (kexDHReply.HostKey,
// C.NL80211_ATTR_MESH_AUTH).
func codeValue(t string, ns, vs, ve int, class nameClass) bool {
	v := t[vs:ve]
	if isCode(v) {
		return true
	}
	if strings.Contains(t[ns:vs], ":=") {
		return true
	}
	if ve < len(t) && (t[ve] == '{' || t[ve] == '(' || t[ve] == '[') {
		return true // a composite literal, a call, an index
	}
	if ve < len(t) && t[ve] == ',' && strings.ContainsAny(t[ns:vs], ":=") {
		return true // a field of an object literal (sinceToken: cscInvalNoHorizon,)
	}
	if strings.HasSuffix(v, "{") || strings.HasSuffix(v, "(") {
		return true // the value goes on past the line: a composite literal, a call
	}
	if (v[0] == '&' || v[0] == '*') && len(v) > 1 && identifierOfWords(v[1:], false) {
		return true // &analysis.Pass, *Signature
	}
	if n := strings.TrimLeft(v, "+-"); len(n) > 2 && n[0] == '0' && (n[1] == 'x' || n[1] == 'X') && allHex(n[2:]) {
		return true // a numeric literal
	}
	if i := strings.LastIndexByte(v, '.'); i > 0 && looksLikeEnvName(v[i+1:]) {
		return true // C.NL80211_CMD_DEL_KEY
	}
	return identifierOfWords(v, class == namePassword)
}

// identifierOfWords reports identifiers and dotted chains of identifiers
// whose parts read as words or acronyms. A random token is an identifier
// too, syntactically, but its humps are short, vowel-less or digit-laden.
// For passwords a lone word with digits (hunter2) still counts as a value.
func identifierOfWords(v string, password bool) bool {
	if !(v[0] == '_' || (v[0]|0x20 >= 'a' && v[0]|0x20 <= 'z')) {
		return false
	}
	wordy, total, humps, dotted := 0, 0, 0, false
	for i := 0; i < len(v); i++ {
		c := v[i]
		if c == '.' {
			dotted = true
		} else if !isAlnum(c) && c != '_' {
			return false
		}
	}
	wordBounds(v, func(s, e int) bool {
		h := v[s:e]
		total += len(h)
		humps++
		letters := strings.TrimRight(h, "0123456789")
		if len(h)-len(letters) > 2 {
			return true
		}
		switch {
		case !isLettersOneCase(letters[min(1, len(letters)):]):
			// digits inside, or mixed case: a random hump
		case len(letters) >= 3 && pronounceable(letters):
			wordy += len(h)
		case len(letters) >= 2 && strings.ToUpper(letters) == letters:
			wordy += len(h) // an acronym, with its number: DH, SSH, NL80211, SHA256
		case len(letters) == 1 && len(h) == 1:
			wordy += len(h) // C in C.FOO, t in yaml_token_t
		case len(letters) == 2 && len(h) == 2 && humps > 1:
			wordy += len(h) // a short word: of, io, No
		}
		return true
	})
	if humps >= 6 && total < 4*humps {
		// Many short humps (XVYvgUdcrXpOPqoQ...): case flipping at random,
		// where a name's humps are words.
		return false
	}
	if password && (humps == 1 && !dotted || digitTail(v) >= 2) {
		// hunter2, harbor.granite50, summer_tiger18: words with a number
		// after them are what people choose as passwords; identifiers
		// rarely end in one.
		return false
	}
	return humps >= 1 && wordy*10 >= total*9
}

// digitTail returns the length of the run of digits v ends with, bit
// widths (16, 32, 64, 128, 256, 512) that end identifiers (utf16, sha256)
// excluded.
func digitTail(v string) int {
	n := len(v) - len(strings.TrimRight(v, "0123456789"))
	switch v[len(v)-n:] {
	case "16", "32", "64", "128", "256", "512":
		return 0
	}
	return n
}

func isLettersOneCase(s string) bool {
	lower, upper, digit, other := charKinds(s)
	return !digit && !other && !(lower && upper)
}

// concatenated reports a string literal ending at ve (before its closing
// quote) that an operator joins to more: "a" + b, 'a' . $b.
func concatenated(t string, ve int) bool {
	k := skipBlanks(t, ve+1)
	return k < len(t) && k > ve+1 && (t[k] == '+' || t[k] == '.' && k+1 < len(t) && t[k+1] == ' ')
}

// echoesName reports a value that repeats its name (hostKey = "hostkey1",
// password: password123): a test fixture, not a credential.
func echoesName(v, name string) bool {
	// The name's trailing words, joined: "hostKey" gives "key", then
	// "hostkey"; a value containing one of 4+ (or 6+ when joined) letters
	// echoes the name.
	var buf [maxName + 8]byte
	n, words := 0, 0
	found := false
	var bounds [16][2]int
	nb := 0
	wordBounds(name, func(s, e int) bool {
		if nb < len(bounds) {
			bounds[nb] = [2]int{s, e}
			nb++
		}
		return true
	})
	for i := nb - 1; i >= 0 && !found; i-- {
		w := name[bounds[i][0]:bounds[i][1]]
		if n+len(w) > len(buf) {
			break
		}
		copy(buf[len(w):], buf[:n]) // prepend
		for j := 0; j < len(w); j++ {
			buf[j] = lowerASCII(w[j])
		}
		n += len(w)
		words++
		if (words == 1 && n >= 4) || (words > 1 && n >= 6) {
			found = containsFoldASCII(v, string(buf[:n]))
		}
	}
	return found
}

func containsFoldASCII(s, lowerNeedle string) bool {
	for i := 0; i+len(lowerNeedle) <= len(s); i++ {
		j := 0
		for j < len(lowerNeedle) && lowerASCII(s[i+j]) == lowerNeedle[j] {
			j++
		}
		if j == len(lowerNeedle) {
			return true
		}
	}
	return false
}

// prevWord returns the lowercase word before the name at ns when one blank
// separates them ("public key", "Secret Key").
func prevWord(t string, ns int) string {
	if ns < 2 || t[ns-1] != ' ' {
		return ""
	}
	e := ns - 1
	s := e
	for s > 0 && isAlnum(t[s-1]) && e-s < 24 {
		s--
	}
	return strings.ToLower(t[s:e])
}

// expandName grows a keyword into the name around it.
func expandName(t string, ks, ke int) (int, int, bool) {
	i := ks
	for i > 0 && isNameByte(t[i-1]) {
		if (t[i-1] == 'n' || t[i-1] == 't' || t[i-1] == 'r') && escapedAt(t, i-1) {
			break // "\nPASSWORD=" inside a JSON string
		}
		i--
		if ks-i > maxName {
			return 0, 0, false
		}
	}
	if i > 0 && (t[i-1] == '$' || t[i-1] == '@') {
		// PHP $token, shell $PASSWORD (a reference, checked below).
		if i >= 2 && t[i-2] == '$' {
			return 0, 0, false
		}
	}
	j := ke
	for j < len(t) && isNameByte(t[j]) {
		j++
		if j-ke > maxName {
			return 0, 0, false
		}
	}
	if i > 0 && t[i-1] == '$' {
		// $PASSWORD is a use of the variable, not an assignment, unless PHP
		// assigns it ($password = "...").
		k := j
		for k < len(t) && (t[k] == ' ' || t[k] == '\t') {
			k++
		}
		assign := k+1 < len(t) && ((t[k] == '=' && t[k+1] != '=') || (t[k] == '.' && t[k+1] == '='))
		if !assign {
			return 0, 0, false
		}
	}
	return i, j, true
}

// wordBounds calls fn with the start and end of each word of name, split
// at separators and camelCase humps: "AWS_SECRET_ACCESS_KEY",
// "secretAccessKey" and "APIKey" give [AWS SECRET ACCESS KEY], [secret
// Access Key], [API Key]. A false return stops it.
func wordBounds(name string, fn func(s, e int) bool) {
	start := -1
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !isAlnum(c) {
			if start >= 0 && !fn(start, i) {
				return
			}
			start = -1
			continue
		}
		if start < 0 {
			start = i
			continue
		}
		p := name[i-1]
		upper := c >= 'A' && c <= 'Z'
		if upper && ((p >= 'a' && p <= 'z') || (p >= '0' && p <= '9') ||
			(p >= 'A' && p <= 'Z' && i+1 < len(name) && name[i+1] >= 'a' && name[i+1] <= 'z')) {
			if !fn(start, i) {
				return
			}
			start = i
		}
	}
	if start >= 0 {
		fn(start, len(name))
	}
}

// splitWords returns the lowercase words of name (see wordBounds).
func splitWords(name string) []string {
	lower := strings.ToLower(name)
	words := make([]string, 0, 4)
	wordBounds(name, func(s, e int) bool {
		words = append(words, lower[s:e])
		return true
	})
	return words
}

func set(words ...string) map[string]bool {
	m := make(map[string]bool, len(words))
	for _, w := range words {
		m[w] = true
	}
	return m
}

// Trailing words that say how a value is stored, not what it is.
var noiseWords = set("value", "val", "str", "string", "b64", "base64", "hex", "raw", "enc", "encoded", "plain",
	"plaintext", "literal", "bytes", "env", "prod", "production", "dev", "development", "staging", "stage", "live",
	"local", "default", "old", "new", "current", "override", "base", "secondary", "primary", "main", "backup", "alt")

var passwordWords = set("password", "passwd", "pwd", "pass", "passphrase", "passcode", "pw", "pswd")

// Words before "password" that make the name something else.
var passwordNot = set("hash", "hashed", "policy", "forgot", "reset", "expiry", "expires", "min", "max", "length",
	"rules", "rule", "field", "input", "prompt", "label", "hint", "placeholder", "regex", "pattern", "validator",
	"strength", "change", "bypass", "no", "require", "required", "show", "toggle", "type", "encrypt", "verify",
	"check", "is", "has", "use", "enable", "enabled", "disable", "confirm_button", "last", "update")

// Words before "token" that name something other than a credential: LLM
// tokens, pagination cursors, parser tokens.
var tokenNot = set("max", "min", "num", "total", "input", "output", "completion", "prompt", "count", "limit", "eos",
	"bos", "pad", "unk", "sep", "cls", "mask", "special", "start", "end", "stop", "next", "page", "continuation",
	"pagination", "sync", "cursor", "resume", "idempotency", "request", "trace", "span", "correlation", "cancellation",
	"cancel", "change", "delta", "lex", "parse", "last", "first", "prev", "previous", "word", "sub", "bpe", "vocab",
	"image", "audio", "reasoning", "cached", "thinking", "context", "verification", "verify", "eot", "eom",
	"unknown", "padding", "separator", "added", "new", "reserved", "system", "tool", "text", "cache", "usage", "per",
	"is", "has", "use", "no", "csrf", "xsrf", "form", "anti", "lexer", "parser", "syntax", "design", "color",
	"public", "pub", "publishable")

// Words before "key" that make it a credential.
var keyStrong = set("api", "secret", "access", "private", "master", "signing", "sign", "encryption", "encrypt",
	"decryption", "decrypt", "crypt", "crypto", "cipher", "aes", "hmac", "auth", "authentication", "account",
	"client", "app", "application", "session", "license", "licence", "service", "admin", "root", "storage", "shared",
	"deploy", "deployment", "consumer", "webhook", "jwt", "cookie", "subscription", "ingest", "ingestion", "write",
	"rest", "server", "partner", "merchant", "developer", "bot", "integration", "personal", "org", "organization",
	"project", "workspace", "management", "mgmt", "function", "host", "restricted", "sdk", "security", "ssh",
	"gpg", "pgp", "rsa", "ecdsa", "ed25519", "mac", "otp", "totp", "recovery", "backup", "wallet", "sk", "user",
	"instrumentation", "connection", "tenant", "router", "admin_api")

// Words before "key" that name a non-secret key.
var keyNot = set("public", "pub", "publishable", "cache", "foreign", "partition", "sort", "hash", "idempotency",
	"object", "lookup", "map", "dict", "unique", "composite", "index", "row", "column", "shortcut", "hot", "keyboard",
	"i18n", "translation", "range", "route", "s3", "bucket", "config", "setting", "settings", "property", "prop",
	"field", "attribute", "attr", "message", "msg", "label", "metric", "event", "group", "state", "type", "name",
	"search", "query", "list", "item", "node", "element", "component", "feature", "flag", "table", "meta",
	"metadata", "dedup", "dedupe", "lock", "redis", "memcache", "kv", "registry", "store", "sequence", "natural",
	"surrogate", "candidate", "order", "ordering", "shard", "sharding", "routing", "join", "grouping", "locale",
	"lang", "text", "react", "child", "parent", "tag", "version", "job", "task", "queue", "topic", "stream",
	"channel", "context", "ctx", "request", "response", "primary", "id", "file", "path", "dir", "env", "is", "has",
	"no", "by", "to", "sort_", "partition_", "public_", "json", "yaml", "dict_", "hotkey", "menu", "data", "schema",
	"idem", "trace", "dedupe_", "rate", "limit", "ratelimit", "throttle", "debounce", "memo", "storage_", "api_",
	"ssh_", "cert", "certificate", "verify", "verification", "encryption_", "checksum", "digest", "signature",
	"fingerprint", "kid", "thumbprint", "jwk", "jwks")

var secretNot = set("is", "has", "no", "non", "use", "uses", "enable", "enabled", "create", "generate", "rotate",
	"show", "print", "kube", "k8s", "top", "external", "sealed", "manager", "mount", "volume")

var authNot = set("use", "enable", "enabled", "require", "requires", "required", "skip", "no", "disable",
	"disabled", "two", "multi", "mfa", "with", "is", "has", "basic_", "o", "oauth", "2fa", "allow", "social")

// Compound single words ("pgpassword", "apitoken", "secretkey") are split by
// the terms they end with.
var compoundTerms = []struct {
	suffix string
	class  nameClass
	label  string
}{
	{"password", namePassword, "password"}, {"passwd", namePassword, "password"}, {"passphrase", namePassword, "password"},
	{"apikey", nameSecret, "api-key"}, {"secretkey", nameSecret, "secret-key"}, {"accesskey", nameSecret, "secret-key"},
	{"privatekey", nameSecret, "private-key"}, {"authkey", nameSecret, "secret-key"}, {"masterkey", nameSecret, "secret-key"},
	{"signingkey", nameSecret, "secret-key"}, {"token", nameSecret, "token"}, {"secret", nameSecret, "secret"},
}

// classifyName decides whether name holds a secret, and the mask label.
func classifyName(name string) (nameClass, string) {
	words := splitWords(name)
	stripped := false
	for len(words) > 1 && (noiseWords[words[len(words)-1]] || allDigits(words[len(words)-1])) {
		words = words[:len(words)-1]
		stripped = true
	}
	if stripped && (words[len(words)-1] == "pass" || words[len(words)-1] == "pw") {
		return nameNone, "" // pass_str, pass_count: "pass" as a verb
	}
	if len(words) == 0 {
		return nameNone, ""
	}
	w := words[len(words)-1]
	p := ""
	if len(words) > 1 {
		p = words[len(words)-2]
	}
	// A trailing digit run stays with its word ("key1", "token2").
	w = strings.TrimRight(w, "0123456789")
	if w == "id" && p == "key" && len(words) == 3 && words[0] == "private" {
		// A service-account file's private_key_id: the id of the key,
		// which the account's owner keeps with the key.
		return nameSecret, "private-key-id"
	}
	if w == "key" && len(p) > 3 && strings.HasSuffix(p, "api") {
		p = "api" // DDAPIKey, OPENAIAPI_KEY: an acronym glued to "api"
	}
	switch {
	case passwordWords[w]:
		if passwordNot[p] || (len(words) == 1 && (w == "pwd" || w == "pw")) {
			return nameNone, "" // PWD is the working directory
		}
		if len(words) == 1 && w == "pass" {
			return nameLonePass, "password"
		}
		return namePassword, "password"
	case w == "secret":
		if secretNot[p] {
			return nameNone, ""
		}
		return nameSecret, "secret"
	case w == "token" || w == "pat":
		if tokenNot[p] {
			return nameNone, ""
		}
		if w == "pat" && len(words) == 1 {
			return nameNone, "" // a lone "pat" is too often something else
		}
		return nameSecret, "token"
	case w == "apikey":
		return nameSecret, "api-key"
	case w == "key":
		switch {
		case p == "api":
			return nameSecret, "api-key"
		case p == "private":
			return nameSecret, "private-key"
		case keyStrong[p]:
			return nameSecret, "secret-key"
		case keyNot[p]:
			return nameNone, ""
		}
		return nameWeak, "secret-key"
	case w == "auth":
		if authNot[p] {
			return nameNone, ""
		}
		return nameSecret, "auth"
	case w == "authorization":
		return nameHeader, "authorization"
	case w == "credential" || w == "credentials" || w == "creds" || w == "cred":
		return nameSecret, "credential"
	case w == "sig":
		return nameSecret, "signature"
	case w == "bearer":
		return nameHeader, "authorization"
	case w == "dockerconfigjson" || w == "dockercfg":
		return nameSecret, "docker-config"
	case w == "session" || w == "sessid" || w == "sessionid" || w == "phpsessid" || w == "jsessionid":
		// A session cookie: only a random value counts.
		return nameWeak, "session"
	}
	for _, ct := range compoundTerms {
		if strings.HasSuffix(w, ct.suffix) {
			pre := w[:len(w)-len(ct.suffix)]
			if tokenNot[pre] || keyNot[pre] || passwordNot[pre] || secretNot[pre] {
				return nameNone, ""
			}
			return ct.class, ct.label
		}
	}
	return nameNone, ""
}

// refineLabel names AWS secrets after AWS: the shape and the name agree.
func refineLabel(label, name, v string) string {
	ln := strings.ToLower(name)
	switch {
	case label == "secret-key" && len(v) == 40 && (strings.Contains(ln, "aws") || strings.Contains(ln, "secretaccess") ||
		strings.Contains(ln, "secret_access") || ln == "secret_key"):
		return "aws-secret-access-key"
	case label == "token" && strings.Contains(ln, "session") && (strings.Contains(ln, "aws") || ln == "sessiontoken"):
		return "aws-session-token"
	}
	return label
}

// findValue locates the value assigned to the name at t[ns:ne].
func findValue(t string, ns, ne int, class nameClass, flag bool) (int, int, bool) {
	// The name may be quoted ("password": ..., 'PASSWORD' => ..., \"token\": ...).
	keyQuote, keyEsc := byte(0), 0
	if ns > 0 && isQuote(t[ns-1]) {
		keyQuote = t[ns-1]
		for k := ns - 2; k >= 0 && t[k] == '\\'; k-- {
			keyEsc++
		}
	}
	j := ne
	if keyQuote == 0 && ne < len(t) && isQuote(t[ne]) {
		// A key of several words: "facebook access_token": "...".
		q := t[ne]
		for k := ns - 1; k >= 0 && ns-k < 40; k-- {
			if t[k] == q {
				keyQuote = q
				break
			}
			if !(isNameByte(t[k]) || t[k] == ' ') {
				break
			}
		}
	}
	if keyQuote != 0 && (j+keyEsc >= len(t) || t[j+keyEsc] != keyQuote || !precededBy(t, j+keyEsc, '\\', keyEsc)) {
		// The quote before the name opens something else ("SECRET=x" at the
		// start of a JSON string): the name is bare.
		keyQuote, keyEsc = 0, 0
	}
	if keyQuote != 0 {
		j += keyEsc + 1
		if j < len(t) && t[j] == ']' { // ENV["TOKEN"] = ..., os.environ['PASSWORD'] = ...
			j++
		}
		// XML attribute pair: <add key="ApiKey" value="..."/>.
		if vs, ve, ok := xmlAttrValue(t, ns, j, keyEsc); ok {
			return vs, ve, true
		}
	}
	// XML element: <password>value</password>.
	if keyQuote == 0 && ns > 0 && t[ns-1] == '<' && j < len(t) && t[j] == '>' {
		vs := j + 1
		ve := vs
		for ve < len(t) && t[ve] != '<' && ve-vs < 4096 {
			ve++
		}
		if !strings.HasPrefix(t[ve:], "</"+t[ns:ne]+">") {
			return 0, 0, false // not an element closed by its name: a regex group, a generic
		}
		for vs < ve && isSpace(t[vs]) {
			vs++
		}
		for ve > vs && isSpace(t[ve-1]) {
			ve--
		}
		return vs, ve, ve > vs
	}
	k := skipBlanks(t, j)
	op, opEnd := readOp(t, k)
	if op == "" && k < len(t) && t[k] == '|' && tableRow(t, ns) {
		op, opEnd = "=", k+1 // | NAME | value | in a Markdown table
	}
	if op == "" && keyQuote == 0 && k > j && k < len(t) && isNameByte(t[k]) {
		// A type between name and operator: Go "token string = ...",
		// "password: str = ...".
		m := k
		for m < len(t) && isNameByte(t[m]) && m-k < 24 {
			m++
		}
		if m2 := skipBlanks(t, m); m2 < len(t) {
			if op2, end2 := readOp(t, m2); op2 == "=" || op2 == ":=" {
				op, opEnd = op2, end2
			}
		}
	}
	restOfLine := false
	switch op {
	case "":
		// No operator: a flag's next argument (--password hunter2), netrc
		// ("password hunter2"), prose ("password is hunter2").
		if k == j || k >= len(t) {
			return 0, 0, false
		}
		switch {
		case flag:
			return readValue(t, k, false, false, false)
		case class == namePassword && keyQuote == 0:
			if strings.HasPrefix(t[k:], "is ") || strings.HasPrefix(t[k:], "was ") {
				return proseValue(t, k)
			}
			vs, ve, ok := readValue(t, k, false, false, false)
			if !ok || !netrcContext(t, ns, ve) {
				return 0, 0, false
			}
			return vs, ve, true
		case (class == nameSecret || class == nameHeader) && keyQuote == 0 &&
			(strings.HasPrefix(t[k:], "is ") || strings.HasPrefix(t[k:], "was ")):
			return proseValue(t, k)
		}
		return 0, 0, false
	case ",":
		// setenv("TOKEN", "value"), System.setProperty("X_TOKEN", "value"):
		// both sides quoted, the name the call's first argument (not one
		// string of a list).
		if keyQuote == 0 || !openCallBefore(t, ns-1-keyEsc) {
			return 0, 0, false
		}
		k = skipBlanks(t, opEnd)
		if k >= len(t) || !(isQuote(t[k]) || t[k] == '\\') {
			return 0, 0, false
		}
		return readValue(t, k, false, false, false)
	case ":", "=":
		restOfLine = keyQuote == 0 && atLineStart(t, ns)
	}
	k = skipBlanks(t, opEnd)
	if k >= len(t) {
		return 0, 0, false
	}
	// TypeScript/Python annotations: "apiKey: string = '...'".
	if op == ":" && isNameByte(t[k]) {
		m := k
		for m < len(t) && (isNameByte(t[m]) || t[m] == '[' || t[m] == ']') && m-k < 24 {
			m++
		}
		if m2 := skipBlanks(t, m); m2 < len(t) && t[m2] == '=' && (m2+1 >= len(t) || t[m2+1] != '=') {
			k = skipBlanks(t, m2+1)
			restOfLine = false
		}
	}
	query := ns > 0 && (t[ns-1] == '?' || t[ns-1] == '&')
	semi := ns > 0 && t[ns-1] == ';'
	vs, ve, ok := readValue(t, k, restOfLine, query, semi)
	if ok && keyQuote == 0 && ns > 0 && isQuote(t[ns-1]) && !escapedAt(t, ns-1) && ve < len(t) && t[ve] != t[ns-1] {
		// "Name: value" as one quoted argument (curl -H 'X-Db-Password:
		// a<b)c'): the value runs to the argument's closing quote.
		q := t[ns-1]
		if e := strings.IndexByte(t[ve:min(len(t), ve+512)], q); e > 0 && !strings.ContainsAny(t[ve:ve+e], " \t\r\n\\") {
			ve += e
		}
	}
	if ok && op == ":" && isBlockIndicator(t[vs:ve]) {
		return yamlBlock(t, ns, ve)
	}
	if ok && isScheme(t[vs:ve]) && ve < len(t) && t[ve] == ' ' {
		// "Authorization: Basic xyz" unquoted inside a command line: the
		// credential is the word after the scheme.
		if _, e2, ok2 := bareValue(t, skipBlanks(t, ve), false, query, semi); ok2 {
			ve = e2
		}
	}
	if ok && op == ":" && keyQuote == 0 && k == opEnd && ve > vs && !isQuote(t[vs]) && !restOfLine && !(vs > 0 && isQuote(t[vs-1])) {
		// "io.jsonwebtoken:jjwt-jackson", "token:abc" in a URL: a colon
		// glued to both sides is not an assignment.
		return 0, 0, false
	}
	return vs, ve, ok
}

func isScheme(w string) bool {
	if len(w) > 16 {
		return false
	}
	for _, s := range authSchemes {
		if strings.EqualFold(w, s) {
			return true
		}
	}
	return false
}

// openCallBefore reports whether the quote at q opens a call's first
// argument: "(" before it, blanks aside.
func openCallBefore(t string, q int) bool {
	i := q
	for i > 0 && (t[i-1] == ' ' || t[i-1] == '\t') {
		i--
	}
	return i > 0 && t[i-1] == '('
}

func precededBy(t string, j int, c byte, n int) bool {
	for k := 1; k <= n; k++ {
		if j-k < 0 || t[j-k] != c {
			return false
		}
	}
	return j-n-1 < 0 || t[j-n-1] != c
}

func skipBlanks(t string, i int) int {
	for i < len(t) && (t[i] == ' ' || t[i] == '\t') {
		i++
	}
	return i
}

// readOp reads an assignment operator at t[i:].
func readOp(t string, i int) (string, int) {
	if i >= len(t) {
		return "", i
	}
	rest := t[i:]
	for _, op := range []string{":::=", "::=", ":=", "=>", "?=", ".=", "||=", "->"} {
		if strings.HasPrefix(rest, op) {
			return "=", i + len(op)
		}
	}
	switch rest[0] {
	case '=':
		if len(rest) > 1 && rest[1] == '~' {
			return "", i // regex match
		}
		if len(rest) > 1 && rest[1] == '=' {
			// "password == x" compares; "Password==x;" (a connection
			// string) assigns a value that starts with "=".
			if i == 0 || t[i-1] == ' ' || len(rest) < 3 || rest[2] == ' ' || rest[2] == '=' || isQuote(rest[2]) {
				return "", i
			}
		}
		return "=", i + 1
	case ':':
		if len(rest) > 1 && rest[1] == ':' {
			return "", i
		}
		return ":", i + 1
	case ',':
		return ",", i + 1
	}
	return "", i
}

// atLineStart reports whether the name at ns starts its line, after
// indentation and words such as export, set, ENV, "- " or a comment mark:
// then an unquoted value runs to the end of the line.
func atLineStart(t string, ns int) bool {
	i := ns
	for i > 0 && ns-i < 40 {
		if lineSepBefore(t, i) {
			break
		}
		i--
	}
	if !lineSepBefore(t, i) {
		return false
	}
	seg := strings.TrimSpace(t[i:ns])
	for _, p := range []string{"$", ">", "export", "declare -x", "readonly", "local", "set", "setenv", "ENV", "ARG", "-", "#", "//"} {
		seg = strings.TrimSpace(strings.TrimPrefix(seg, p))
	}
	return seg == ""
}

// readValue reads a value starting at t[i]: quoted (also with escaped
// quotes, as inside a JSON string) or bare.
func readValue(t string, i int, restOfLine, query, semi bool) (int, int, bool) {
	if vs, ve, ok := typographicValue(t, i); ok {
		return vs, ve, true
	}
	esc := 0
	k := i
	for k < len(t) && t[k] == '\\' {
		k++
		esc++
	}
	if k < len(t) && isQuote(t[k]) && (esc == 0 || esc%2 == 1) {
		q := t[k]
		vs := k + 1
		j := vs
		for ; j < len(t) && j-vs < 16384; j++ {
			c := t[j]
			if (c == '\n' || c == '\r') && q != '`' {
				return vs, j, j > vs
			}
			if c == q || (esc > 0 && c == '"') {
				n := 0
				for m := j - 1; m >= vs && t[m] == '\\'; m-- {
					n++
				}
				if c == q && (n == esc || (esc == 0 && n%2 == 0)) {
					return vs, j, j > vs
				}
				if esc > 0 && n < esc {
					return 0, 0, false // the string holding the escaped value ended first
				}
			}
		}
		if j == len(t) {
			// The text ends before the quote closes (an output cut short,
			// a message that ends mid-line): its end closes the value as a
			// line break does.
			return vs, j, j > vs
		}
		return 0, 0, false
	}
	if esc > 0 {
		return 0, 0, false
	}
	return bareValue(t, i, restOfLine, query, semi)
}

// tagAt reports an HTML or XML tag at t[j] ('<'): </x, <x>, <x attr.
func tagAt(t string, j int) bool {
	k := j + 1
	if k < len(t) && (t[k] == '/' || t[k] == '!') {
		return true
	}
	for k < len(t) && (t[k]|0x20 >= 'a' && t[k]|0x20 <= 'z' || t[k] == '-' || t[k] == ':') {
		k++
	}
	// <x>, <x attr, <x/>; "<x/y" is a path or random bytes, not a tag.
	return k > j+1 && (k == len(t) || t[k] == '>' || t[k] == ' ' || t[k] == '/' && k+1 < len(t) && t[k+1] == '>')
}

// typographicQuotes pair the opening and closing quotation marks a
// formatter or a person writes around a value in prose: “…”, «…», ‘…’.
var typographicQuotes = [][2]string{{"“", "”"}, {"«", "»"}, {"‘", "’"}, {"„", "“"},
	// As JSON escapes them, inside a JSON string inside another.
	{`\u201c`, `\u201d`}, {`\u00ab`, `\u00bb`}, {`\u2018`, `\u2019`}, {`\u201C`, `\u201D`}, {`\u00AB`, `\u00BB`}}

// typographicOpen reports a typographic opening quote just before t[vs].
func typographicOpen(t string, vs int) bool {
	for _, q := range typographicQuotes {
		if strings.HasSuffix(t[:vs], q[0]) {
			return true
		}
	}
	return false
}

// typographicValue reads a value between typographic quotes at t[i:], on
// one line.
func typographicValue(t string, i int) (int, int, bool) {
	if i >= len(t) || t[i] < 0x80 && t[i] != '\\' {
		return 0, 0, false
	}
	for _, q := range typographicQuotes {
		if !strings.HasPrefix(t[i:], q[0]) {
			continue
		}
		vs := i + len(q[0])
		end := min(len(t), vs+4096)
		if nl := strings.IndexByte(t[vs:end], '\n'); nl >= 0 {
			end = vs + nl
		}
		ve := strings.Index(t[vs:end], q[1])
		if ve <= 0 {
			return 0, 0, false
		}
		return vs, vs + ve, true
	}
	return 0, 0, false
}

// bareValue reads an unquoted value.
func bareValue(t string, i int, restOfLine, query, semi bool) (int, int, bool) {
	depth := 0
	j := i
	for ; j < len(t) && j-i < 4096; j++ {
		c := t[j]
		switch {
		case c == '\n' || c == '\r':
			goto done
		case c == '\\':
			if j+1 < len(t) && strings.IndexByte("nrt\"'\\u/", t[j+1]) >= 0 {
				goto done
			}
		case c == ' ' || c == '\t':
			if !restOfLine || assignmentFollows(t, j) {
				goto done
			}
		case isQuote(c):
			goto done
		case c == '<':
			// A tag ends a value (<br>, </td>); a '<' among random bytes
			// is one of them.
			if tagAt(t, j) {
				goto done
			}
		case c == ';':
			if semi || !restOfLine || assignmentFollows(t, j) {
				goto done
			}
		case c == '&':
			if query {
				goto done
			}
		case c == ',':
			if !restOfLine {
				goto done
			}
		case c == '(' || c == '[' || c == '{':
			depth++
		case c == ')' || c == ']' || c == '}':
			// A closing bracket ends the value when it closes what holds
			// it (f(token=abc), [token=abc]); inside a token
			// (…vrD)l(&C2…) it is one of its bytes.
			if depth == 0 && !restOfLine && (j+1 >= len(t) || !isRunByte(t[j+1])) {
				goto done
			}
			depth = max(0, depth-1)
		}
	}
done:
	ve := j
	if restOfLine {
		// Drop a trailing comment and blanks.
		if h := strings.Index(t[i:ve], " #"); h >= 0 {
			ve = i + h
		}
		for ve > i {
			c := t[ve-1]
			if c == ' ' || c == '\t' || c == ',' || c == ';' || c == ':' ||
				(c == ')' && strings.Count(t[i:ve], "(") < strings.Count(t[i:ve], ")")) {
				ve-- // blanks, the comma closing a field, the parenthesis closing a call
				continue
			}
			break
		}
	}
	return i, ve, ve > i
}

// assignmentFollows reports whether another NAME= starts after the blank or
// semicolon at t[j]: "A=1 B=2 cmd", "Password=x;Encrypt=True".
func assignmentFollows(t string, j int) bool {
	k := j + 1
	for k < len(t) && (t[k] == ' ' || t[k] == '\t') {
		k++
	}
	m := k
	for m < len(t) && (isAlnum(t[m]) || t[m] == '_' || t[m] == '.' || t[m] == '-') && m-k < 64 {
		m++
	}
	if m == k || m >= len(t) || !(t[k] == '_' || (t[k]|0x20 >= 'a' && t[k]|0x20 <= 'z')) {
		return false
	}
	switch {
	case t[m] == '=':
		// NAME=value, but not base64 padding ("...NQ==") nor a bare "X=" at
		// the end of the line.
		return m+1 < len(t) && strings.IndexByte("= \t\r\n\\", t[m+1]) < 0
	case t[m] == ' ' && m+1 < len(t) && t[m+1] == '=':
		return true
	case t[j] == ' ' && t[m] == ':' && m+1 < len(t) && t[m+1] == ' ':
		return true
	}
	return false
}

// xmlAttrValue reads value="..." after a quoted key="NAME" attribute.
func xmlAttrValue(t string, ns, j, esc int) (int, int, bool) {
	// The attribute holding the name must be key=, name= or id=.
	a := ns - 1 - esc
	if a < 1 || t[a-1] != '=' {
		return 0, 0, false
	}
	attr := strings.ToLower(t[max(0, a-5) : a-1])
	if !strings.HasSuffix(attr, "key") && !strings.HasSuffix(attr, "name") && !strings.HasSuffix(attr, "id") {
		return 0, 0, false
	}
	k := j
	for k < len(t) && isSpace(t[k]) && k-j < 8 {
		k++
	}
	rest := t[k:]
	for _, v := range []string{"value=", "Value="} {
		if strings.HasPrefix(rest, v) {
			return readValue(t, k+len(v), false, false, false)
		}
	}
	return 0, 0, false
}

// netrcContext accepts "password VALUE" only where a netrc or similar file
// would have it: the value ends its line or a netrc keyword follows, and
// the name starts its line or follows a login.
func netrcContext(t string, ns, ve int) bool {
	k := skipBlanks(t, ve)
	end := k >= len(t) || t[k] == '\n' || t[k] == '\r' || (t[k] == '\\' && k+1 < len(t) && (t[k+1] == 'n' || t[k+1] == 'r'))
	if !end {
		for _, w := range []string{"machine ", "login ", "account ", "port ", "macdef "} {
			if strings.HasPrefix(t[k:], w) {
				end = true
			}
		}
	}
	if !end {
		return false
	}
	if atLineStart(t, ns) {
		return true
	}
	ls := strings.LastIndexByte(t[max(0, ns-200):ns], '\n')
	line := t[max(0, ns-200)+ls+1 : ns]
	return strings.Contains(line, "login ") || strings.Contains(line, "machine ")
}

// proseValue reads the word after "is"/"was" in "my password is X".
func proseValue(t string, k int) (int, int, bool) {
	k += strings.IndexByte(t[k:], ' ') + 1
	k = skipBlanks(t, k)
	if strings.HasPrefix(t[k:], ": ") {
		k += 2
	}
	vs, ve, ok := readValue(t, k, false, false, false)
	if !ok {
		return 0, 0, false
	}
	for ve > vs && strings.IndexByte(".,;:!?)", t[ve-1]) >= 0 {
		ve-- // sentence punctuation
	}
	return vs, ve, ve > vs
}

// Authorization schemes whose credential follows one blank.
var authSchemes = []string{"bearer", "basic", "token", "bot", "apikey", "api-key", "api-token", "key", "sso-key", "jwt", "dpop", "oauth", "splunk", "negotiate", "ntlm", "digest", "aws4-hmac-sha256", "hmac", "mac", "gitlab"}

// stripScheme drops "Bearer " and its like from a header value.
func stripScheme(t string, vs, ve int, class nameClass) (int, int) {
	v := t[vs:ve]
	sp := strings.IndexByte(v, ' ')
	if sp <= 0 {
		return vs, ve
	}
	scheme := strings.ToLower(v[:sp])
	for _, s := range authSchemes {
		if scheme == s {
			vs += sp + 1
			for vs < ve && t[vs] == ' ' {
				vs++
			}
			if class == nameHeader || scheme == "bearer" || scheme == "basic" || scheme == "token" {
				// The credential is one word; for Digest/AWS4 keep the rest.
				if scheme != "digest" && scheme != "aws4-hmac-sha256" {
					if e := strings.IndexAny(t[vs:ve], " ;"); e > 0 {
						ve = vs + e
					}
				}
			}
			return vs, ve
		}
	}
	return vs, ve
}

// plausibleValue decides whether v, assigned to a name of the given class,
// is a credential rather than a reference, a placeholder or a setting.
func plausibleValue(v string, class nameClass) bool {
	n := len(v)
	switch class {
	case namePassword:
		if n < 6 {
			return false
		}
	case nameWeak:
		if n < 16 {
			return false
		}
	default:
		if n < 8 {
			return false
		}
	}
	if n > maxValue || strings.ContainsAny(v, " \t\n") {
		// Text with blanks under a secret-like name is a description, a
		// query or code more often than a passphrase.
		return false
	}
	if numberLike(v) || isTimestamp(v) || isReference(v) || strings.Contains(v, maskKeyword) || looksLikePattern(v) {
		return false // numbers, versions, dates, ports; references; masks; regexes and format strings
	}
	if n <= 16 {
		for _, w := range []string{"true", "false", "null", "none", "nil", "undefined", "required", "optional", "string",
			"password", "secret", "token", "bearer", "basic", "hidden", "masked", "default", "empty", "unset", "disabled", "enabled"} {
			if strings.EqualFold(v, w) {
				return false
			}
		}
	}
	if isPlaceholder(v) || looksLikePathOrURL(v) || looksLikeEnvName(v) || isHash(v) {
		return false
	}
	if looksLikeWords(v) && !(class == namePassword && humanPassword(v)) {
		return false
	}
	lower, upper, digit, other := charKinds(v)
	switch class {
	case namePassword:
		// Human-chosen: any value with some variety.
		return digit || other || (lower && upper && n >= 8)
	case nameWeak:
		if isUUID(v) || (allHex(v) && (n == 32 || n == 40 || n == 64 || n == 128)) {
			return false
		}
		return (lower || upper) && digit && entropy(v) >= 3.2
	default:
		return entropy(v) >= 2.5 && (digit || (lower && upper) || other)
	}
}

// looksLikePattern reports regular expressions, format strings and
// parenthesised expressions: (?:x), [^a], \d, {name}, (optional).
func looksLikePattern(v string) bool {
	if v[0] == '(' && (v[len(v)-1] == ')' || strings.Contains(v, "(?") || strings.Contains(v, `\`) || parenthesisedWord(v)) {
		return true // (optional), (?i)..., (\d+), (bool, (self.username
	}
	if i := strings.IndexByte(v, '{'); i >= 0 && strings.IndexByte(v[i:], '}') > 0 {
		return true
	}
	// A group or a class is closed: (?:x), (?i), [^a]. In a random
	// password "(?" or "[^" opens nothing.
	if i := strings.Index(v, "(?"); i >= 0 && strings.IndexByte(v[i:], ')') > 0 {
		return true
	}
	if i := strings.Index(v, "[^"); i >= 0 && strings.IndexByte(v[i:], ']') > 0 {
		return true
	}
	for _, m := range []string{`\d`, `\w`, `\s`, `\b`} {
		if strings.Contains(v, m) {
			return true
		}
	}
	return false
}

// parenthesisedWord reports a value that opens a parenthesis on a word or
// an identifier: "(bool," of a docstring, "(self.username" of an
// expression. A random secret may start with "(" too, on random bytes.
func parenthesisedWord(v string) bool {
	i := 1
	for i < len(v) && (isAlnum(v[i]) || v[i] == '_' || v[i] == '.') {
		i++
	}
	return i >= 4 && identifierLike(v[1:i]) && (i == len(v) || v[i] == ',' || v[i] == ' ' || v[i] == ')')
}

// maxValue is the longest value the context detector considers: longer
// ones are documents, not credentials (PEM bodies have their own detector).
const maxValue = 4096

// isTimestamp reports an ISO 8601 date and time (2026-09-19T00:00:00Z,
// 2025-01-02 03:04:05+01:00): an expiry or a creation time.
func isTimestamp(v string) bool {
	if len(v) < 16 || len(v) > 35 || !numberLike(v[:10]) || v[4] != '-' || v[7] != '-' || (v[10] != 'T' && v[10] != ' ') {
		return false
	}
	rest := strings.TrimRight(v[11:], "Z")
	return numberLike(strings.NewReplacer("+", ":", ".", ":").Replace(rest))
}

// numberLike reports digits with separators: ports, versions, dates.
func numberLike(v string) bool {
	digits := 0
	for i := 0; i < len(v); i++ {
		switch c := v[i]; {
		case c >= '0' && c <= '9':
			digits++
		case c == '.' || c == '-' || c == '_' || c == ':' || c == ',':
		default:
			return false
		}
	}
	return digits > 0
}

// hashPrefixes start the values of digests and password hashes: what a
// setting named after a secret holds when it stores the secret's hash
// (sha256:..., SRI sha512-..., bcrypt $2b$, argon2, crypt(3) $6$, LDAP
// {SSHA}, Django pbkdf2_sha256$, SSH fingerprints SHA256:...).
var hashPrefixes = []string{"sha1:", "sha256:", "sha384:", "sha512:", "md5:", "sha1-", "sha256-", "sha384-", "sha512-",
	"$2a$", "$2b$", "$2y$", "$argon2", "$scrypt$", "$pbkdf2", "$1$", "$5$", "$6$", "$y$", "{ssha}", "{sha}", "{ssha256}",
	"{ssha512}", "{crypt}", "{bcrypt}", "pbkdf2_sha256$", "pbkdf2_sha1$", "bcrypt_sha256$", "argon2$", "scrypt:", "SHA256:", "MD5:"}

// isHash reports a value that is a digest or a password hash by its
// prefix.
func isHash(v string) bool {
	for _, p := range hashPrefixes {
		if len(v) > len(p)+6 && (strings.HasPrefix(v, p) || (p[0] != '$' && hasPrefixFold(v, p))) {
			return true
		}
	}
	return false
}

func hasPrefixFold(s, prefix string) bool {
	return len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix)
}

// humanPassword reports a value made of words that still reads as a
// password a person chose: it has digits or symbols (summer_tiger18,
// velvet.bluebird33), not a bare label (prod-db-primary).
func humanPassword(v string) bool {
	_, _, digit, _ := charKinds(v)
	return digit || strings.ContainsAny(v, "!#$%&*+?@^~")
}

// isReference reports values that name a secret kept elsewhere: variables,
// templates, environment lookups, code expressions.
func isReference(v string) bool {
	switch v[0] {
	case '$':
		// $VAR, ${VAR}, $(cmd); not a password that starts with "$".
		if len(v) > 1 && (v[1] == '{' || v[1] == '(' || identifierLike(v[1:])) {
			return true
		}
	case '%':
		// %VAR% (Windows), %(name)s, %{name} (format strings).
		if len(v) > 1 && (v[1] == '(' || v[1] == '{') {
			return true
		}
		if i := strings.IndexByte(v[1:], '%'); i > 0 && identifierLike(v[1:1+i]) {
			return true
		}
	case '@':
		// @variable, @Microsoft.KeyVault(...).
		if len(v) > 1 && (identifierLike(v[1:]) || strings.HasPrefix(v, "@Microsoft.KeyVault(")) {
			return true
		}
	case '{', '[':
		return true
	case '!':
		return strings.HasPrefix(v, "!Ref") || strings.HasPrefix(v, "!Sub") || strings.HasPrefix(v, "!GetAtt")
	}
	for _, p := range []string{"os.environ", "os.getenv", "process.env", "env(", "ENV[", "getenv(", "System.getenv",
		"secrets.", "vars.", "config.", "settings.", "self.", "this.", "import.meta", "Deno.env", "vault:", "ref+",
		"arn:aws:secretsmanager", "projects/", "secret://", "op://", "keyvault", "sm://", "env:", "file:", "<path:", "#{"} {
		if strings.HasPrefix(v, p) {
			return true
		}
	}
	return false
}

// isCode reports an unquoted value that is an expression: a call, an
// index, a field access (get_token(), creds["x"], cfg.Password,
// request.headers.get(...).
func isCode(v string) bool {
	if i := strings.IndexAny(v, "(["); i > 0 && (strings.HasSuffix(v, ")") || strings.HasSuffix(v, "]") ||
		(identifierLike(v[:i]) && !allDigits(strings.ReplaceAll(v[:i], ".", "")) && bracketsCloseAsCode(v[i:]))) {
		return true
	}
	return dottedIdentifier(v)
}

// bracketsCloseAsCode reports whether the brackets of v (starting at its
// first) balance as an expression's do, each closer followed by the end,
// another bracket, a '.' or a ',': get("x").strip, creds["k"], a(b)[0];
// not Bk[xx0Iw1HQ]J8XJ, a random token that holds brackets.
func bracketsCloseAsCode(v string) bool {
	depth := 0
	for i := 0; i < len(v); i++ {
		switch v[i] {
		case '(', '[':
			depth++
			// An argument or an index starts with a name, a number, a
			// quote or another bracket: "(<1K" is no call.
			if i+1 < len(v) && !(isAlnum(v[i+1]) || strings.IndexByte("_'\"([)]-.", v[i+1]) >= 0) {
				return false
			}
		case ')', ']':
			depth--
			if depth < 0 {
				return false
			}
			if i+1 < len(v) && strings.IndexByte(".([)],;", v[i+1]) < 0 {
				return false
			}
		}
	}
	// A call left open was cut at a blank between its arguments
	// (slice(0, 3)); a bracket left open among random bytes is theirs.
	return depth == 0 || strings.HasSuffix(v, ",") || strings.HasSuffix(v, "(") || strings.HasSuffix(v, "[")
}

// identifierLike reports a name of code: letters, digits, '_' and '.',
// starting with a letter or '_'.
func identifierLike(v string) bool {
	if v == "" || !(v[0] == '_' || (v[0]|0x20 >= 'a' && v[0]|0x20 <= 'z')) {
		return false
	}
	for i := 0; i < len(v); i++ {
		if !isAlnum(v[i]) && v[i] != '_' && v[i] != '.' {
			return false
		}
	}
	return true
}

// dottedIdentifier reports "a.b.c" made of identifiers: a field access in
// code, or a config key, never a credential.
func dottedIdentifier(v string) bool {
	if strings.Count(v, ".") == 0 {
		return false
	}
	for _, seg := range strings.Split(v, ".") {
		if seg == "" || !(seg[0] == '_' || (seg[0]|0x20 >= 'a' && seg[0]|0x20 <= 'z')) {
			return false
		}
		for i := 0; i < len(seg); i++ {
			if !isAlnum(seg[i]) && seg[i] != '_' {
				return false
			}
		}
		_, upper, digit, _ := charKinds(seg)
		if digit || (upper && strings.ToLower(seg[1:]) != seg[1:] && strings.ToUpper(seg) != seg) {
			return false // mixed-case or digit-bearing segments look random
		}
	}
	return true
}

// looksLikeWords reports lowercase phrases ("test-token", "not-a-secret")
// and camelCase word chains ("UserProfileCacheKey"): labels, not keys.
func looksLikeWords(v string) bool {
	if segmentedWords(v) {
		return true
	}
	lowerOnly := true
	for i := 0; i < len(v); i++ {
		c := v[i]
		if !(c >= 'a' && c <= 'z') && c != '-' && c != '_' && c != '.' && c != ' ' {
			lowerOnly = false
			break
		}
	}
	if lowerOnly {
		return true
	}
	// camelCase chain of dictionary-like humps: every hump 3+ letters, only
	// a short digit tail.
	for i := 0; i < len(v); i++ {
		if !isAlnum(v[i]) && v[i] != '-' && v[i] != '_' && v[i] != '.' {
			return false
		}
	}
	humps, ok := 0, true
	wordBounds(v, func(s, e int) bool {
		h := v[s:e]
		letters := strings.TrimRight(h, "0123456789")
		last := e == len(v)
		if len(h)-len(letters) > 2 || (len(letters) < 3 && !(last && len(letters) >= 1)) {
			ok = false
			return false
		}
		for j := 1; j < len(letters); j++ {
			if letters[j] < 'a' || letters[j] > 'z' {
				ok = false
				return false
			}
		}
		if !pronounceable(letters) {
			ok = false
			return false
		}
		humps++
		return true
	})
	return ok && humps >= 2
}

// segmentedWords reports lowercase words joined by - _ . or : with short
// numbers among them (csc-e2e-populate, test_key_12345, v1.2-beta): a name
// or a label. A random token has random segments.
func segmentedWords(v string) bool {
	if !strings.ContainsAny(v, "-_.:") {
		return false
	}
	words, segs := 0, 0
	for rest := v; rest != ""; {
		i := strings.IndexAny(rest, "-_.:")
		seg := rest
		if i >= 0 {
			seg, rest = rest[:i], rest[i+1:]
		} else {
			rest = ""
		}
		if seg == "" {
			continue
		}
		segs++
		letters := strings.TrimRight(seg, "0123456789")
		switch {
		case letters == "":
			if len(seg) > 6 {
				return false // a long number is an id, not a word
			}
		case len(seg)-len(letters) <= 2 && isLettersOneCase(letters) && letters == strings.ToLower(letters) &&
			(len(letters) <= 3 || pronounceable(letters)):
			words++
		case len(seg) <= 3: // e2e, k8s, v1, io
			words++
		default:
			return false
		}
	}
	return segs >= 2 && words >= 1
}

// pronounceable is a crude test that a hump is a word: it has a vowel and
// no run of four consonants.
func pronounceable(w string) bool {
	vowels, run := 0, 0
	for i := 0; i < len(w); i++ {
		if strings.IndexByte("aeiouyAEIOUY", w[i]) >= 0 {
			vowels++
			run = 0
		} else {
			run++
			if run >= 4 {
				return false
			}
		}
	}
	return vowels > 0
}

func looksLikePathOrURL(v string) bool {
	if strings.HasPrefix(v, "./") || strings.HasPrefix(v, "../") || strings.HasPrefix(v, "~/") ||
		(len(v) > 2 && v[1] == ':' && (v[2] == '\\' || v[2] == '/')) {
		return true
	}
	if strings.HasPrefix(v, "/") && !strings.ContainsAny(v, "+= ") && (strings.Count(v, "/") >= 2 || strings.Contains(v, ".")) {
		// An absolute path, unless a segment is random: a base64 key may
		// start with "/" too.
		random := false
		for _, seg := range strings.Split(v, "/") {
			lower, upper, digit, _ := charKinds(seg)
			if len(seg) >= 12 && lower && upper && digit && !looksLikeWords(seg) {
				random = true
			}
		}
		if !random {
			return true
		}
	}
	if strings.Contains(v, "://") {
		return true // a URL; credentials inside one are the URL detector's
	}
	if at := strings.IndexByte(v, '@'); at > 0 && strings.IndexByte(v[at:], '.') > 0 && !strings.ContainsAny(v, "/:") {
		lower, _, _, _ := charKinds(v[:at])
		if lower && strings.Count(v, "@") == 1 && dottedHost(v[at+1:]) {
			return true // an e-mail address
		}
	}
	if dot := strings.LastIndexByte(v, '.'); dot >= 0 && len(v)-dot <= 9 {
		for _, ext := range []string{".json", ".pem", ".key", ".crt", ".p12", ".pfx", ".txt", ".yaml", ".yml", ".env", ".enc", ".gpg", ".asc", ".jks", ".keystore"} {
			if hasSuffixFold(v, ext) {
				return true
			}
		}
	}
	return false
}

func dottedHost(h string) bool {
	for i := 0; i < len(h); i++ {
		c := h[i]
		if !(c >= 'a' && c <= 'z') && !(c >= '0' && c <= '9') && c != '.' && c != '-' {
			return false
		}
	}
	return strings.Contains(h, ".")
}

// looksLikeEnvName reports a value that names an environment variable
// (API_KEY: OPENAI_API_KEY): uppercase words joined by underscores.
func looksLikeEnvName(v string) bool {
	if !strings.Contains(v, "_") || !(v[0] >= 'A' && v[0] <= 'Z') {
		return false
	}
	words, segs := 0, 0
	for _, seg := range strings.Split(v, "_") {
		if seg == "" {
			continue
		}
		segs++
		letters := true
		for i := 0; i < len(seg); i++ {
			c := seg[i]
			if !(c >= 'A' && c <= 'Z') && !(c >= '0' && c <= '9') {
				return false
			}
			if c >= '0' && c <= '9' {
				letters = false
			}
		}
		if letters && len(seg) >= 2 {
			words++
		}
	}
	// NL80211_ATTR_MESH_AUTH: mostly words; a random uppercase token with
	// an underscore has one or two letter runs at most.
	return segs >= 2 && words*3 >= segs*2
}

func isUUID(v string) bool {
	if len(v) != 36 {
		return false
	}
	for i := 0; i < 36; i++ {
		switch i {
		case 8, 13, 18, 23:
			if v[i] != '-' {
				return false
			}
		default:
			if !isHex(v[i]) {
				return false
			}
		}
	}
	return true
}

// detectBearer finds "Bearer TOKEN" outside a recognised header.
func detectBearer(sc *scan, ks, ke int) {
	t := sc.text
	if ks > 0 && isAlnum(t[ks-1]) {
		return
	}
	k := ke
	if k >= len(t) || t[k] != ' ' {
		return
	}
	k = skipBlanks(t, k)
	e := k
	for e < len(t) && (isTokenByte(t[e]) || t[e] == '~') && e-k < 4096 {
		e++
	}
	v := t[k:e]
	if len(v) < 16 || isPlaceholder(v) || isReference(v) || isCode(v) || looksLikeWords(v) {
		return
	}
	if _, ok := maskAt(t, k); ok {
		return
	}
	lower, upper, digit, _ := charKinds(v)
	if !(digit || (lower && upper)) || entropy(v) < 3.0 {
		return
	}
	sc.add(k, e, sc.eng.labelRule("bearer-token"))
}

// isBlockIndicator reports a YAML block scalar header: |, >, |-, >+, |2.
func isBlockIndicator(v string) bool {
	if v == "" || (v[0] != '|' && v[0] != '>') {
		return false
	}
	for i := 1; i < len(v); i++ {
		if v[i] != '-' && v[i] != '+' && (v[i] < '1' || v[i] > '9') {
			return false
		}
	}
	return len(v) <= 3
}

// indentAt returns the indentation of the line holding t[i], and where
// that line starts.
func indentAt(t string, i int) (int, int) {
	ls := strings.LastIndexByte(t[:i], '\n') + 1
	n := 0
	for ls+n < len(t) && (t[ls+n] == ' ' || t[ls+n] == '\t') {
		n++
	}
	return n, ls
}

// yamlBlock reads the lines of a block scalar that follows the header
// ending at hdrEnd, for the key at ns: every line indented deeper than the
// key's line.
func yamlBlock(t string, ns, hdrEnd int) (int, int, bool) {
	keyIndent, _ := indentAt(t, ns)
	nl := strings.IndexByte(t[hdrEnd:], '\n')
	if nl < 0 || strings.TrimSpace(t[hdrEnd:hdrEnd+nl]) != "" {
		return 0, 0, false
	}
	i := hdrEnd + nl + 1
	vs, ve := -1, -1
	for i < len(t) && i-hdrEnd < 1<<16 {
		e := strings.IndexByte(t[i:], '\n')
		if e < 0 {
			e = len(t) - i
		}
		line := t[i : i+e]
		if strings.TrimSpace(line) == "" {
			i += e + 1
			continue
		}
		ind := len(line) - len(strings.TrimLeft(line, " \t"))
		if ind <= keyIndent {
			break
		}
		if vs < 0 {
			vs = i + ind
		}
		ve = i + len(strings.TrimRight(line, " \t\r"))
		i += e + 1
	}
	return vs, ve, vs >= 0 && ve > vs
}
