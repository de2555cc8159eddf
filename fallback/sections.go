package fallback

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/format"
	"github.com/compactkit/compact/internal/keyword"
)

// sec names the list sections of a handoff that Build fills and bounds.
type sec int

const (
	secEarlierAsks sec = iota
	secConstraints
	secActions
	secActive
	secBlocked
	secDecisions
	secErrors
	secFiles
	secContext
	secLastTurns
	nSecs
)

// secHeading maps sections to their headings in compact.HandoffSections
// (earlier asks render under the task snapshot).
var secHeading = [nSecs]string{
	secEarlierAsks: "Task snapshot",
	secConstraints: "Constraints and preferences",
	secActions:     "Completed actions",
	secActive:      "Active state",
	secBlocked:     "Blocked",
	secDecisions:   "Decisions",
	secErrors:      "Errors and fixes",
	secFiles:       "Relevant files",
	secContext:     "Critical context",
	secLastTurns:   "Last dropped turns",
}

// rank orders the entries of a section for keeping: when a section must
// shrink, the lowest rank goes first. Ranks compare field by field: the
// class first (an item carried from an older handoff is below every item
// of the window; the plan and what stands for everything before are above
// every item), then the weight within the class, then a second weight,
// then the position (newer above older).
type rank struct {
	class   rankClass
	weight  int
	weight2 int
	at      int
}

// rankClass is the coarsest part of a rank.
type rankClass int

// Rank classes, lowest first.
const (
	classCarried rankClass = iota - 1 // from an earlier handoff: older than the window
	classWindow                       // what the window itself says
	classPinned                       // kept before anything else of its section
)

// cmp compares two ranks: -1, 0 or +1.
func (r rank) cmp(o rank) int {
	for _, d := range [...]int{int(r.class) - int(o.class), r.weight - o.weight, r.weight2 - o.weight2, r.at - o.at} {
		if d != 0 {
			return min(max(d, -1), 1)
		}
	}
	return 0
}

// position is where an entry renders within its section: by era (older
// handoffs' items before the window's, or after, as the section wants),
// then by place in the window, then within that place, then by tie.
type position struct{ era, at, sub, tie int }

// before reports whether p renders before o.
func (p position) before(o position) bool {
	for _, d := range [...]int{p.era - o.era, p.at - o.at, p.sub - o.sub, p.tie - o.tie} {
		if d != 0 {
			return d < 0
		}
	}
	return false
}

// windowRank is the rank of an ordinary item of the window.
func windowRank(weight, at int) rank { return rank{class: classWindow, weight: weight, at: at} }

// windowPos is the position of an item of the window.
func windowPos(at int) position { return position{at: at} }

// entry is one candidate item of a section.
type entry struct {
	text string
	// rank orders entries for keeping: when a section must shrink, the
	// lowest rank goes first.
	rank rank
	// order is where the entry renders within its section.
	order position
	// group, for sections that pack several entries into one item
	// (Critical context), names the item.
	group string
	cost  int
	id    int // position among the section's costed entries
	// weak marks an index entry only one tool output showed, that nobody
	// used: it gets only a bounded share of the room.
	weak bool
	// call is the call an action or an error entry reports.
	call *call
	// states, on an error entry, are the error lines that say what went
	// wrong: where a kept action of the same call already shows them all
	// in its outcome, the entry repeats it and is left out.
	states []string
	// name, on a file entry, is the file's short name (its last two path
	// segments): what the section's note lists when the entry is left out.
	name string
}

// draft is a handoff before bounding: the task snapshot and goal, and the
// candidate entries of every list section.
type draft struct {
	snapshot string
	goal     string
	secs     [nSecs][]entry
	// unlisted counts candidates of a section that rank too low to be kept
	// under any budget, and were not written out.
	unlisted [nSecs]int
}

// prune drops, in each section, the candidates beyond the best maxCosted
// by rank, which no budget lets through (maxCosted bounds what is
// costed), counting them as unlisted.
func (d *draft) prune() {
	for s := range d.secs {
		es := d.secs[s]
		if len(es) <= maxCosted {
			continue
		}
		sort.SliceStable(es, func(i, j int) bool {
			if c := es[i].rank.cmp(es[j].rank); c != 0 {
				return c > 0
			}
			return es[i].order.before(es[j].order)
		})
		d.unlisted[s] += len(es) - maxCosted
		d.secs[s] = es[:maxCosted]
	}
}

// Per-item character limits applied while composing entries, before the
// token caps: they keep one long command or output line from crowding out
// the rest of an item.
const (
	maxKeyChars     = 180
	maxOutcomeChars = 160
	maxAddedLines   = 5
	maxAddedChars   = 100
	maxSentence     = 320
	maxProseKey     = 100
	maxHitChars     = 120
	maxShortKey     = 90  // an older action's key
	maxShortOutcome = 120 // and its outcome
	// fullActions is how many of the newest actions are shown in full.
	fullActions = 8
)

// build extracts every section's candidates from the analysed window.
func (w *window) build(lastTurns int, extra *compact.Handoff) *draft {
	d := &draft{}
	idx := w.indexRefs()
	files := idx.paths()
	if w.root == "" {
		w.root = idx.root
	}
	w.buildAsks(d)
	w.buildActions(d)
	w.buildErrors(d)
	w.buildTodos(d)
	w.buildDecisions(d, idx.hot(24))
	w.markEchoed(files)
	buildFiles(d, files, w.shortRoot())
	w.buildContext(d, idx)
	w.buildLastTurns(d, lastTurns)
	// Earlier handoffs are older than the window: the newest is carried
	// first, each older one below it, and the caller's (the oldest) last.
	n := len(w.previous)
	for k := n - 1; k >= 0; k-- {
		d.carry(w.previous[k], n-1-k, w.resolvedBy)
	}
	if extra != nil {
		d.carry(*extra, n, w.resolvedBy)
	}
	for i, s := range w.foreign {
		d.secs[secActions] = append(d.secs[secActions], entry{
			text:  "Earlier summary: " + clip(oneLine(s), 1200),
			rank:  rank{class: classPinned}, // kept before any action: it stands for everything before
			order: position{at: -1, sub: i}, // before the window's actions
		})
	}
	return d
}

// unresolvedNote ends an error no later call of the window fixed.
const unresolvedNote = "; not resolved in this part"

// resolvedBy returns the label of the last call of the window that
// succeeded on what an item of an earlier handoff reports failing (the
// item names the call's label), or "" when none did.
func (w *window) resolvedBy(item string) string {
	for i := len(w.calls) - 1; i >= 0; i-- {
		c := w.calls[i]
		if c.msg < 0 || c.res == nil || c.failed() || maxErrorScore(c.errors()) >= 3 {
			continue
		}
		if l := w.label(c); l != "" && strings.Contains(item, l) {
			return l
		}
	}
	return ""
}

