package fallback

import (
	"strings"
	"sync"
	"unicode/utf8"
)

// refKind says what a reference found in text is.
type refKind uint8

const (
	refPath    refKind = iota + 1 // a file path: POSIX, ~/, Windows or relative
	refURL                        // http(s) and similar URLs
	refIdent                      // a code identifier: snake_case, camelCase, dotted.chain, @scope/pkg
	refSHA                        // a hex string that may be a commit id
	refIssue                      // #123
	refVersion                    // 1.2.3, v2.0.1: three or more dotted numbers
	refNumber                     // a number of four or more digits: an id, a port, a count
)

// ref is one reference found in text. Line is the line suffix of a path
// ("42", "71-78") when the text gave one.
type ref struct {
	kind refKind
	text string
	line string
	// called marks a name written as a call or an index: name( or name[.
	called bool
}

// scanRefs calls fn for every path, URL, identifier, hex id and issue
// number in s, in order. It never allocates per token beyond what fn keeps:
// the strings passed are substrings of s.
func scanRefs(s string, fn func(ref)) {
	i := 0
	for i < len(s) {
		// Skip coarse delimiters.
		for i < len(s) && coarseDelim[s[i]] {
			i++
		}
		j := i
		for j < len(s) && !coarseDelim[s[j]] {
			j++
		}
		if j > i {
			if t := s[i:j]; !plainWord(t) {
				scanCoarse(t, fn)
			}
		}
		i = j
	}
}

// coarseDelim marks the bytes that always end a token: space, quotes,
// backticks and angle brackets, which surround paths and names in prose,
// code and shell commands alike.
var coarseDelim = func() (t [256]bool) {
	for _, c := range []byte(" \t\n\r\v\f\"'`<>|;{},*") {
		t[c] = true
	}
	return t
}()

// byteSet is a set of bytes, for one-pass membership tests.
type byteSet [256]bool

func newByteSet(chars string) (b byteSet) {
	for i := 0; i < len(chars); i++ {
		b[chars[i]] = true
	}
	return b
}

// any reports whether s holds a byte of the set.
func (b *byteSet) any(s string) bool {
	for i := 0; i < len(s); i++ {
		if b[s[i]] {
			return true
		}
	}
	return false
}

// pathByte holds the bytes one of which every path has.
var pathByte = newByteSet(`/\.~`)

// scanCoarse classifies one whitespace-delimited token, splitting it
// further where it is not a URL.
func scanCoarse(t string, fn func(ref)) {
	if k := strings.Index(t, "://"); k > 0 {
		// A markdown link, "[#12](https://x/pull/12))", holds its text and
		// its URL in one token: the scheme starts after the last "(" or
		// "[", and what comes before is read on its own.
		start := strings.LastIndexAny(t[:k], "([") + 1
		if isScheme(t[start:k]) {
			if start > 0 {
				classify(t[:start], fn)
			}
			u := trimURL(t[start:])
			if len(u) > k-start+3 {
				fn(ref{kind: refURL, text: u})
			}
			return
		}
	}
	// '=' and '!' separate assignments and flags (file=@x.pl, --out=dir/x).
	for t != "" {
		k := -1
		for i := 0; i < len(t); i++ {
			if t[i] == '=' || t[i] == '!' {
				k = i
				break
			}
		}
		part := t
		if k >= 0 {
			part, t = t[:k], t[k+1:]
		} else {
			t = ""
		}
		classify(part, fn)
	}
}

func isScheme(s string) bool {
	if len(s) < 2 || len(s) > 10 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || i > 0 && (c >= '0' && c <= '9' || c == '+' || c == '-' || c == '.')) {
			return false
		}
	}
	return true
}

