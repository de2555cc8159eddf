package fallback

import (
	"slices"
	"sort"
	"strings"
)

// source says where in the window a reference was seen: who produced it.
type source uint8

const (
	srcUser     source = iota
	srcAgent           // the agent's message text
	srcThinking        // the agent's reasoning
	srcArgs            // a call's arguments: a command, a path, a query
	srcEdit            // what an edit wrote into a file
	srcResult          // a tool's output
	srcError           // a line of a tool's output that reports an error
	nSources
)

// sourceWeight is what one message of each source adds to a reference's
// score.
var sourceWeight = [nSources]int{srcUser: 4, srcAgent: 3, srcThinking: 2, srcArgs: 2, srcEdit: 2, srcResult: 1, srcError: 2}

// refStat gathers every sighting of one path or name.
type refStat struct {
	text  string
	kind  refKind
	first int // sequence number of the first sighting, for stable order
	// msgs counts the distinct messages of each source that hold it.
	msgs    [nSources]int
	lastMsg [nSources]int
	// firstMsg is the first message of each source that holds it.
	firstMsg [nSources]int
	called   bool     // written as a call: name(
	defined  bool     // declared in a file a read showed
	op       fileOp   // the strongest operation a call did on a path
	ops      uint8    // every operation, as a bit set
	lines    []string // line references seen with a path
	span     bool     // written as `code` by the agent
	git      bool     // a hex id seen next to git, commit or sha
	dig      *digest  // what reads of the file showed of its contents
	// wrote is the telling line (see pickAdded) of the last edit of the
	// file that worked, when the actions do not show that edit in full.
	wrote string
	// quoted are lines of the file, as reads showed it, that the agent
	// quoted back in its own messages.
	quoted []string
	// digested counts the bytes of reads dig was made from.
	digested int
}

// score ranks a reference: the weighted count of messages naming it, each
// source counted up to three messages so that one chatty tool output does
// not outweigh what the agent said.
func (r *refStat) score() int {
	s := 0
	for src, n := range r.msgs {
		s += sourceWeight[src] * min(n, 3)
	}
	if r.span {
		s += 3
	}
	return s
}

// latest is the last message that holds the reference.
func (r *refStat) latest() int {
	m := -1
	for _, k := range r.lastMsg {
		m = max(m, k)
	}
	return m
}

func (r *refStat) messages() int {
	n := 0
	for _, k := range r.msgs {
		n += k
	}
	return n
}

// refIndex collects references across the window.
type refIndex struct {
	byText map[string]*refStat // paths
	names  map[string]*refStat // everything else
	seq    int
	// root is the directory that relative paths, folded into the absolute
	// paths they end, most often stand for: the project root (set by
	// paths).
	root string
}

func newRefIndex() *refIndex {
	return &refIndex{byText: map[string]*refStat{}, names: map[string]*refStat{}}
}

func (x *refIndex) get(kind refKind, text string) *refStat {
	m := x.names
	if kind == refPath {
		m = x.byText // paths and names live apart
	}
	r := m[text]
	if r == nil {
		x.seq++
		r = &refStat{text: strings.Clone(text), kind: kind, first: x.seq}
		for i := range r.lastMsg {
			r.lastMsg[i], r.firstMsg[i] = -1, -1
		}
		m[r.text] = r
	}
	return r
}

// see records one sighting of r in message msg.
func (x *refIndex) see(r ref, msg int, src source) *refStat {
	st := x.get(r.kind, r.text)
	if st.lastMsg[src] != msg {
		st.lastMsg[src] = msg
		st.msgs[src]++
		if st.firstMsg[src] < 0 {
			st.firstMsg[src] = msg
		}
	}
	st.called = st.called || r.called
	if r.line != "" && len(st.lines) < 8 && !contains(st.lines, r.line) {
		st.lines = append(st.lines, strings.Clone(r.line))
	}
	return st
}

// scan records every reference in text; git says whether the text talks
// about git, so that hex ids in it are likely commits.
func (x *refIndex) scan(text string, msg int, src source, git bool) {
	x.scanGit(text, msg, src, func() bool { return git })
}