// buildAsks fills the task snapshot (the latest ask), earlier asks (newest
// first), the goal (the first ask, when there were several) and the
// constraints (rule statements and revisions, verbatim).
func (w *window) buildAsks(d *draft) {
	n := len(w.asks)
	if n == 0 {
		return
	}
	d.snapshot = w.asks[n-1].text
	first := 0
	if n > 1 && w.asks[0].text != d.snapshot {
		d.goal = w.asks[0].text // the goal, not an earlier ask as well
		first = 1
	}
	seen := map[string]bool{d.snapshot: true, d.goal: true}
	for i := n - 2; i >= first; i-- {
		a := w.asks[i]
		if seen[a.text] {
			continue
		}
		seen[a.text] = true
		d.secs[secEarlierAsks] = append(d.secs[secEarlierAsks], entry{text: a.text, rank: windowRank(0, a.msg), order: windowPos(-a.msg)})
	}
	seenRule := map[string]bool{d.snapshot: true, d.goal: true} // shown whole already
	for _, a := range w.asks {
		for _, s := range constraintSentences(a.text) {
			if seenRule[s] {
				continue
			}
			seenRule[s] = true
			d.secs[secConstraints] = append(d.secs[secConstraints], entry{text: s, rank: windowRank(0, a.msg), order: windowPos(a.msg)})
		}
	}
}

// buildActions lists the calls in order with their key argument and a
// one-line outcome, and the person's interruptions where they happened.
// Newer actions rank higher, so a cap keeps the newest. The newest
// fullActions are shown in full; older ones shortly, and older reads,
// searches and listings not at all (they changed nothing, and what they
// found is under Relevant files): they are counted.
func (w *window) buildActions(d *draft) {
	// Only the newest maxCosted actions could ever be kept: older ones are
	// counted, not written out.
	first := max(len(w.timeline)-maxCosted, 0)
	d.unlisted[secActions] += first
	full := len(w.timeline) - fullActions
	for i, ev := range w.timeline[first:] {
		i += first
		var text string
		switch ev.kind {
		case evInterrupt:
			text = ev.text
		case evNote:
			text = "harness: " + clip(ev.text, maxOutcomeChars)
		case evCall:
			switch {
			case i >= full:
				text = w.actionText(ev.call)
			case !ev.call.consequential():
				d.unlisted[secActions]++
				continue
			default:
				out := outcome(ev.call)
				if !ev.call.search() { // what a search found is its point
					out = clip(out, maxShortOutcome)
				}
				text = clip(w.label(ev.call), maxShortKey) + " → " + out
				if names, _ := testNames(ev.call.added()); len(names) >= minTestNames {
					text += "\n+ tests: " + clip(strings.Join(names, "; "), maxTestNamesChars)
				}
			}
		}
		d.secs[secActions] = append(d.secs[secActions], entry{text: text, rank: windowRank(0, i), order: windowPos(i), call: ev.call})
	}
	d.secs[secActions] = mergeRepeats(d.secs[secActions])
}

// mergeRepeats keeps one of the one-line actions that read word for word
// alike ("Edit app/main.go → ok", made ten times over a session), the
// newest, counted: what the older copies added was their place in time,
// which a count of them says well enough for the bytes.
func mergeRepeats(es []entry) []entry {
	count := map[string]int{}
	for _, e := range es {
		if !strings.Contains(e.text, "\n") {
			count[e.text]++
		}
	}
	left := maps.Clone(count) // copies not yet passed
	out := es[:0]
	for _, e := range es {
		if n := count[e.text]; n > 1 {
			if left[e.text]--; left[e.text] > 0 {
				continue // a newer copy follows
			}
			e.text += " (×" + strconv.Itoa(n) + ")"
		}
		out = append(out, e)
	}
	return out
}

// consequential reports a call that did something a later turn depends
// on: it changed files, ran a program, searched, failed, or asked or
// planned; rather than only reading or listing (what reads showed is
// under Relevant files).
func (c *call) consequential() bool {
	switch {
	case c.res == nil, c.mutates, c.failed(), c.search(), diagnostics(c.errors()):
		return true
	case c.exec:
		return !c.listing()
	}
	// A tool that reads files or fetches a page only looks.
	for _, f := range c.files {
		if f.op == opRead {
			return false
		}
	}
	return !c.listing() && !strings.Contains(c.key, "://")
}

// label is "name key" with the key shortened to its first line, and a
// path key shown relative to the project root.
func (w *window) label(c *call) string {
	name := c.name
	if c.msg < 0 {
		name = "(call made before this part)"
	}
	key := c.key
	if c.exec {
		key = stripCD(key)
	} else if r := w.shortRoot(); r != "" {
		key = strings.ReplaceAll(key, r+"/", "")
	}
	limit := maxKeyChars
	if c.prose {
		limit = maxProseKey
	}
	key = firstLine(key, limit)
	if key == "" {
		return name
	}
	return name + " " + key
}

// firstLine returns s's first non-blank line clipped to n bytes, noting how
// many lines were left out.
func firstLine(s string, n int) string {
	s = strings.TrimSpace(s)
	line, rest, more := strings.Cut(s, "\n")
	out := clip(strings.TrimSpace(line), n)
	if more {
		if k := countLines(rest); k > 0 {
			out += " …(+" + strconv.Itoa(k) + " lines)"
		}
	}
	return out
}

// actionText renders one call: "name key → outcome", then the lines an
// edit added.
func (w *window) actionText(c *call) string {
	var b strings.Builder
	b.WriteString(w.label(c))
	b.WriteString(" → ")
	b.WriteString(outcome(c))
	// Tests an edit adds are listed by name, on one line: their names say
	// what the code must do.
	names, rest := testNames(c.added())
	if len(names) >= minTestNames {
		b.WriteString("\n+ tests: ")
		b.WriteString(clip(strings.Join(names, "; "), maxTestNamesChars))
	} else {
		rest = c.added()
	}
	shown := pickAdded(rest, c.removed(), maxAddedLines)
	for _, l := range shown {
		b.WriteString("\n+ ")
		b.WriteString(clip(l, maxAddedChars))
	}
	if more := len(rest) - len(shown); more > 0 {
		fmt.Fprintf(&b, "\n(+%d more added lines)", more)
	}
	return b.String()
}

// Test names an edit adds are listed together from this many on, up to
// this many bytes.
const (
	minTestNames      = 3
	maxTestNamesChars = 400
)

// testNames splits added lines into the names of the tests they declare
// (it("…"), test("…"), describe blocks aside; def test_x; func TestX) and
// the other lines.
func testNames(added []string) (names, rest []string) {
	for _, l := range added {
		if n := testName(l); n != "" {
			names = append(names, n)
		} else {
			rest = append(rest, l)
		}
	}
	return names, rest
}