// trimURL drops what prose puts after a URL: closing punctuation and an
// unbalanced parenthesis or bracket.
func trimURL(u string) string {
	if k := strings.Index(u, "://"); k > 0 {
		// Markdown links: [text](http://x) leaves "](http://x)" in one token.
		if p := strings.LastIndexAny(u[:k], "(["); p >= 0 {
			u = u[p+1:]
		}
	}
	for {
		n := len(u)
		u = strings.TrimRight(u, ".,:;!?")
		if strings.HasSuffix(u, ")") && strings.Count(u, "(") < strings.Count(u, ")") {
			u = u[:len(u)-1]
		}
		if strings.HasSuffix(u, "]") && strings.Count(u, "[") < strings.Count(u, "]") {
			u = u[:len(u)-1]
		}
		if len(u) == n {
			return u
		}
	}
}

// classify decides what one fine token is and reports it.
func classify(t string, fn func(ref)) {
	t = trimToken(t)
	if len(t) >= 4 && t[0] != '#' && !hasLetter(t) || len(t) > 4 && (t[0] == 'v' || t[0] == 'V') && !hasLetter(t[1:]) {
		number(t, fn)
		return
	}
	if len(t) < 3 || !hasLetter(t) && t[0] != '#' {
		return // short numbers and punctuation
	}
	if strings.HasPrefix(t, "@/") {
		return // an import alias (@/components/x), not a file path as written
	}
	if strings.HasPrefix(t, "@") && !isScopedPackage(t) {
		t = t[1:] // an @-mention of a file (Claude Code, curl -F file=@x)
	}
	if pathByte.any(t) { // every path holds one of / \ . ~
		if p, line, ok := pathRef(t); ok {
			fn(ref{kind: refPath, text: p, line: line})
			return
		}
	}
	if isScopedPackage(t) {
		fn(ref{kind: refIdent, text: t})
		return
	}
	if t[0] == '#' {
		if n := t[1:]; len(n) >= 1 && len(n) <= 7 && allDigits(n) {
			fn(ref{kind: refIssue, text: t})
		}
		return
	}
	// A call or index: keep the name before it.
	called := false
	for k := 0; k < len(t); k++ {
		if t[k] == '(' || t[k] == '[' {
			t, called = t[:k], t[k] == '('
			break
		}
	}
	for len(t) > 0 && (t[len(t)-1] == '.' || t[len(t)-1] == ':') {
		t = t[:len(t)-1]
	}
	if isHexID(t) {
		fn(ref{kind: refSHA, text: t})
		return
	}
	if isIdentifier(t) && (called || !sentenceJoin(t)) {
		fn(ref{kind: refIdent, text: t, called: called})
	}
}

// sentenceJoin reports a dotted token that is two sentences run together
// where a line break was lost ("the call.We then", "page.Upon review"):
// a plain lower-case word that ends one sentence, and a capitalised word
// that can only open the next, a pronoun, article, conjunction,
// preposition or linking adverb. A name's part after a dot is a member
// or type (obj.Method, http.Client, models.Model), never one of those.
func sentenceJoin(t string) bool {
	left, right, ok := strings.Cut(t, ".")
	if !ok || len(left) < 2 || len(right) < 1 || !(right[0] >= 'A' && right[0] <= 'Z') {
		return false
	}
	for i := 0; i < len(left); i++ {
		if left[i] < 'a' || left[i] > 'z' {
			return false
		}
	}
	for i := 1; i < len(right); i++ {
		if right[i] < 'a' || right[i] > 'z' {
			return false
		}
	}
	return sentenceOpeners[strings.ToLower(right)]
}

// sentenceOpeners are the closed-class English words that open sentences:
// no code names a member or type by one of them.
var sentenceOpeners = func() map[string]bool {
	m := map[string]bool{}
	// Words that name real members (errors.Is, errors.As, sync.Once,
	// time.Now, rows.Next, wg.Wait, client.Do, db.Where, maps.All,
	// template.Must, header.Has, emitter.On, mat.At) are left out.
	for _, w := range strings.Fields(`i we you he she it they me us them my our your its their this that these those
		the a an another every some no one both either neither
		and but or so yet nor then first second third finally also still however therefore thus hence
		instead otherwise meanwhile moreover furthermore besides actually anyway perhaps maybe
		let lets if when while because although though unless before
		to for from without upon into onto about above below between during through within
		there here what which who whom whose why how
		are was were be been does did have had could will would should shall may might
		not yes ok okay please good great perfect looks seems hmm`) {
		m[w] = true
	}
	return m
}()