// scanGit is scan with git worked out only if the text holds a hex id.
func (x *refIndex) scanGit(text string, msg int, src source, git func() bool) {
	known, isGit := false, false
	scanRefs(text, func(r ref) {
		if r.kind == refPath {
			if r.text = cleanPath(r.text); r.text == "" {
				return
			}
		}
		st := x.see(r, msg, src)
		if r.kind == refSHA {
			if !known {
				known, isGit = true, git()
			}
			st.git = st.git || isGit
		}
	})
}

// touch records what a call did to a path.
func (x *refIndex) touch(path string, op fileOp, msg int) {
	path = cleanPath(path)
	if path == "" {
		return
	}
	st := x.see(ref{kind: refPath, text: path}, msg, srcArgs)
	st.ops |= 1 << op
	if op > st.op {
		st.op = op
	}
}

// wrote records the telling line that an edit c of path wrote, unless
// the actions show the edit in full (shown): what the file holds now is
// what its last edit wrote, more than its path alone says. An edit whose
// lines are unknown (sed -i, a move) leaves the last known line.
func (x *refIndex) wrote(path string, c *call, shown bool) {
	path = cleanPath(path)
	if path == "" {
		return
	}
	if len(c.added()) == 0 {
		return
	}
	st := x.get(refPath, path)
	st.wrote = ""
	// An import or a comment tells little of what the file now does.
	if l := pickAdded(c.added(), c.removed(), 1)[0]; !shown && addedScore(l, c.removed()) >= 0 {
		st.wrote = clip(l, maxWroteChars)
	}
}

// quote records a line of path that the agent quoted back.
func (x *refIndex) quote(path, line string) {
	path = cleanPath(path)
	if path == "" {
		return
	}
	st := x.get(refPath, path)
	if len(st.quoted) < maxQuotedPerFile && !slices.Contains(st.quoted, line) {
		st.quoted = append(st.quoted, line)
	}
}

// maxQuotedPerFile bounds the quoted lines a file's entry shows.
const maxQuotedPerFile = 2

// maxWroteChars bounds the line a file's entry quotes from its last edit:
// a statement or a signature fits.
const maxWroteChars = 160

// read records what a read of path showed of its contents.
func (x *refIndex) read(path, content string) {
	path = cleanPath(path)
	if path == "" {
		return
	}
	st := x.get(refPath, path)
	if st.digested >= maxDigestBytes {
		return // enough of the file was read for its digest
	}
	st.digested += len(content)
	d := readDigest(path, content)
	for _, name := range d.defs {
		if isIdentifier(name) {
			x.get(refIdent, name).defined = true
		}
	}
	if d.about == "" && len(d.notes)+len(d.defs)+len(d.uses)+len(d.env) == 0 {
		return
	}
	if st.dig == nil {
		st.dig = d
		return
	}
	st.dig.merge(d)
}

// maxDigestBytes bounds how much of one file's reads its digest is made
// from, so that a file read again and again costs no more.
const maxDigestBytes = 64 << 10