// testName returns the name of the test a line declares, or "".
func testName(l string) string {
	for _, p := range []string{"it(", "test(", "it.only(", "test.only(", "it.each", "specify("} {
		if rest, ok := strings.CutPrefix(l, p); ok {
			rest = strings.TrimSpace(rest)
			if rest == "" || !strings.ContainsRune("\"'`", rune(rest[0])) {
				return ""
			}
			q := rest[0]
			if end := strings.IndexByte(rest[1:], q); end >= 0 {
				return rest[1 : 1+end]
			}
			return ""
		}
	}
	for _, p := range []string{"def test", "async def test", "func Test", "fn test_"} {
		if strings.HasPrefix(l, p) {
			return declName(l[strings.LastIndexByte(p, ' ')+1:])
		}
	}
	return ""
}

// outcome sums up a call's result in one line: the exit status where the
// tool gives one, then the error line if it failed or printed one, or else
// the first meaningful line and the output's length.
func outcome(c *call) string {
	r := c.res
	if r == nil {
		return "no result in this part"
	}
	var parts []string
	if r.hasExit {
		parts = append(parts, "exit "+strconv.Itoa(r.exit))
	} else if r.isError {
		parts = append(parts, "failed")
	}
	errs := c.errors()
	if !c.failed() && !diagnostics(errs) {
		errs = nil // notices of a call that worked are not its outcome
	}
	lines := countLines(r.text)
	switch {
	case len(errs) > 0:
		parts = append(parts, clip(bestError(errs), maxOutcomeChars))
	case r.text == "" || lines == 0:
		if c.listing() && r.hasExit && r.exit == 1 {
			parts = append(parts, "no matches")
		} else {
			parts = append(parts, "no output")
		}
	case c.mutates && !c.exec && !c.failed(), r.ack && !c.failed():
		parts = append(parts, "ok")
	case c.search() && !c.failed():
		// What a search found is its outcome: the count and the hit that
		// tells most (a definition), else the first.
		hit, hits, files := bestHit(r.text)
		hit = clip(hit, maxHitChars)
		switch {
		case hits == 0:
			parts = append(parts, strconv.Itoa(lines)+" lines")
		case hits == 1:
			parts = append(parts, "1 hit: "+hit)
		case files > 1:
			parts = append(parts, strconv.Itoa(hits)+" hits in "+strconv.Itoa(files)+" files: "+hit)
		default:
			parts = append(parts, strconv.Itoa(hits)+" hits: "+hit)
		}
	case (c.listing() || numberedListing(r.text)) && !c.failed():
		parts = append(parts, strconv.Itoa(lines)+" lines")
	default:
		l := clip(firstMeaningfulLine(r.text), maxOutcomeChars)
		if l == "" {
			l = strconv.Itoa(lines) + " lines"
		} else if lines > 1 {
			l += " (" + strconv.Itoa(lines) + " lines)"
		}
		parts = append(parts, l)
	}
	return strings.Join(parts, ": ")
}

// bestHit picks the hit of a search's output that tells most: the first
// that declares something (a definition is what a search for a name is
// usually after), else the first meaningful line, with the space around
// its text trimmed. files counts the files the hits are in, when the
// hits name them.
func bestHit(out string) (hit string, hits, files int) {
	seen := map[string]bool{}
	first, decl := "", ""
	n := 0
	for rest := out; rest != ""; n++ {
		var l string
		l, rest, _ = strings.Cut(rest, "\n")
		t := strings.TrimSpace(l)
		if t == "" || t == "--" || strings.HasSuffix(t, ":") && strings.Contains(t, " ") {
			continue // group separators and headers ("Found 3 matches for …:")
		}
		hits++
		if n >= maxHitLines {
			continue // counted, not read
		}
		path, text := splitHit(t)
		if path != "" && !seen[path] {
			seen[path] = true
		}
		shown := t
		if path != "" {
			shown = path + ": " + strings.TrimSpace(text)
		}
		if first == "" && letters(t) >= 3 {
			first = shown
		}
		if decl == "" && path != "" && declares(strings.TrimSpace(text)) {
			decl = shown
		}
	}
	if decl != "" {
		return decl, hits, len(seen)
	}
	return first, hits, len(seen)
}

// maxHitLines bounds the lines of a search's output read for its best hit.
const maxHitLines = 400

// splitHit splits a search hit "path:line:text" or "path:text" into its
// file and text; a hit that names no file has path "".
func splitHit(t string) (path, text string) {
	k := strings.IndexByte(t, ':')
	if k <= 0 || k == len(t)-1 {
		return "", t
	}
	p := t[:k]
	if !isPath(p) {
		return "", t
	}
	text = t[k+1:]
	j := 0
	for j < len(text) && text[j] >= '0' && text[j] <= '9' {
		j++
	}
	if j > 0 && j < len(text) && (text[j] == ':' || text[j] == '-') {
		text = text[j+1:]
	}
	return p, text
}

// declares reports a line of code that declares a name: a function, a
// type, a class, an exported value.
func declares(t string) bool {
	var d digest
	d.codeLine(t, t, langC)
	return len(d.defs) > 0
}

// failed reports whether the call failed. A search that matched nothing
// (grep's exit 1 with no output) did not.
func (c *call) failed() bool {
	r := c.res
	if !r.failed() {
		return false
	}
	return !(r.hasExit && r.exit == 1 && strings.TrimSpace(r.text) == "" && c.listing())
}

// htmlPage recognises a fetched web page.
func htmlPage(s string) bool {
	t := strings.TrimLeft(s, " \t\r\n")
	return hasPrefixFold(t, "<!doctype html") || hasPrefixFold(t, "<html")
}

// numberedListing recognises file contents shown with line numbers
// ("   1\t…", an agent's mark after the number: format.LineNumberMark, or
// a tool's banner above them: format.ListingBanner).
func numberedListing(s string) bool {
	line := strings.TrimLeft(s, "\n")
	line, _, _ = strings.Cut(line, "\n")
	if format.ListingBanner(line) {
		return true
	}
	t := strings.TrimLeft(line, " ")
	i := 0
	for i < len(t) && t[i] >= '0' && t[i] <= '9' {
		i++
	}
	return i > 0 && (format.LineNumberMark(t[i:]) > 0 || strings.HasPrefix(t[i:], "\t"))
}

// search reports whether the call searched (grep, rg, find, a Grep or
// Glob tool): its output lists hits.
func (c *call) search() bool {
	if c.kind == compact.ToolSearch {
		return true
	}
	if c.kind != "" && c.kind != compact.ToolShell {
		return false
	}
	if !c.exec {
		l := strings.ToLower(c.name)
		return strings.Contains(l, "grep") || strings.Contains(l, "glob") || strings.Contains(l, "search") || strings.Contains(l, "find")
	}
	words := c.commandWords()
	if len(words) == 0 {
		return false
	}
	switch baseName(words[0]) {
	case "grep", "rg", "ag", "find", "fd", "ack", "search_dir", "search_file", "find_file":
		return true
	case "git":
		return len(words) > 1 && words[1] == "grep"
	}
	return false
}