// number reports a version (1.2.3, v1.2.3, 10.0.0.1) or a number of four
// or more digits in t, a token with no letter but a leading v.
func number(t string, fn func(ref)) {
	for len(t) > 0 && (t[len(t)-1] == '.' || t[len(t)-1] == ':') {
		t = t[:len(t)-1]
	}
	body := t
	if body != "" && (body[0] == 'v' || body[0] == 'V') {
		body = body[1:]
	}
	switch {
	case body != t && allDigits(body):
		return // v2: a word, not a number
	case allDigits(body) && len(body) >= 4 && len(body) <= 20:
		fn(ref{kind: refNumber, text: t})
	case isVersion(body):
		fn(ref{kind: refVersion, text: t})
	}
}

// isVersion reports three or more dot-separated numbers.
func isVersion(s string) bool {
	parts := 0
	for part := range strings.SplitSeq(s, ".") {
		if part == "" || len(part) > 9 || !allDigits(part) {
			return false
		}
		parts++
	}
	return parts >= 3
}

// trimToken removes the punctuation prose wraps around a token, and
// parentheses or brackets that do not balance inside it.
func trimToken(t string) string {
	for {
		n := len(t)
		for len(t) > 0 && strings.IndexByte(".,:;!?", t[len(t)-1]) >= 0 {
			t = t[:len(t)-1]
		}
		for len(t) > 0 && t[0] == ':' {
			t = t[1:]
		}
		if len(t) == 0 {
			return t
		}
		last, first := t[len(t)-1], t[0]
		if (last == ')' || first == '(') && strings.Count(t, "(") != strings.Count(t, ")") {
			if last == ')' && strings.Count(t, "(") < strings.Count(t, ")") {
				t = t[:len(t)-1]
			} else if first == '(' {
				t = t[1:]
			}
		} else if (last == ']' || first == '[') && strings.Count(t, "[") != strings.Count(t, "]") {
			if last == ']' && strings.Count(t, "[") < strings.Count(t, "]") {
				t = t[:len(t)-1]
			} else if first == '[' {
				t = t[1:]
			}
		} else if first == '(' && last == ')' && len(t) >= 2 {
			t = t[1 : len(t)-1]
		}
		if len(t) == n {
			return t
		}
	}
}

// pathRef reports whether t is a file path, returning it without a
// trailing line reference (":42", ":42:7", ":71-78"), which comes back
// separately.
func pathRef(t string) (path, line string, ok bool) {
	path, line = splitLineRef(t)
	if !isPath(path) {
		return "", "", false
	}
	return path, line, true
}

// splitLineRef splits "x.go:42", "x.go:42:7" and "x.go:71-78".
func splitLineRef(t string) (string, string) {
	k := strings.IndexByte(t, ':')
	// Skip a Windows drive letter.
	if k == 1 && len(t) > 2 && isLetter(t[0]) {
		if k2 := strings.IndexByte(t[2:], ':'); k2 >= 0 {
			k = k2 + 2
		} else {
			return t, ""
		}
	}
	if k <= 0 || k == len(t)-1 {
		return t, ""
	}
	rest := t[k+1:]
	// 42, 42:7, 71-78, 24-40,54
	num := rest
	if c := strings.IndexByte(num, ':'); c >= 0 {
		if !allDigits(num[c+1:]) {
			return t, ""
		}
		num = num[:c]
	}
	for _, part := range strings.Split(num, ",") {
		a, b, dash := strings.Cut(part, "-")
		if !allDigits(a) || dash && !allDigits(b) {
			return t, ""
		}
	}
	return t[:k], num
}

