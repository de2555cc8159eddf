package fallback

import (
	"strings"

	"github.com/compactkit/compact"
)

// carriedRank ranks an item of a section of an earlier handoff, carried
// at depth (0 for the newest): below everything the window itself says,
// the older handoffs' further down; lower marks a section that goes first
// (the last dropped turns). at orders the items of one handoff (their
// place in its list: the later the newer, for most sections).
func carriedRank(depth, at int, lower bool) rank {
	w := -2 * depth
	if lower {
		w--
	}
	return rank{class: classCarried, weight: w, at: at}
}

// carriedPos places the i-th item of an earlier handoff carried at depth:
// before the window's items, the oldest handoff's first.
func carriedPos(depth, i int) position { return position{era: -(depth + 1), at: i} }

// carry folds an earlier handoff into the draft, section by section, so
// the new handoff holds its items without nesting it. h is older than the
// window and than any handoff carried before it.
//
// What the window resolved is resolved in what is carried: a Blocked item
// whose call later worked is dropped, and an error that was "not resolved
// in this part" says it was resolved later. An item that repeats one
// already there in other words (see nearDuplicate) is not carried again,
// so that folding a handoff into the next, many times over, does not pile
// up restatements.
func (d *draft) carry(h compact.Handoff, depth int, resolved func(item string) string) {
	older := func(s sec, items []string, lower bool) {
		for i, it := range items {
			if strings.TrimSpace(it) == "" || d.has(s, it) {
				continue
			}
			d.secs[s] = append(d.secs[s], entry{text: it, rank: carriedRank(depth, i, lower), order: carriedPos(depth, i)})
		}
	}
	var blocked, errs []string
	for _, it := range h.Blocked {
		if resolved(it) == "" {
			blocked = append(blocked, it)
		}
	}
	for _, it := range h.ErrorsAndFixes {
		if rest, ok := strings.CutSuffix(it, unresolvedNote); ok {
			if fix := resolved(it); fix != "" {
				it = rest + "; later succeeded: " + fix
			}
		}
		errs = append(errs, it)
	}
	// Asks: the old snapshot is an earlier ask, unless the window asked
	// nothing, in which case it is still the task.
	oldAsks := h.EarlierAsks
	if h.TaskSnapshot != "" {
		if d.snapshot == "" {
			d.snapshot = h.TaskSnapshot
		} else if h.TaskSnapshot != d.snapshot {
			oldAsks = append([]string{h.TaskSnapshot}, h.EarlierAsks...)
		}
	}
	// Earlier asks render newest first: older ones go after, ranked lower.
	for i, a := range oldAsks {
		if a == d.snapshot || d.has(secEarlierAsks, a) {
			continue
		}
		// Earlier asks render newest first: the carried ones after the window's.
		d.secs[secEarlierAsks] = append(d.secs[secEarlierAsks], entry{text: a, rank: carriedRank(depth, -i, false), order: position{era: depth + 1, at: i}})
	}
	if h.Goal != "" {
		d.goal = h.Goal // the oldest statement of the goal is the goal
	}
	older(secConstraints, h.Constraints, false)
	older(secActions, h.CompletedActions, false)
	if len(d.secs[secActive]) == 0 {
		older(secActive, h.ActiveState, false)
	}
	if len(d.secs[secBlocked]) == 0 {
		older(secBlocked, blocked, false)
	}
	// Decisions made earlier still stand: they rank with the window's
	// middling ones rather than below all of them.
	for i, it := range h.Decisions {
		if !d.has(secDecisions, it) {
			// with the window's middling findings, below those of the
			// window itself.
			d.secs[secDecisions] = append(d.secs[secDecisions], entry{text: it,
				rank: rank{class: classWindow, weight: carriedDecisionWeight, weight2: -(depth + 1), at: i}, order: carriedPos(depth, i)})
		}
	}
	older(secErrors, errs, false)
	for i, it := range h.RelevantFiles {
		if !d.hasPath(pathOfItem(it)) {
			d.secs[secFiles] = append(d.secs[secFiles], entry{text: it, rank: carriedRank(depth, i, false), order: carriedPos(depth, i)})
		}
	}
	for i, it := range h.CriticalContext {
		group, names := splitGroup(it)
		for j, n := range names {
			if !d.has(secContext, n) {
				d.secs[secContext] = append(d.secs[secContext], entry{text: n, group: group,
					rank:  rank{class: classCarried, weight: -2 * depth, weight2: i, at: j},
					order: position{era: -(depth + 1), at: i, sub: j}})
			}
		}
	}
	older(secLastTurns, h.LastDroppedTurns, true)
}

// has reports whether section s holds text, or an item saying the same in
// other words.
// carriedDecisionWeight is the score a carried decision ranks with: a
// middling finding of the window's.
const carriedDecisionWeight = 5

func (d *draft) has(s sec, text string) bool {
	words := wordSet(text)
	for _, e := range d.secs[s] {
		if e.text == text || nearDuplicate(words, wordSet(e.text)) {
			return true
		}
	}
	return false
}

// nearDuplicate reports two items whose words mostly agree: at least
// four in five of the words of the shorter are in the longer ("The bug is
// in parseHeader." and "So the bug is in parseHeader, line 40."). Items
// of fewer than four words must match exactly.
func nearDuplicate(a, b map[string]bool) bool {
	if len(a) > len(b) {
		a, b = b, a
	}
	if len(a) < 4 {
		return false
	}
	shared := 0
	for w := range a {
		if b[w] {
			shared++
		}
	}
	return shared*5 >= len(a)*4
}

// wordSet returns the lower-cased words of s.
func wordSet(s string) map[string]bool {
	set := map[string]bool{}
	for _, w := range strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '_' || r >= 0x80)
	}) {
		set[w] = true
	}
	return set
}

func (d *draft) hasPath(p string) bool {
	for _, e := range d.secs[secFiles] {
		if pathOfItem(e.text) == p {
			return true
		}
	}
	return false
}

// pathOfItem recovers the path of a Relevant files item: what precedes the
// " (ops)" note and a ":lines" suffix.
func pathOfItem(it string) string {
	if k := strings.LastIndex(it, " ("); k > 0 && strings.HasSuffix(it, ")") {
		it = it[:k]
	}
	p, _ := splitLineRef(it)
	if p2, _ := splitLineRef(strings.Split(it, ",")[0]); p2 != it && strings.Contains(it, ",") {
		p = p2
	}
	return p
}

// contextGroups are the labels under which Critical context packs its
// entries, in render order.
var contextGroups = []string{"Working directory", "Tests", "Installed", "URLs", "Commits", "Issues and PRs", "Names", "Calls", "Ids", "Versions"}

// groupSep separates the entries of a Critical context group: commands
// may hold commas.
func groupSep(group string) string {
	if group == "Tests" || group == "Installed" {
		return "; "
	}
	return ", "
}

// splitGroup reads a packed Critical context item ("Names: a, b") back into
// its group and entries; an item without a known label is one entry.
func splitGroup(it string) (string, []string) {
	for _, g := range contextGroups {
		if rest, ok := strings.CutPrefix(it, g+": "); ok {
			if g == "Working directory" {
				return g, []string{rest}
			}
			var out []string
			for _, n := range strings.Split(rest, groupSep(g)) {
				if n = strings.TrimSpace(n); n != "" {
					out = append(out, n)
				}
			}
			return g, out
		}
	}
	return "", []string{it}
}