// listing reports whether the call's output is file contents or a search
// listing, which name errors without being errors.
func (c *call) listing() bool {
	switch c.kind {
	case compact.ToolRead, compact.ToolSearch, compact.ToolList:
		return true
	case "", compact.ToolShell:
		// A command's output is data or news by what the command runs
		// (cat, git diff, ls), whatever the agent: read below.
	default:
		return false
	}
	if !c.exec {
		for _, f := range c.files {
			if f.op == opRead {
				return true
			}
		}
		l := strings.ToLower(c.name)
		return strings.Contains(l, "grep") || strings.Contains(l, "glob") || strings.Contains(l, "search") ||
			strings.Contains(l, "find") || strings.Contains(l, "list") || c.key != "" && strings.HasPrefix(c.key, "view ")
	}
	words := c.commandWords()
	if len(words) == 0 {
		return false
	}
	if ac, ok := format.ShellCommandOf(baseName(words[0])); ok && ac.Shows {
		return true // an agent's own viewer or search command
	}
	switch baseName(words[0]) {
	case "cat", "head", "tail", "less", "more", "nl", "grep", "rg", "ag", "find", "ls", "tree", "fd", "wc", "diff":
		return true
	case "sed":
		return !contains(words, "-i")
	case "git":
		return len(words) > 1 && (words[1] == "show" || words[1] == "diff" || words[1] == "log" || words[1] == "grep" || words[1] == "blame")
	}
	return false
}

// commandWords returns the words of a command call's first simple
// command, without a leading cd or variable assignments, worked out once.
func (c *call) commandWords() []string {
	if c.words == nil {
		words := shellWords(firstSegment(stripCD(c.key)))
		for len(words) > 0 && strings.Contains(words[0], "=") {
			words = words[1:]
		}
		if words == nil {
			words = []string{} // worked out: none
		}
		c.words = words
	}
	return c.words
}

func firstSegment(cmd string) string {
	if segs := splitSegments(firstLine(cmd, 1<<20)); len(segs) > 0 {
		return segs[0]
	}
	return cmd
}

// errors returns the lines of the call's result that report a failure,
// worked out once.
func (c *call) errors() []errLine {
	if c.errs == nil {
		if c.errs = c.findErrors(); c.errs == nil {
			c.errs = []errLine{} // worked out: none
		}
	}
	return c.errs
}

func (c *call) findErrors() []errLine {
	if c.res == nil || c.res.text == "" {
		return nil
	}
	// File contents, search hits and web pages name errors without being
	// errors: one that did not fail reports none.
	if (c.listing() || numberedListing(c.res.text) || htmlPage(c.res.text)) && !c.failed() {
		return nil
	}
	// A file edit that worked and answers with a diff of the change shows
	// the file's code around it (added lines, context), not a failure.
	if c.mutates && !c.exec && !c.failed() && unifiedDiff(c.res.text) {
		return nil
	}
	// A call that succeeded is read at its start and end only: an error
	// line in the middle of a long, successful output is rarely the point.
	errs := errorLines(c.res.text, !c.failed(), c.failed())
	if c.mutates && !c.failed() && len(c.added()) > 0 {
		// An edit that worked and echoes what it wrote (a diff, the
		// edited lines numbered) reports the lines it added, not a
		// failure, though they raise or log one.
		kept := errs[:0]
		for _, e := range errs {
			if !echoesAdded(e.text, c.added()) {
				kept = append(kept, e)
			}
		}
		errs = kept
	}
	return errs
}

// unifiedDiff reports whether s, in its first lines, holds a unified
// diff's hunk header ("@@ -40,1 +40,3 @@").
func unifiedDiff(s string) bool {
	for n := 0; s != "" && n < diffHeadLines; n++ {
		var line string
		line, s, _ = strings.Cut(s, "\n")
		if strings.HasPrefix(line, "@@ -") && strings.Contains(line[4:], " @@") {
			return true
		}
	}
	return false
}

// diffHeadLines is how many lines of an edit's answer are searched for a
// hunk header: a name, a file header or two come before the first one.
const diffHeadLines = 8

// echoesAdded reports whether every line joined in an error line (" | ")
// is one of an edit's added lines with nothing beside it but a diff
// marker, a line number or spacing: "+    raise ValueError(x)",
// "41\t    raise ValueError(x)".
func echoesAdded(line string, added []string) bool {
	for _, part := range strings.Split(line, " | ") {
		echo := false
		for _, a := range added {
			if a == "" {
				continue
			}
			if k := strings.Index(part, a); k >= 0 && !hasLetter(part[:k]) && !hasLetter(part[k+len(a):]) {
				echo = true
				break
			}
		}
		if !echo {
			return false
		}
	}
	return true
}

// buildErrors lists each failure with the call that produced it, and
// whether a later call on the same target succeeded. The same error line
// seen again is listed once, at its last sighting, with a count.
// Unresolved errors rank above resolved ones; within each, newer first.
func (w *window) buildErrors(d *draft) {
	type errItem struct {
		c     *call
		lines []errLine
		pos   int
		times int
	}
	var items []*errItem
	byLine := map[string]*errItem{}
	for i, c := range w.calls {
		errs := c.errors()
		if len(errs) == 0 && c.failed() {
			if l := firstMeaningfulLine(c.res.text); l != "" {
				errs = []errLine{{l, 3}}
			} else {
				errs = []errLine{{"failed with no output", 3}}
			}
		}
		if len(errs) == 0 {
			continue
		}
		if !c.failed() && !diagnostics(errs) {
			continue // notices of a call that worked
		}
		key := errorKey(errs)
		if it := byLine[key]; it != nil {
			it.c, it.pos, it.times = c, i, it.times+1
			continue
		}
		it := &errItem{c: c, lines: errs, pos: i, times: 1}
		byLine[key] = it
		items = append(items, it)
	}
	// A harness's complaint about an action it could not run ranks with
	// the errors that later calls got past: a failure, of its time.
	for _, ev := range w.timeline {
		if ev.kind == evNote {
			d.secs[secErrors] = append(d.secs[secErrors], entry{
				text: "harness: " + clip(ev.text, maxOutcomeChars), rank: windowRank(1, ev.msg), order: windowPos(ev.msg),
			})
		}
	}
	for _, it := range items {
		var b strings.Builder
		b.WriteString(w.label(it.c))
		b.WriteString(" → ")
		for i, l := range it.lines {
			if i > 0 {
				b.WriteString(" | ")
			}
			b.WriteString(clip(l.text, maxOutcomeChars))
		}
		if it.times > 1 {
			fmt.Fprintf(&b, " (×%d)", it.times)
		}
		at := it.c.msg
		if it.c.res != nil {
			at = it.c.res.msg
		}
		// Unresolved errors first, then resolved ones, then warnings;
		// among equals the newer.
		weight := 1
		if maxErrorScore(it.lines) < 3 && !it.c.failed() {
			weight = 0 // warnings only: the first to go
		}
		switch fix, again := w.laterOutcome(it.c, it.pos); {
		case fix != nil:
			b.WriteString("; later succeeded: " + clip(w.label(fix), 120))
		case again != nil && errorKey(again.errors()) != errorKey(it.lines):
			// The same call failed again, otherwise: that error is the
			// current one, this one is history.
			b.WriteString("; a later run failed otherwise")
		default:
			b.WriteString(unresolvedNote)
			weight++
		}
		// A count of repeats is news no single action line tells.
		var stated []string
		if it.times == 1 {
			stated = worstLines(it.lines)
		}
		d.secs[secErrors] = append(d.secs[secErrors], entry{
			text: b.String(), rank: windowRank(weight, at), order: windowPos(at),
			call: it.c, states: stated,
		})
	}
}