// isPath recognises file paths: absolute POSIX paths with at least two
// segments or an extension, ~/ paths, Windows drive paths, relative paths
// whose last segment has a file extension (or that end in '/'), and bare
// file names with a known extension.
func isPath(p string) bool {
	if len(p) < 3 || len(p) > 1024 || !utf8.ValidString(p) {
		return false
	}
	switch {
	case len(p) >= 3 && isLetter(p[0]) && p[1] == ':' && (p[2] == '\\' || p[2] == '/'):
		return len(p) > 3 && pathChars(p[3:], true)
	case strings.HasPrefix(p, "~/"):
		return len(p) > 2 && pathChars(p[2:], false)
	case p[0] == '/':
		if p[1] == '/' || !pathChars(p[1:], false) {
			return false
		}
		rest := strings.TrimRight(p[1:], "/")
		if !hasLetter(rest) || rest[0] == '.' && len(rest) < 3 {
			return false
		}
		return strings.Contains(rest, "/") || hasExtension(rest)
	}
	if strings.ContainsRune(p, '\\') || !pathChars(p, false) || !isLetterOrDigit(p[0]) && p[0] != '.' && p[0] != '_' {
		return false
	}
	if strings.HasPrefix(p, "./") || strings.HasPrefix(p, "../") {
		return len(strings.TrimLeft(p, "./")) > 0 && hasLetter(p)
	}
	if k := strings.IndexByte(p, '/'); k >= 0 {
		trimmed := strings.TrimRight(p, "/")
		if trimmed == "" || strings.Contains(trimmed, "//") {
			return false // an empty segment
		}
		first := trimmed[:k]
		last := trimmed[strings.LastIndexByte(trimmed, '/')+1:]
		if len(trimmed) < len(p) { // a directory: dir/sub/
			return strings.IndexByte(trimmed, '/') >= 0 && hasLetter(p) && !allDigitsOrPunct(first)
		}
		return hasExtension(last) && (hasLetter(first) || hasLetter(last))
	}
	return knownExtension(p)
}

// pathChars reports whether s holds only characters that appear in paths
// written without quoting (plus the parentheses and brackets of route
// folders like app/(protected)/[id]/).
func pathChars(s string, windows bool) bool {
	depth := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case isLetterOrDigit(c), c == '.', c == '_', c == '-', c == '/', c == '~', c == '+', c == '@', c == '%', c == ':', c == '#':
		case c == '\\' && windows:
		case c == '(' || c == '[':
			depth++
		case c == ')' || c == ']':
			depth--
			if depth < 0 {
				return false
			}
		case c >= 0x80: // non-ASCII names
		default:
			return false
		}
	}
	return depth == 0
}

// hasExtension reports whether the last segment of name ends in a dot and
// one to ten alphanumerics, and is not a number (3.14) or a version (1.2.3).
func hasExtension(name string) bool {
	if k := strings.LastIndexByte(name, '/'); k >= 0 {
		name = name[k+1:]
	}
	k := strings.LastIndexByte(name, '.')
	if k <= 0 || k == len(name)-1 {
		return false
	}
	ext := name[k+1:]
	if len(ext) > 10 || !hasLetter(ext) {
		return false
	}
	for i := 0; i < len(ext); i++ {
		if !isLetterOrDigit(ext[i]) && ext[i] != '_' {
			return false
		}
	}
	return hasLetter(name[:k]) || name[0] == '.'
}

// knownExtension reports whether a bare name (no slash) is a file name:
// name.ext with a common source, config or data extension, optionally
// followed by more suffixes (x.py.orig, L003.py.mod2).
func knownExtension(name string) bool {
	k := strings.IndexByte(name, '.')
	if k <= 0 && !(k == 0 && len(name) > 1) {
		return false
	}
	if k == 0 { // dotfiles: .env, .gitignore (but not ".py", an extension)
		rest := name[1:]
		_, isExt := fileExtensions()[rest]
		isExt = isExt || rest == "pyc" || rest == "pyo" || rest == "swp" || rest == "rej"
		return len(rest) >= 2 && !isExt && !strings.Contains(rest, ".") && allIdentChars(rest) &&
			(rest[0] >= 'a' && rest[0] <= 'z' || rest[0] == '_')
	}
	if !hasLetter(name[:k]) || !allIdentCharsDash(name[:k]) {
		return false
	}
	rest := name[k+1:]
	first, last := rest, rest
	for part := range strings.SplitSeq(rest, ".") {
		if part == "" || !allIdentCharsDash(part) {
			return false
		}
		last = part
	}
	if j := strings.IndexByte(rest, '.'); j >= 0 {
		first = rest[:j]
	}
	_, ok := fileExtensions()[first]
	_, ok2 := fileExtensions()[last]
	if first != last && !ok2 && moduleLike[first] {
		return false // django.conf.global_settings is a module, not a file
	}
	return ok || ok2
}

