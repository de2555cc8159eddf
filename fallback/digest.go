package fallback

import (
	"strings"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/format"
	"github.com/compactkit/compact/internal/keyword"
)

// digest is what a file's contents, as the window's reads showed them, say
// about the file: what a resuming agent would otherwise read it again for.
type digest struct {
	about string   // the file's own description: its first doc sentence
	notes []note   // comments that explain (why, NB, must, doesn't, TODO)
	defs  []string // declared names, or a short one-line declaration whole
	// exported counts the defs at the front that the file exports.
	exported int
	uses     []string // names imported from other packages, "name (package)"
	env      []string // environment variables the code reads
}

// note is an explanatory comment sentence with how telling it is.
type note struct {
	text  string
	score int
	// echoed: the agent's own words repeat it (a comment it quoted back
	// while reasoning), so it is what the file meant to the agent.
	echoed bool
}

// Bounds of one file's digest.
const (
	maxDigestDefs  = 8
	maxDigestUses  = 4
	maxDigestEnv   = 4
	maxDigestNotes = 2
	// maxNoteCandidates notes are kept while reading, for the agent's
	// echo of one to lift it among the maxDigestNotes shown.
	maxNoteCandidates = 8
	maxDeclLine       = 70
	digestLines       = 400 // lines of one read looked at
)

// readDigest reads the contents of file path, as a tool printed them (line
// numbers and all), for its digest. Only the lines a read showed count.
func readDigest(path, content string) *digest {
	d := &digest{}
	lang := languageOf(path)
	if lang == langNone {
		return d
	}
	numbered := numberedLines(content)
	var para []string // the comment paragraph being read
	flush := func(lineNo int) {
		if len(para) == 0 {
			return
		}
		d.addComment(strings.Join(para, " "), lineNo)
		para = para[:0]
	}
	inBlock, inDoc := false, false // inside /* */, inside a """ docstring
	importBuf := ""                // a JS import spread over lines
	n := 0
	for rest := content; rest != "" && n < digestLines; n++ {
		var line string
		line, rest, _ = strings.Cut(rest, "\n")
		if numbered {
			line = stripLineNumber(line)
		}
		t := strings.TrimSpace(line)
		if lang == langProse {
			d.proseLine(t)
			continue
		}
		if importBuf != "" {
			importBuf += " " + t
			if strings.Contains(t, " from ") || strings.HasPrefix(t, "}") || len(importBuf) > 600 {
				d.importLine(importBuf)
				importBuf = ""
			}
			continue
		}
		text, isComment := commentText(t, lang, &inBlock, &inDoc)
		if isComment {
			if text == "" || !hasLetter(text) || text[0] == '@' {
				// A blank comment line, a rule of ====, or a doc tag
				// (@param, @private) ends a paragraph.
				flush(n) // a blank comment line or a rule of ==== ends a paragraph
				continue
			}
			para = append(para, text)
			continue
		}
		flush(n)
		if t == "" {
			continue
		}
		if strings.HasPrefix(t, "import ") && lang == langC && strings.Contains(t, "{") && !strings.Contains(t, " from ") {
			importBuf = t
			continue
		}
		d.codeLine(line, t, lang)
	}
	flush(n)
	return d
}

// Languages, as far as comments and declarations go.
const (
	langNone  = iota
	langProse // Markdown, reStructuredText, plain text
	langC     // // and /* */ comments: C, Go, JS, TS, Rust, Java, Pony, …
	langHash  // # comments: Python, shell, Ruby, Perl, YAML, TOML
	langDash  // -- comments: SQL, Lua, Haskell
)