// diagnostics reports whether lines a call printed say something is wrong:
// an error, or a warning about a place in the code ("211:11  Warning: …",
// "x.go:3: warning: …"). A warning with no place ("WARNING: Running pip as
// the 'root' user") is a tool's notice.
func diagnostics(lines []errLine) bool {
	for _, l := range lines {
		if l.score >= 3 || lineColumn(l.text) || locationLine(l.text) {
			return true
		}
	}
	return false
}

// lineColumn reports a line that opens with "line:column" as linters
// print under a file name.
func lineColumn(t string) bool {
	i := 0
	for i < len(t) && t[i] >= '0' && t[i] <= '9' {
		i++
	}
	if i == 0 || i >= len(t) || t[i] != ':' {
		return false
	}
	j := i + 1
	for j < len(t) && t[j] >= '0' && t[j] <= '9' {
		j++
	}
	return j > i+1
}

// bestError returns the line that says most clearly what went wrong (the
// first of equals): "KeyError: 'x'" rather than the traceback header.
func bestError(lines []errLine) string {
	best := errLine{score: -1}
	for _, l := range lines {
		if l.score > best.score {
			best = l
		}
	}
	return best.text
}

// worstLines returns the lines that score highest, clipped as an
// outcome clips them.
func worstLines(lines []errLine) []string {
	m := maxErrorScore(lines)
	var out []string
	for _, l := range lines {
		if l.score == m {
			out = append(out, clip(l.text, maxOutcomeChars))
		}
	}
	return out
}

func maxErrorScore(lines []errLine) int {
	m := 0
	for _, l := range lines {
		m = max(m, l.score)
	}
	return m
}

// laterOutcome finds the first call after position pos on the same target
// that succeeded without printing an error, and the last one that failed.
func (w *window) laterOutcome(c *call, pos int) (fix, again *call) {
	if c.target == "" {
		return nil, nil
	}
	for _, d := range w.calls[pos+1:] {
		if d.target != c.target || d.res == nil {
			continue
		}
		if d.failed() || maxErrorScore(d.errors()) >= 3 {
			again = d
			continue
		}
		return d, again
	}
	return nil, again
}

// errorKey identifies a call's error lines, to tell one failure from
// another.
func errorKey(errs []errLine) string {
	switch len(errs) {
	case 0:
		return ""
	case 1:
		return errs[0].text
	}
	return errs[0].text + "\n" + errs[1].text
}

// buildTodos puts the agent's last todo list or plan under Active state,
// and its blocked items (and a failure that ends the window) under
// Blocked.
func (w *window) buildTodos(d *draft) {
	for i, t := range w.todos {
		s := strings.ToLower(strings.ReplaceAll(t.status, " ", "_"))
		weight := 0
		switch s {
		case "in_progress", "active", "doing", "started":
			weight = 3
		case "pending", "todo", "not_started", "open":
			weight = 2
		case "completed", "done", "complete", "finished":
			weight = 1
		}
		e := entry{text: "[" + t.status + "] " + t.text, rank: windowRank(weight, -i), order: windowPos(i)}
		if s == "blocked" || s == "failed" || s == "stuck" || s == "waiting" {
			d.secs[secBlocked] = append(d.secs[secBlocked], e)
			continue
		}
		d.secs[secActive] = append(d.secs[secActive], e)
	}
	// The window ends on a failure nothing fixed: the next turn starts there.
	if n := len(w.calls); n > 0 {
		c := w.calls[n-1]
		if c.res != nil && c.failed() {
			errs := c.errors()
			line := "failed"
			if len(errs) > 0 {
				line = bestError(errs)
			}
			d.secs[secBlocked] = append(d.secs[secBlocked], entry{
				text: "last call failed: " + w.label(c) + " → " + clip(line, maxOutcomeChars), rank: rank{class: classPinned}, order: position{era: 1},
			})
		}
	}
}

// buildDecisions keeps plans the agent proposed and the sentences of its
// messages (and, ranked lower, its reasoning) that state a finding or a
// choice. Each message contributes at most its two best sentences.
func (w *window) buildDecisions(d *draft, hot []string) {
	for _, p := range w.plans {
		d.secs[secDecisions] = append(d.secs[secDecisions], entry{
			text: "Plan: " + clip(compactLines(p.text), 900), rank: rank{class: classPinned, at: p.msg}, order: windowPos(p.msg),
		})
	}
	seen := map[string]bool{}
	hotNames := hotMatcher(hot)
	answered := true // whether the last ask has had its answer
	asked := map[int]bool{}
	for _, a := range w.asks {
		asked[a.msg] = true
	}
	for i := range w.msgs.len() {
		m := w.msgs.at(i)
		if asked[i] {
			answered = false
		}
		if m.Role != compact.RoleAssistant {
			continue
		}
		// The agent's first words after an ask answer it: what it agrees to,
		// refuses or finds there weighs more.
		answer := 0
		if !answered && strings.TrimSpace(textOf(m)) != "" {
			answer, answered = 2, true
		}
		// Its first statement after a tool's output reads that output:
		// what the agent concluded from it, before it plans the next call.
		reacting := i > 0 && w.msgs.at(i-1).IsToolResult()
		type cand struct {
			s     string
			score int
			pos   int
		}
		var cands []cand
		pos := 0
		// Reasoning ranks below what the agent said, unless the agent said
		// nothing else (reasoning models that act by tool calls alone).
		spoke := false
		for _, p := range m.Parts {
			spoke = spoke || p.Type == compact.PartText && strings.TrimSpace(p.Text) != ""
		}
		for _, p := range m.Parts {
			if p.Type != compact.PartText && p.Type != compact.PartThinking {
				continue
			}
			penalty := 0
			if p.Type == compact.PartThinking && spoke {
				penalty = 1
			}
			// A very long message is read at its start and end, where agents
			// state what they found and what they will do.
			text := p.Text
			if head, tail := textEnds(text); tail != "" {
				text = head + "\n" + tail
			}
			cur := &cueCursor{hits: findCues(text, hotNames)}
			sentences(text, func(off int, s string) {
				pos++
				if len(s) < 20 || len(s) > 800 {
					return
				}
				cues, names := cur.within(off, len(s))
				sc := scoreSentence(s, cues) - penalty + names
				if p.Type == compact.PartText && sc > 0 {
					sc += answer
					if reacting && opening(s) != openIntent {
						sc += reactionBonus
					}
				}
				if p.Type == compact.PartText {
					reacting = false
				}
				if sc >= 3 && !seen[s] {
					cands = append(cands, cand{s, sc, pos})
				}
			})
		}
		sort.SliceStable(cands, func(a, b int) bool { return cands[a].score > cands[b].score })
		if len(cands) > 2 {
			cands = cands[:2]
		}
		sort.Slice(cands, func(a, b int) bool { return cands[a].pos < cands[b].pos })
		for _, c := range cands {
			seen[c.s] = true
			d.secs[secDecisions] = append(d.secs[secDecisions], entry{
				text: clip(c.s, maxSentence), rank: windowRank(c.score, i), order: position{at: i, sub: c.pos},
			})
		}
	}
	demoteRepeats(d.secs[secDecisions])
}