// moduleLike are extensions that are also common module and package name
// parts, so that x.conf.y is read as a dotted name rather than a file.
var moduleLike = map[string]bool{"conf": true, "cfg": true, "ini": true, "env": true, "log": true, "lock": true,
	"out": true, "properties": true, "test": true, "mod": true, "sum": true, "cmd": true, "t": true}

var fileExtensions = sync.OnceValue(func() map[string]struct{} {
	m := map[string]struct{}{}
	for _, e := range strings.Fields(`go mod sum py pyi ipynb js mjs cjs jsx ts tsx mts cts json jsonl yaml yml toml ini cfg conf
		md mdx rst txt log csv tsv xml html htm css scss sass less vue svelte astro c h cc cpp cxx hpp hh rs java kt kts
		scala sc rb erb php pl pm sh bash zsh fish ps1 bat cmd sql prisma graphql gql proto swift mm cs fs fsx vb lua
		jl ex exs erl hrl hs ml mli clj cljs edn dart zig nim pony tf tfvars hcl lock env dockerfile makefile mk cmake
		gradle sbt patch diff tex bib png jpg jpeg gif svg webp ico pdf zip gz tgz tar traj bak backup orig tmp old
		out so dylib dll exe wasm class jar war ejs hbs njk j2 jinja properties plist xcconfig pbxproj sln csproj
		vcxproj rake gemspec cabal nix bzl bazel star cue dhall rego wat asm sv vhd ino cu cuh metal glsl hlsl sol`) {
		m[e] = struct{}{}
	}
	return m
})

// isIdentifier reports whether t looks like a name worth keeping exactly:
// it has structure a plain word lacks (an underscore, a camel hump, a dotted
// chain of names, or letters mixed with digits) and is 4 to 80 bytes long.
func isIdentifier(t string) bool {
	if len(t) < 4 || len(t) > 80 {
		return false
	}
	c0 := t[0]
	if !(isLetter(c0) || c0 == '_' || c0 == '$') {
		return false
	}
	structured := false
	letters, digits := 0, 0
	for i := 0; i < len(t); i++ {
		c := t[i]
		switch {
		case c >= 'a' && c <= 'z':
			letters++
			if i+1 < len(t) && t[i+1] >= 'A' && t[i+1] <= 'Z' {
				structured = true // camelCase
			}
		case c >= 'A' && c <= 'Z':
			letters++
			if i > 0 && i+1 < len(t) && t[i-1] >= 'A' && t[i-1] <= 'Z' && t[i+1] >= 'a' && t[i+1] <= 'z' {
				structured = true // HTTPServer
			}
		case c >= '0' && c <= '9':
			digits++
		case c == '_':
			if i > 0 && i < len(t)-1 {
				structured = true
			}
		case c == '.':
			if i == 0 || i == len(t)-1 || t[i-1] == '.' || !isIdentStart(t[i+1]) {
				return false
			}
			structured = true
		case c == '$':
		default:
			return false
		}
	}
	if letters == 0 || allUnderscoreOrUpperWord(t) {
		return false
	}
	if digits > 0 && letters > 0 && !structured {
		// L003, TS2769, E0308: a letter run then digits. Plain words with a
		// digit glued on (utf8, md5) are kept too: they only survive ranking
		// when they recur.
		return digits >= 2
	}
	return structured
}

// allUnderscoreOrUpperWord rejects tokens like __ or ___init that are only
// punctuation around one short word.
func allUnderscoreOrUpperWord(t string) bool {
	core := strings.Trim(t, "_$")
	return len(core) < 3
}