func languageOf(path string) int {
	ext := strings.ToLower(path)
	if k := strings.LastIndexByte(ext, '.'); k >= 0 && k > strings.LastIndexAny(ext, `/\`) {
		ext = ext[k+1:]
	} else {
		return langNone
	}
	switch ext {
	case "md", "mdx", "rst", "txt", "adoc":
		return langProse
	case "py", "pyi", "sh", "bash", "zsh", "rb", "pl", "pm", "r", "yaml", "yml", "toml", "cfg", "ini", "conf", "mk", "cmake", "tf", "nix", "ex", "exs", "jl", "cr", "nim":
		return langHash
	case "sql", "lua", "hs", "elm", "ada":
		return langDash
	case "go", "js", "mjs", "cjs", "jsx", "ts", "tsx", "mts", "cts", "rs", "java", "kt", "kts", "scala", "c", "h", "cc",
		"cpp", "cxx", "hpp", "hh", "cs", "swift", "dart", "php", "pony", "zig", "proto", "gradle", "groovy", "sol", "v", "d", "m", "mm", "css", "scss", "less", "vue", "svelte", "astro", "prisma", "graphql", "gql":
		return langC
	}
	return langNone
}

// numberedLines reports file contents shown with line numbers: the first
// line says so (numberedListing), or most of the first lines open with a
// number ("12:", "12\t", format.LineNumberMark) after a header such as
// an editor's open-file banner (format.OpenFileOf).
func numberedLines(content string) bool {
	if numberedListing(content) {
		return true
	}
	seen, numbered := 0, 0
	for rest := content; rest != "" && seen < 6; {
		var line string
		line, rest, _ = strings.Cut(rest, "\n")
		if strings.TrimSpace(line) == "" {
			continue
		}
		seen++
		if stripLineNumber(line) != line {
			numbered++
		}
	}
	return numbered >= 3
}

// stripLineNumber removes the line number a tool put before a line:
// "    12\t", "12:", or an agent's mark (format.LineNumberMark).
func stripLineNumber(line string) string {
	i := 0
	for i < len(line) && line[i] == ' ' {
		i++
	}
	j := i
	for j < len(line) && line[j] >= '0' && line[j] <= '9' {
		j++
	}
	if j == i {
		return line
	}
	switch n := format.LineNumberMark(line[j:]); {
	case n > 0:
		return line[j+n:]
	case j < len(line) && (line[j] == '\t' || line[j] == ':'):
		return line[j+1:]
	}
	return line
}

// commentText returns the words of a comment line without its markers,
// and whether the line is a comment at all. inBlock and inDoc carry the
// state of /* */ blocks and Python docstrings across lines.
func commentText(t string, lang int, inBlock, inDoc *bool) (string, bool) {
	switch {
	case *inBlock:
		if k := strings.Index(t, "*/"); k >= 0 {
			*inBlock = false
			t = t[:k]
		}
		return strings.TrimSpace(strings.TrimLeft(t, "*")), true
	case *inDoc:
		if k := strings.Index(t, `"""`); k >= 0 {
			*inDoc = false
			t = t[:k]
		}
		return strings.TrimSpace(t), true
	}
	switch lang {
	case langC:
		if strings.HasPrefix(t, "//") {
			return strings.TrimSpace(strings.TrimLeft(t, "/!")), true
		}
		if strings.HasPrefix(t, "/*") {
			t = strings.TrimLeft(t, "/*!")
			if k := strings.Index(t, "*/"); k >= 0 {
				t = t[:k]
			} else {
				*inBlock = true
			}
			return strings.TrimSpace(t), true
		}
	case langHash:
		if strings.HasPrefix(t, "#") && !strings.HasPrefix(t, "#!") {
			return strings.TrimSpace(strings.TrimLeft(t, "#")), true
		}
		if strings.HasPrefix(t, `"""`) || strings.HasPrefix(t, `r"""`) {
			t = t[strings.Index(t, `"""`)+3:]
			if k := strings.Index(t, `"""`); k >= 0 {
				t = t[:k]
			} else {
				*inDoc = true
			}
			return strings.TrimSpace(t), true
		}
	case langDash:
		if strings.HasPrefix(t, "--") {
			return strings.TrimSpace(strings.TrimLeft(t, "-")), true
		}
	}
	return "", false
}

// banner reports a comment that titles a part of the file ("TYPES",
// "PUBLIC API"): a few words in capitals.
func banner(text string) bool {
	return strings.Count(text, " ") < 4 && strings.ToUpper(text) == text
}

// codeLike reports a comment that is code commented out: it ends like a
// statement or a block, or opens with a keyword.
func codeLike(text string) bool {
	t := strings.TrimSpace(text)
	if t == "" {
		return false
	}
	switch t[len(t)-1] {
	case ';', '{', '}', ')', ',', '(':
		return true
	}
	return hasPrefixAny(t, []string{"import ", "export ", "return ", "const ", "let ", "var ", "if (", "for (", "def ", "func ", "print(", "console."})
}

// noteStarts mark a comment written to warn or explain.
var noteStarts = []string{"nb", "note", "why", "todo", "fixme", "hack", "xxx", "warning", "important", "caution", "bug"}

// boilerplate opens comments that say nothing about the code: licences,
// tool directives.
var boilerplate = []string{"copyright", "license", "licensed", "spdx", "eslint", "prettier", "@ts-", "tslint", "noqa",
	"type:", "pylint", "-*-", "go:", "+build", "nolint", "istanbul", "biome-ignore", "deno-lint", "#region", "#endregion",
	"@flow", "jshint", "@param", "@returns", "@return", "@throws", "@type", "@public", "@private", "@internal"}

// addComment reads one comment paragraph: the first prose sentence near
// the top of the file describes it; sentences that explain (a note
// marker, or the cue words decisions are scored by) are notes.
func (d *digest) addComment(text string, lineNo int) {
	text = strings.Trim(text, "=-*#~_+ ")
	l := asciiLower(text[:min(len(text), 24)])
	if hasPrefixAny(l, boilerplate) || banner(text) || codeLike(text) {
		return
	}
	marked := false
	for _, m := range noteStarts {
		if strings.HasPrefix(l, m) && len(l) > len(m) && (l[len(m)] == ':' || l[len(m)] == ' ' || l[len(m)] == '(' || l[len(m)] == '!') {
			marked = true
			break
		}
	}
	first := true
	sentences(text, func(_ int, s string) {
		if len(s) < 12 || strings.Count(s, " ") < 2 {
			return
		}
		if first && d.about == "" && lineNo < 60 && !marked {
			d.about = clip(s, maxSentence)
			first = false
			return
		}
		first = false
		sc := decisionScore(s)
		if cueMatcher().Tags(s)&cueContrast != 0 {
			sc++ // a comment that says not/only/never/without explains a constraint
		}
		if marked {
			sc += 3
			marked = false
		}
		if sc >= 3 {
			d.addNote(note{text: clip(s, maxSentence), score: sc})
		}
	})
}

func (d *digest) addNote(n note) {
	for _, o := range d.notes {
		if o.text == n.text {
			return
		}
	}
	d.notes = append(d.notes, n)
	// Keep the best few candidates, first seen winning ties, in order of
	// sighting: render shows the best of them and those the agent echoed.
	if len(d.notes) > maxNoteCandidates {
		low := 0
		for i, o := range d.notes {
			if o.score < d.notes[low].score || o.score == d.notes[low].score && i > low {
				low = i
			}
		}
		d.notes = append(d.notes[:low], d.notes[low+1:]...)
	}
}

// proseLine reads a line of a Markdown or text file: its first paragraph
// sentence describes the file.
func (d *digest) proseLine(t string) {
	if d.about != "" || t == "" {
		return
	}
	switch t[0] {
	case '#', '<', '!', '[', '|', '`', '=', '-', '>', '{', '*', '~', '+', ':', '.':
		return // headings, badges, HTML, tables, fences, rules, lists, front matter
	}
	if strings.Count(t, " ") < 3 {
		return
	}
	sentences(t, func(_ int, s string) {
		if d.about == "" {
			d.about = clip(s, maxSentence)
		}
	})
}

// declKeywords open a declaration, after modifiers; value declarations
// (const, let, var, type) are kept only at the top level or exported.
var declKeywords = map[string]bool{"function": false, "function*": false, "class": false, "interface": false,
	"type": true, "enum": false, "struct": false, "trait": false, "impl": false, "fn": false, "def": false, "func": false,
	"const": true, "let": true, "var": true, "module": false, "object": false, "record": false, "actor": false,
	"primitive": false, "fun": false, "protocol": false, "extension": false, "union": false, "namespace": false}

// declModifiers may precede a declaration keyword; the true ones export.
var declModifiers = map[string]bool{"export": true, "default": false, "pub": true, "pub(crate)": true, "public": false,
	"private": false, "protected": false, "internal": false, "static": false, "async": false, "abstract": false,
	"final": false, "open": false, "declare": false, "sealed": false, "data": false, "unsafe": false, "extern": false,
	"override": false}

// codeLine reads a line of code for what the file declares, imports and
// reads from the environment.
func (d *digest) codeLine(line, t string, lang int) {
	if strings.HasPrefix(t, "import ") || strings.HasPrefix(t, "from ") || strings.Contains(t, "require(") {
		d.importLine(t)
	}
	if mentionsEnv(t) {
		d.envNames(t)
	}
	indent := len(line) - len(strings.TrimLeft(line, " \t"))
	if indent > 4 || len(d.defs) >= maxDigestDefs {
		return
	}
	rest := t
	exported := false
	word, after, ok := strings.Cut(rest, " ")
	for ok {
		exports, modifier := declModifiers[word]
		if !modifier {
			break
		}
		exported = exported || exports
		rest = after
		word, after, ok = strings.Cut(rest, " ")
	}
	value, keyword := declKeywords[word]
	if !ok || !keyword {
		return
	}
	if value && indent > 0 && !exported {
		return // a local variable
	}
	name := declName(after)
	if name == "" {
		return
	}
	if value && len(t) <= maxDeclLine && strings.HasSuffix(t, ";") && strings.Contains(t, "=") && !strings.Contains(t, "=>") {
		name = t // a one-line declaration says it all
	}
	if contains(d.defs, name) {
		return
	}
	if exported || isUpper(name[0]) && lang == langC && word == "func" {
		// What the file exports goes before its private names.
		d.defs = append(d.defs, "")
		copy(d.defs[d.exported+1:], d.defs[d.exported:])
		d.defs[d.exported] = name
		d.exported++
		return
	}
	d.defs = append(d.defs, name)
}

// mentionsEnv reports a line holding "env" or "ENV".
func mentionsEnv(t string) bool {
	for i := 0; i+2 < len(t); i++ {
		if t[i] == 'e' && t[i+1] == 'n' && t[i+2] == 'v' || t[i] == 'E' && t[i+1] == 'N' && t[i+2] == 'V' {
			return true
		}
	}
	return false
}

func isUpper(c byte) bool { return c >= 'A' && c <= 'Z' }

// declName returns the name a declaration introduces (skipping a Go
// method's receiver).
func declName(s string) string {
	s = strings.TrimSpace(s)
	if strings.HasPrefix(s, "(") { // func (r *T) Name(
		if k := strings.IndexByte(s, ')'); k > 0 {
			s = strings.TrimSpace(s[k+1:])
		}
	}
	end := 0
	for end < len(s) && (isLetterOrDigit(s[end]) || s[end] == '_' || s[end] == '$') {
		end++
	}
	if end == 0 || !isIdentStart(s[0]) {
		return ""
	}
	return s[:end]
}

// importLine reads the names an import brings in from another package
// (relative and alias imports are the project's own files).
func (d *digest) importLine(t string) {
	var module, names string
	switch {
	case strings.HasPrefix(t, "from ") && strings.Contains(t, " import "): // Python
		module, names, _ = strings.Cut(t[len("from "):], " import ")
	case strings.HasPrefix(t, "import ") && strings.Contains(t, " from "): // JS, TS
		names, module, _ = strings.Cut(t[len("import "):], " from ")
	case strings.Contains(t, "require("):
		k := strings.Index(t, "require(")
		module = t[k+len("require("):]
		if e := strings.IndexByte(module, ')'); e > 0 {
			module = module[:e]
		}
		if eq := strings.IndexByte(t[:k], '='); eq > 0 {
			names = t[:eq]
			for _, kw := range []string{"const ", "let ", "var "} {
				names = strings.TrimPrefix(strings.TrimSpace(names), kw)
			}
		}
	default:
		return
	}
	module = strings.Trim(strings.TrimSpace(module), `"';`+"`")
	if module == "" || strings.HasPrefix(module, ".") || strings.HasPrefix(module, "@/") || strings.HasPrefix(module, "~/") ||
		strings.HasPrefix(module, "#") || strings.ContainsAny(module, " (") {
		return
	}
	names = strings.Trim(strings.TrimSpace(names), "{}() ")
	for _, n := range strings.Split(names, ",") {
		n = strings.TrimSpace(n)
		n = strings.TrimPrefix(n, "type ")
		if a, b, ok := strings.Cut(n, " as "); ok {
			n = strings.TrimSpace(b)
			_ = a
		}
		n = strings.Trim(n, "{} ")
		if n == "" || n == "*" || !isIdentStart(n[0]) || len(d.uses) >= maxDigestUses {
			continue
		}
		if len(n) < 4 && !isIdentifier(n) {
			continue // ok, err, z: too short to be worth keeping
		}
		entry := n + " (" + module + ")"
		if !contains(d.uses, entry) {
			d.uses = append(d.uses, entry)
		}
	}
}

// envNames reads the environment variables a line of code reads:
// env.NAME, process.env.NAME, os.environ["NAME"], getenv("NAME"),
// ENV["NAME"].
func (d *digest) envNames(t string) {
	for _, marker := range []string{"env.", "environ[", "environ.get(", "getenv(", "Getenv(", "ENV[", "ENV.fetch("} {
		for rest := t; ; {
			k := strings.Index(rest, marker)
			if k < 0 {
				break
			}
			rest = rest[k+len(marker):]
			name := strings.TrimLeft(rest, `"'`)
			end := 0
			for end < len(name) && (name[end] >= 'A' && name[end] <= 'Z' || name[end] >= '0' && name[end] <= '9' || name[end] == '_') {
				end++
			}
			name = name[:end]
			if len(name) >= 4 && strings.Contains(name, "_") && isLetter(name[0]) && len(d.env) < maxDigestEnv && !contains(d.env, name) {
				d.env = append(d.env, name)
			}
		}
	}
}

// merge adds what another read of the same file showed.
func (d *digest) merge(o *digest) {
	if d.about == "" {
		d.about = o.about
	}
	for _, n := range o.notes {
		d.addNote(n)
	}
	for _, x := range o.defs {
		if len(d.defs) < maxDigestDefs && !contains(d.defs, x) {
			d.defs = append(d.defs, x)
		}
	}
	for _, x := range o.uses {
		if len(d.uses) < maxDigestUses && !contains(d.uses, x) {
			d.uses = append(d.uses, x)
		}
	}
	for _, x := range o.env {
		if len(d.env) < maxDigestEnv && !contains(d.env, x) {
			d.env = append(d.env, x)
		}
	}
}

// render writes the digest on one line, most telling first (a cap cuts
// the end): the notes the agent echoed, the file's description, what it
// declares and reads from the environment, its other notes, then what it
// imports. Imports in common holds
// the imports many files share, which say nothing about one of them.
func (d *digest) render(common map[string]bool) string {
	if d == nil {
		return ""
	}
	var parts []string
	for _, n := range d.notes {
		if n.echoed {
			parts = append(parts, n.text)
		}
	}
	if d.about != "" {
		parts = append(parts, clip(d.about, maxAboutChars))
	}
	if len(d.defs) > 0 {
		parts = append(parts, "defines "+strings.Join(d.defs, ", "))
	}
	if len(d.env) > 0 {
		parts = append(parts, "env "+strings.Join(d.env, ", "))
	}
	for _, n := range d.bestNotes() {
		if n.text != d.about {
			parts = append(parts, n.text)
		}
	}
	var uses []string
	for _, u := range d.uses {
		if !common[u] {
			uses = append(uses, u)
		}
	}
	if len(uses) > 0 {
		parts = append(parts, "uses "+strings.Join(uses, ", "))
	}
	return strings.Join(parts, " | ")
}

// maxAboutChars bounds a file's description in its digest.
const maxAboutChars = 160

// commonImports returns the imports that three or more of the digests
// share.
func commonImports(ds []*digest) map[string]bool {
	n := map[string]int{}
	for _, d := range ds {
		for _, u := range d.uses {
			n[u]++
		}
	}
	common := map[string]bool{}
	for u, k := range n {
		if k >= 3 {
			common[u] = true
		}
	}
	return common
}

// bestNotes returns the best maxDigestNotes notes the agent did not
// echo, first seen winning ties, in order of sighting.
func (d *digest) bestNotes() []note {
	var out []note
	for _, n := range d.notes {
		if !n.echoed {
			out = append(out, n)
		}
	}
	for len(out) > maxDigestNotes {
		low := 0
		for i, o := range out {
			if o.score < out[low].score || o.score == out[low].score && i > low {
				low = i
			}
		}
		out = append(out[:low], out[low+1:]...)
	}
	return out
}

// echoPrefix is how much of a note the agent's words must repeat for it
// to count as echoed: enough that no common phrase does.
const echoPrefix = 40

// markEchoed marks the notes of the files' digests that the agent's own
// words (its text and reasoning) repeat, in one pass over those words.
func (w *window) markEchoed(files []*refStat) {
	var prefixes []string
	var notes []*note
	for _, r := range files {
		if r.dig == nil {
			continue
		}
		for i := range r.dig.notes {
			n := &r.dig.notes[i]
			if len(n.text) >= echoPrefix {
				prefixes = append(prefixes, n.text[:echoPrefix])
				notes = append(notes, n)
			}
		}
	}
	if len(prefixes) == 0 {
		return
	}
	m := keyword.New(keyword.Words(prefixes), false)
	for i := range w.msgs.len() {
		msg := w.msgs.at(i)
		if msg.Role != compact.RoleAssistant || msg.Summary {
			continue
		}
		for _, p := range msg.Parts {
			if p.Type == compact.PartText || p.Type == compact.PartThinking {
				m.Find(p.Text, func(_, id int) { notes[id].echoed = true })
			}
		}
	}
}