// reactionBonus is what the agent's first statement after a tool's
// output gains: its reading of what the output showed.
const reactionBonus = 1

// demoteRepeats ranks an entry that says much the same as a better-ranked
// one (most of its content words, three in four, are in the other) below
// every entry that says something new, so a long session's many
// restatements of one finding do not crowd out its other findings. A
// sentence that adds to what was said ("not placed" → "not placed and
// duplicated") is new.
func demoteRepeats(es []entry) {
	idx := make([]int, len(es))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return es[idx[a]].rank.cmp(es[idx[b]].rank) > 0 })
	var kept [][]string
	for _, i := range idx {
		words := contentWords(es[i].text)
		repeat := false
		for _, k := range kept {
			if covered(words, k) >= 0.75 {
				repeat = true
				break
			}
		}
		if repeat {
			es[i].rank.weight = -1 // below every new sentence
			continue
		}
		if len(kept) < 200 {
			kept = append(kept, words)
		}
	}
}

// contentWords returns the distinct lower-cased words of s of three or more
// letters that are not among the commonest English words, sorted.
func contentWords(s string) []string {
	var out []string
	for _, f := range strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '_')
	}) {
		if len(f) >= 3 && !stopWords()[f] {
			out = append(out, f)
		}
	}
	sort.Strings(out)
	return slices.Compact(out)
}

var stopWords = sync.OnceValue(func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`the and for that this with are was were but not you your have has had its it's
		can will would should could from into when then than there their they them what which who how all any
		also only just now let our out use used using one two get got does did doesn don isn wasn aren need needs
		into onto over under more most some such very here after before about because being been these those`) {
		m[w] = true
	}
	return m
})

// covered is the share of the words of a (sorted) that b (sorted) holds.
func covered(a, b []string) float64 {
	if len(a) == 0 {
		return 1
	}
	i, j, both := 0, 0, 0
	for i < len(a) && j < len(b) {
		switch {
		case a[i] == b[j]:
			both++
			i++
			j++
		case a[i] < b[j]:
			i++
		default:
			j++
		}
	}
	return float64(both) / float64(len(a))
}

// indexEnds returns the parts of a tool's output read for the index of
// names: its first 16 KB and last 4 KB. Names a later turn reaches for sit
// mostly near the start of what a tool printed (most of a file read, the
// first matches of a search); further in, a long output is less telling
// and costs the most to read.
func indexEnds(s string) (string, string) {
	return ends(s, 16<<10, 4<<10)
}

// textEnds returns a long text's first 8 KB and last 4 KB, cut at line
// breaks (all of a shorter text, and ""): where agents state what they
// found, and where tools print what they listed or what went wrong.
func textEnds(s string) (string, string) {
	return ends(s, 8<<10, 4<<10)
}

// ends returns the first headMax and last tailMax bytes of s cut at line
// breaks, or s and "" when s is no longer than both together.
func ends(s string, headMax, tailMax int) (string, string) {
	if len(s) <= headMax+tailMax {
		return s, ""
	}
	head := s[:headMax]
	if k := strings.LastIndexByte(head, '\n'); k > 0 {
		head = head[:k]
	}
	tail := s[len(s)-tailMax:]
	if k := strings.IndexByte(tail, '\n'); k >= 0 {
		tail = tail[k+1:]
	}
	return head, tail
}

// compactLines joins a multi-line text's non-blank lines with " / ".
func compactLines(s string) string {
	var parts []string
	for _, l := range strings.Split(s, "\n") {
		if t := strings.TrimSpace(l); t != "" {
			parts = append(parts, t)
		}
	}
	return strings.Join(parts, " / ")
}

// oneLine collapses runs of whitespace, newlines included, to one space.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// indexRefs scans the window for paths and names, recording who wrote
// each and what calls did to files.
func (w *window) indexRefs() *refIndex {
	x := newRefIndex()
	for i := range w.msgs.len() {
		m := w.msgs.at(i)
		if m.Summary {
			continue
		}
		for _, p := range m.Parts {
			switch {
			case p.Type == compact.PartText && m.Role == compact.RoleAssistant:
				x.scanGit(p.Text, i, srcAgent, func() bool { return gitContext(p.Text) })
				codeSpans(p.Text, func(s string) { x.span(s, i) })
			case p.Type == compact.PartThinking:
				x.scanGit(p.Text, i, srcThinking, func() bool { return gitContext(p.Text) })
			}
		}
	}
	for _, a := range w.asks {
		x.scanGit(a.text, a.msg, srcUser, func() bool { return gitContext(a.text) })
	}
	for _, ide := range w.ideContext {
		x.scan(ide, -2, srcUser, false) // the person's active file and open tabs
	}
	full := w.shownInFull()
	quotes := w.quotedCode()
	for _, c := range w.calls {
		if c.msg >= 0 {
			git := strings.HasPrefix(stripCD(c.key), "git ")
			for _, f := range c.files {
				if c.failed() {
					break // a read or an edit that failed did nothing (its error names the file)
				}
				x.touch(c.resolve(f.path), f.op, c.msg)
				if f.op == opEdit || f.op == opCreate {
					x.wrote(c.resolve(f.path), c, full[c])
				}
			}
			if f, ok := c.readFile(); ok {
				head := digestHead(c.res.text)
				x.read(c.resolve(f), head)
				quotes.Find(head, func(_, id int) { x.quote(c.resolve(f), quotes.Phrase(id).Text) })
			}
			x.scan(c.key, c.msg, srcArgs, git)
			for _, l := range c.added() {
				x.scan(l, c.msg, srcEdit, false)
			}
			if c.res != nil {
				head, tail := indexEnds(c.res.text)
				x.scan(head, c.res.msg, srcResult, git)
				x.scan(tail, c.res.msg, srcResult, git)
				for _, l := range c.errors() {
					x.scan(l.text, c.res.msg, srcError, false) // a file an error names matters
				}
			}
		} else if c.res != nil {
			head, tail := indexEnds(c.res.text)
			x.scan(head, c.res.msg, srcResult, false)
			x.scan(tail, c.res.msg, srcResult, false)
		}
	}
	return x
}