func isIdentStart(c byte) bool { return isLetter(c) || c == '_' || c == '$' }

// isScopedPackage recognises npm scoped packages: @scope/name.
func isScopedPackage(t string) bool {
	if len(t) < 4 || t[0] != '@' {
		return false
	}
	scope, name, ok := strings.Cut(t[1:], "/")
	if !ok || scope == "" || name == "" || strings.Contains(name, "/") {
		return false
	}
	return pkgName(scope) && pkgName(name)
}

func pkgName(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '.' || c == '_') {
			return false
		}
	}
	return isLetterOrDigit(s[0])
}

// isHexID reports a hex string of 7 to 40 digits holding both a digit and a
// letter: a commit id, or something that looks like one.
func isHexID(t string) bool {
	if len(t) < 7 || len(t) > 40 {
		return false
	}
	digit, letter := false, false
	for i := 0; i < len(t); i++ {
		c := t[i]
		switch {
		case c >= '0' && c <= '9':
			digit = true
		case c >= 'a' && c <= 'f':
			letter = true
		default:
			return false
		}
	}
	return digit && letter
}

func isLetter(c byte) bool        { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
func isLetterOrDigit(c byte) bool { return isLetter(c) || c >= '0' && c <= '9' }

func hasLetter(s string) bool {
	for i := 0; i < len(s); i++ {
		if isLetter(s[i]) {
			return true
		}
	}
	return false
}

func allDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

func allDigitsOrPunct(s string) bool {
	return !hasLetter(s)
}

func allIdentChars(s string) bool {
	for i := 0; i < len(s); i++ {
		if !isLetterOrDigit(s[i]) && s[i] != '_' {
			return false
		}
	}
	return true
}

func allIdentCharsDash(s string) bool {
	for i := 0; i < len(s); i++ {
		if !isLetterOrDigit(s[i]) && s[i] != '_' && s[i] != '-' && s[i] < 0x80 {
			return false
		}
	}
	return true
}

// codeSpans calls fn with the contents of each `inline code` span in s that
// is short enough to be a name, route or literal worth keeping exactly.
func codeSpans(s string, fn func(string)) {
	for {
		i := strings.IndexByte(s, '`')
		if i < 0 {
			return
		}
		s = s[i:]
		n := 0
		for n < len(s) && s[n] == '`' {
			n++
		}
		if n > 2 { // a fence, not a span: skip past its closing fence
			end := strings.Index(s[n:], s[:n])
			if end < 0 {
				return
			}
			s = s[n+end+n:]
			continue
		}
		end := strings.Index(s[n:], s[:n])
		if end < 0 {
			return
		}
		span := s[n : n+end]
		s = s[n+end+n:]
		span = strings.TrimSpace(span)
		if len(span) >= 3 && len(span) <= 80 && !strings.ContainsAny(span, "\n") && strings.Count(span, " ") <= 3 {
			fn(span)
		}
	}
}

// plainWord reports a token that cannot be a reference: shorter than three
// bytes, or letters only with no capital after the first (a word, not a
// camelCase name), optionally followed by sentence punctuation.
func plainWord(t string) bool {
	if len(t) < 3 {
		return true
	}
	for i := 0; i < len(t); i++ {
		switch byteKind[t[i]] {
		case kindLower:
		case kindUpper:
			if i > 0 {
				return false
			}
		case kindTrail:
			if i != len(t)-1 {
				return false
			}
		default:
			if !(t[i] == '(' && i == 0) {
				return false
			}
		}
	}
	return true
}

// Byte kinds for plainWord.
const (
	kindOther uint8 = iota
	kindLower
	kindUpper
	kindTrail // punctuation that may end a plain word
)

var byteKind = func() (k [256]uint8) {
	for c := 'a'; c <= 'z'; c++ {
		k[c] = kindLower
	}
	for c := 'A'; c <= 'Z'; c++ {
		k[c] = kindUpper
	}
	for _, c := range []byte(",.:)?!") {
		k[c] = kindTrail
	}
	return k
}()