// cleanPath normalises a path for de-duplication: no "./" prefix, no
// trailing slash, no surrounding quotes.
func cleanPath(p string) string {
	p = strings.Trim(strings.TrimSpace(p), `"'`)
	for strings.HasPrefix(p, "./") {
		p = p[2:]
	}
	// git diff headers: a/x.go and b/x.go are x.go
	if len(p) > 2 && (p[0] == 'a' || p[0] == 'b') && p[1] == '/' {
		p = p[2:]
	}
	if len(p) > 1 {
		p = strings.TrimRight(p, "/")
	}
	return p
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// paths returns the file references, with relative paths merged into the
// absolute path they end (apps/x.ts into /home/u/repo/apps/x.ts) and
// sorted by first sighting.
func (x *refIndex) paths() []*refStat {
	var abs, rel []*refStat
	for _, r := range x.byText {
		if r.kind != refPath {
			continue
		}
		if strings.HasPrefix(r.text, "/") || strings.HasPrefix(r.text, "~/") || len(r.text) > 2 && r.text[1] == ':' {
			abs = append(abs, r)
		} else {
			rel = append(rel, r)
		}
	}
	sortRefs(abs)
	sortRefs(rel)
	// Index the paths by every suffix that starts after a separator, so
	// that the paths a relative path ends are found by one lookup each
	// (a scan of the paths sharing its base name would be quadratic in
	// them: a monorepo has hundreds of index.ts).
	absEnds := suffixIndex(abs, `/\`)
	relEnds := suffixIndex(rel, "/")
	// A bare or short relative path that ends exactly one longer relative
	// path is the same file (get.ts and packages/services/src/get.ts).
	var longer []*refStat
	for _, r := range rel {
		if ends := relEnds[r.text]; ends.n == 1 && absEnds[baseName(r.text)].n == 0 {
			merge(ends.first, r)
			continue
		}
		longer = append(longer, r)
	}
	rel = longer
	out := append([]*refStat(nil), abs...)
	roots := map[string]int{}
	for _, r := range rel {
		into := absEnds[r.text].first
		if into == nil {
			out = append(out, r)
			continue
		}
		merge(into, r)
		if strings.Contains(r.text, "/") {
			roots[strings.TrimSuffix(into.text, "/"+r.text)]++
		}
	}
	for dir, n := range roots {
		if n > roots[x.root] || n == roots[x.root] && dir < x.root {
			x.root = dir
		}
	}
	sortRefs(out)
	return out
}

// pathEnds is what a suffix index holds for one suffix: the first path
// ending with it, and how many do.
type pathEnds struct {
	first *refStat
	n     int
}

// suffixIndex maps every suffix of the paths that starts right after one
// of the separators seps to the paths ending with it (the first in their
// order, and the count).
func suffixIndex(paths []*refStat, seps string) map[string]pathEnds {
	idx := make(map[string]pathEnds, 4*len(paths))
	for _, p := range paths {
		for k := len(p.text) - 2; k >= 0; k-- {
			if strings.IndexByte(seps, p.text[k]) < 0 {
				continue
			}
			suffix := p.text[k+1:]
			e := idx[suffix]
			if e.first == nil {
				e.first = p
			}
			e.n++
			idx[suffix] = e
		}
	}
	return idx
}

// merge folds r's sightings into into.
func merge(into, r *refStat) {
	for i := range r.msgs {
		into.msgs[i] += r.msgs[i]
		into.lastMsg[i] = max(into.lastMsg[i], r.lastMsg[i])
		if r.firstMsg[i] >= 0 && (into.firstMsg[i] < 0 || r.firstMsg[i] < into.firstMsg[i]) {
			into.firstMsg[i] = r.firstMsg[i]
		}
	}
	into.ops |= r.ops
	if r.op > into.op {
		into.op = r.op
	}
	for _, l := range r.lines {
		if len(into.lines) < 8 && !contains(into.lines, l) {
			into.lines = append(into.lines, l)
		}
	}
	into.span = into.span || r.span
	switch {
	case r.dig == nil:
	case into.dig == nil:
		into.dig = r.dig
	default:
		into.dig.merge(r.dig)
	}
	if r.first < into.first {
		into.first = r.first
	}
}

func baseName(p string) string {
	if k := strings.LastIndexAny(p, `/\`); k >= 0 {
		return p[k+1:]
	}
	return p
}

func sortRefs(rs []*refStat) {
	sort.Slice(rs, func(i, j int) bool { return rs[i].first < rs[j].first })
}

// nameRefs returns the non-path references sorted by first sighting.
func (x *refIndex) nameRefs() []*refStat {
	out := make([]*refStat, 0, len(x.names))
	for _, r := range x.names {
		out = append(out, r)
	}
	sortRefs(out)
	return out
}

// notable reports whether a name is worth keeping: the agent wrote it as
// code, or a person or the agent named it and it recurs, or calls passed it
// more than once, or tool output kept printing it. (A name only files
// showed is under Relevant files, with the file that declares it.)
func (r *refStat) notable() bool {
	said := r.msgs[srcUser] + r.msgs[srcAgent] + r.msgs[srcThinking] + r.msgs[srcError]
	return r.span || said > 0 && r.messages() >= 2 || r.msgs[srcArgs] >= 2 && r.messages() >= 3 || r.msgs[srcResult] >= 6
}

// hot returns up to n notable names, best score first: what the window
// keeps coming back to.
func (x *refIndex) hot(n int) []string {
	var cands []*refStat
	for _, r := range x.nameRefs() {
		if r.kind == refIdent && r.notable() && len(r.text) >= 4 {
			cands = append(cands, r)
		}
	}
	sort.SliceStable(cands, func(i, j int) bool { return cands[i].score() > cands[j].score() })
	var out []string
	for _, r := range cands {
		if len(out) == n {
			break
		}
		out = append(out, r.text)
	}
	return out
}