// quotedCode returns a matcher of the lines of code the agent quoted in
// fenced blocks of its own messages: a line it quoted back from a file it
// read is one it singled out as evidence, worth more than the file's path.
func (w *window) quotedCode() *keyword.Matcher {
	seen := map[string]bool{}
	var lines []string
	for i := range w.msgs.len() {
		m := w.msgs.at(i)
		if m.Role != compact.RoleAssistant || m.Summary {
			continue
		}
		for _, p := range m.Parts {
			if p.Type == compact.PartText && len(lines) < maxQuoteLines {
				fencedLines(p.Text, func(l string) {
					// Line numbers copied with the code are not the file's;
					// an import or a comment says little of what it does.
					l = strings.TrimSpace(stripLineNumber(l))
					if addedScore(l, nil) < 0 {
						return
					}
					if len(l) >= minQuoteChars && len(l) <= maxQuoteChars && !seen[l] && len(lines) < maxQuoteLines {
						seen[l] = true
						lines = append(lines, l)
					}
				})
			}
		}
	}
	if len(lines) == 0 {
		return nil
	}
	return keyword.New(keyword.Words(lines), false)
}

// Bounds of the quoted lines looked for: long enough to be a statement
// of its own, short enough to be one, and not so many that the search
// costs more than the reads.
const (
	minQuoteChars = 16
	maxQuoteChars = 160
	maxQuoteLines = 400
)

// fencedLines calls fn with each non-blank line, trimmed, of the fenced
// code blocks of a message's text.
func fencedLines(s string, fn func(string)) {
	in := false
	for line := range strings.Lines(s) {
		t := strings.TrimSpace(line)
		if strings.HasPrefix(t, "```") || strings.HasPrefix(t, "~~~") {
			in = !in
			continue
		}
		if in && t != "" {
			fn(t)
		}
	}
}

// shownInFull returns the calls Completed actions shows in full, with
// the lines they added.
func (w *window) shownInFull() map[*call]bool {
	full := map[*call]bool{}
	for _, ev := range w.timeline[max(len(w.timeline)-fullActions, 0):] {
		if ev.kind == evCall {
			full[ev.call] = true
		}
	}
	return full
}

// readFile returns the one file whose contents the call's output shows: a
// read that worked, of a single file.
func (c *call) readFile() (string, bool) {
	if c.res == nil || c.failed() || c.res.text == "" {
		return "", false
	}
	path := ""
	for _, f := range c.files {
		if f.op != opRead {
			continue
		}
		if path != "" && f.path != path {
			return "", false // several files: their contents run together
		}
		path = f.path
	}
	return path, path != ""
}

// digestHead is the start of a read's output that a digest is made from.
func digestHead(s string) string {
	const n = 8 << 10
	if len(s) <= n {
		return s
	}
	s = s[:n]
	if k := strings.LastIndexByte(s, '\n'); k > 0 {
		s = s[:k]
	}
	return s
}

// span records an inline code span of the agent's as a name worth
// keeping, when it is more than a plain word.
func (x *refIndex) span(s string, msg int) {
	if strings.ContainsAny(s, " ") && !strings.ContainsAny(s, "/(:=") {
		return
	}
	if k := strings.IndexByte(s, '('); k > 0 && (strings.HasSuffix(s, "()") || !strings.Contains(s, " ")) && isIdentifier(s[:k]) {
		s = s[:k] // getInitials() is getInitials
	}
	plain := true
	for i := 0; i < len(s); i++ {
		if !isLetter(s[i]) {
			plain = false
			break
		}
	}
	if plain && !isIdentifier(s) {
		return
	}
	kind := refIdent
	if _, _, ok := pathRef(s); ok {
		kind = refPath
		s = cleanPath(s)
		if p, line, ok := pathRef(s); ok && line != "" {
			st := x.see(ref{kind: refPath, text: p, line: line}, msg, srcAgent)
			st.span = true
			return
		}
	}
	st := x.see(ref{kind: kind, text: s}, msg, srcAgent)
	st.span = true
}

// gitContext reports text that talks about git: hex ids in it are likely
// commits.
func gitContext(s string) bool {
	return gitMatcher().Contains(s)
}

var gitMatcher = sync.OnceValue(func() *keyword.Matcher { return keyword.New(keyword.Words([]string{"commit", "git ", "sha"}), true) })

// buildFiles lists the paths calls touched and the paths people and the
// agent named, each once (relative paths folded into the absolute path
// they end), with what happened to it. Files that were changed rank
// first, then read, then mentioned; among equals, the more often named.
func buildFiles(d *draft, all []*refStat, root string) {
	var digests []*digest
	for _, r := range all {
		if r.dig != nil {
			digests = append(digests, r.dig)
		}
	}
	common := commonImports(digests)
	for _, r := range all {
		touched := r.ops != 0
		said := r.msgs[srcUser] + r.msgs[srcAgent] + r.msgs[srcThinking] + r.msgs[srcError]
		switch {
		case touched, r.span:
		case !strings.ContainsAny(r.text, `/\`):
			if said == 0 {
				continue // a bare name only a tool printed: too often a module or a domain
			}
		case said == 0 && r.msgs[srcArgs] < 2 && r.msgs[srcResult] < 3:
			continue
		case said == 0 && r.msgs[srcArgs] == 0 && !hasExtension(r.text):
			continue // "../types": an import in a file a tool printed
		}
		if truncatedBySpace(r, all) {
			continue
		}
		var b strings.Builder
		if rel, ok := strings.CutPrefix(r.text, root+"/"); ok && root != "" {
			b.WriteString(rel)
		} else {
			b.WriteString(r.text)
		}
		if len(r.lines) > 0 {
			b.WriteString(":" + strings.Join(r.lines, ","))
		}
		var ops []string
		for op := opDelete; op >= opRead; op-- {
			if r.ops&(1<<op) != 0 {
				ops = append(ops, op.String())
			}
		}
		if len(ops) > 0 {
			b.WriteString(" (" + strings.Join(ops, ", ") + ")")
		}
		if r.wrote != "" {
			b.WriteString(" wrote `" + r.wrote + "`")
		}
		if len(r.quoted) > 0 {
			b.WriteString(" quoted `" + strings.Join(r.quoted, "`, `") + "`")
		}
		if dig := r.dig.render(common); dig != "" {
			b.WriteString(": " + dig)
		}
		// Changed files rank first, then read, then named; among equals,
		// the more often named, then the more recently.
		level := 2 * int(r.op)
		if touched && r.op == opMention {
			level = 1 // named by a call that failed or did not say what it did
		}
		rk := rank{class: classWindow, weight: level, weight2: r.score(), at: r.latest()}
		name := ""
		if touched && r.op > opMention {
			name = shortPath(r.text)
		}
		// Rendered as ranked: the order is the rank, reversed.
		d.secs[secFiles] = append(d.secs[secFiles], entry{text: b.String(), rank: rk, name: name,
			order: position{era: -level, at: -r.score(), sub: -r.latest(), tie: r.first}})
	}
}

// shortPath is a path's last two segments ("joins/orders.ts" of
// "/srv/app/src/joins/orders.ts"): enough to find the file again, at a
// fraction of the bytes.
func shortPath(p string) string {
	p = strings.TrimRight(p, `/\`)
	k := strings.LastIndexAny(p, `/\`)
	if k <= 0 {
		return p
	}
	if j := strings.LastIndexAny(p[:k], `/\`); j >= 0 {
		return p[j+1:]
	}
	return p
}

// truncatedBySpace reports a mention that is the start of a longer path
// holding a space ("/tmp/Screenshot" of "/tmp/Screenshot 1.png"), which the
// text scanner cut short.
func truncatedBySpace(r *refStat, all []*refStat) bool {
	if r.ops != 0 {
		return false
	}
	for _, o := range all {
		if len(o.text) > len(r.text) && strings.HasPrefix(o.text, r.text+" ") {
			return true
		}
	}
	return false
}

// shortRoot is the project root when paths are shown relative to it: when
// it is long enough that repeating it on every path would waste the
// budget. The root itself is listed under Critical context.
func (w *window) shortRoot() string {
	if len(w.root) < 20 {
		return ""
	}
	return w.root
}

// buildContext keeps identifiers that must survive exactly: URLs, commit
// ids, issue numbers, the working directory, and the names (functions,
// types, tables, services, env vars) that recur or that the agent
// singled out.
func (w *window) buildContext(d *draft, x *refIndex) {
	if w.root != "" {
		d.secs[secContext] = append(d.secs[secContext], entry{text: w.root, group: "Working directory", rank: rank{class: classPinned, weight: 1}})
	}
	w.buildCommands(d)
	n := w.msgs.len()
	for _, r := range x.nameRefs() {
		if w.kept[r.text] {
			continue // the kept messages say it
		}
		score := r.salience().score(n)
		text, group := r.text, ""
		switch r.kind {
		case refURL:
			group = "URLs"
		case refSHA:
			group = "Ids"
			if r.git {
				group = "Commits"
			}
		case refIssue:
			group = "Issues and PRs"
		case refVersion:
			group = "Versions"
		case refNumber:
			group = "Ids"
		case refIdent:
			group = "Names"
			if r.called {
				group, text = "Calls", text+"()"
			}
		default:
			continue
		}
		sal := r.salience()
		weak := sal.by == srcResult && sal.messages == 1 && !sal.erred && !sal.defined
		if weak && r.kind == refNumber {
			continue // a number one output printed once is a count, an offset, a mode
		}
		d.secs[secContext] = append(d.secs[secContext], entry{text: text, group: group, weak: weak, rank: windowRank(score, -r.first), order: position{at: -score, sub: r.first}})
	}
}

// keptNames returns the names the kept messages hold, by the index's own
// scanner.
func keptNames(kept []compact.Message) map[string]bool {
	if len(kept) == 0 {
		return nil
	}
	names := map[string]bool{}
	add := func(r ref) {
		if r.kind != refPath {
			names[r.text] = true
		}
	}
	for i := range kept {
		m := &kept[i]
		for _, p := range m.Parts {
			switch {
			case p.ToolCall != nil:
				scanRefs(string(p.ToolCall.Arguments), add)
			case p.Text != "":
				head, tail := indexEnds(p.Text)
				scanRefs(head, add)
				scanRefs(tail, add)
			}
		}
	}
	return names
}

// buildCommands keeps, under Critical context, the latest distinct
// commands that ran the tests (whatever their result: they say how the
// project is tested) and that installed packages (those that worked: the
// environment has changed).
func (w *window) buildCommands(d *draft) {
	seen := map[string]bool{}
	var n [cmdInstall + 1]int
	for i := len(w.calls) - 1; i >= 0; i-- {
		c := w.calls[i]
		if !c.exec || c.msg < 0 {
			continue
		}
		commandKinds(c.key, func(kind int, seg string) {
			if kind == cmdInstall && c.failed() || seen[seg] || n[kind] >= maxKeptCommands {
				return
			}
			seen[seg] = true
			n[kind]++
			group := "Tests"
			if kind == cmdInstall {
				group = "Installed"
			}
			d.secs[secContext] = append(d.secs[secContext], entry{text: clip(seg, maxKeyChars), group: group, rank: rank{class: classPinned, at: i}, order: windowPos(i)})
		})
	}
}

// workdir returns the absolute working directory a described call ran in,
// as the window's root counts it: a cwd or workdir argument, or a leading
// "cd dir &&"; "" for none ("." says nothing).
func (c *call) workdir() string {
	dir := ""
	for _, k := range []string{"workdir", "cwd"} {
		if s := argString(c.a.args, k); s != "" {
			dir = s
		}
	}
	if dir == "" && c.exec {
		dir = cdDir(c.key)
	}
	if !absolute(dir) {
		return ""
	}
	return dir
}

// mostCalls returns the directory most calls ran in (count holds how many
// ran in each), the first in sort order of those as many ran in.
func mostCalls(count map[string]int) string {
	best, bestN := "", 0
	for dir, n := range count {
		if n > bestN || n == bestN && dir < best {
			best, bestN = dir, n
		}
	}
	return best
}

// absolute reports a POSIX, home-relative or Windows absolute path.
func absolute(p string) bool {
	return strings.HasPrefix(p, "/") || strings.HasPrefix(p, "~/") || len(p) > 2 && p[1] == ':' && isLetter(p[0])
}

// buildLastTurns shows what was said last before the cut: the final
// asks and agent messages of the window, newest last. Calls and results
// are left to Completed actions, which always keeps the newest.
func (w *window) buildLastTurns(d *draft, n int) {
	askAt := map[int]string{}
	latest := ""
	for _, a := range w.asks {
		askAt[a.msg] = a.text
		latest = a.text
	}
	count := 0
	for i := w.msgs.len() - 1; i >= 0 && count < n; i-- {
		m := w.msgs.at(i)
		var text string
		switch {
		case m.Summary:
			continue
		case askAt[i] != "" && askAt[i] == latest:
			text = "user: (the ask under Task snapshot)"
		case askAt[i] != "":
			text = "user: " + clip(oneLine(askAt[i]), maxTurnChars)
		case m.Role == compact.RoleAssistant:
			t := strings.TrimSpace(textOf(m))
			if t == "" {
				continue
			}
			text = "assistant: " + clip(oneLine(t), maxTurnChars)
		default:
			continue
		}
		count++
		d.secs[secLastTurns] = append(d.secs[secLastTurns], entry{text: text, rank: windowRank(0, i), order: windowPos(i)})
	}
}

// Last dropped turns: how many of the window's final asks and agent
// messages are shown, and how much of each. They restate what the kept
// tail goes on with (measured: of all sections the fewest names a next
// turn reaches for, per byte), so they are short.
var (
	defaultLastTurns = 1
	maxTurnChars     = 240
)

// clip shortens s to at most n bytes, on a rune boundary, marking the cut.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	if n < len("…")+1 {
		return ""
	}
	cut := n - len("…")
	for cut > 0 && !runeStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

func runeStart(b byte) bool { return b&0xC0 != 0x80 }
