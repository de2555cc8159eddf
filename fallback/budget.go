package fallback

import (
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/compactkit/compact"
)

// Default bounds, in tokens or in percent of Config.MaxTokens.
const (
	// DefaultMaxTokens is the total cap when Config.MaxTokens is 0.
	DefaultMaxTokens = 2000
	snapshotShare    = 30 // the latest ask may take this share of the total
	goalShare        = 8
	goalMaxTokens    = 160
	// minRoom is what must be left for content once the headings are
	// paid for.
	minRoom = 24
	// maxCosted bounds how many candidates of one section are counted:
	// more could never fit under a section cap.
	maxCosted = 400
)

// defaultItemTokens caps one item of each section.
var defaultItemTokens = [nSecs]int{
	secEarlierAsks: 150, secConstraints: 110, secActions: 130, secActive: 50, secBlocked: 80,
	secDecisions: 90, secErrors: 100, secFiles: 60, secContext: 30, secLastTurns: 100,
}

// defaultSectionShare caps each section, in percent of the total.
var defaultSectionShare = [nSecs]int{
	secEarlierAsks: 30, secConstraints: 15, secActions: 45, secActive: 12, secBlocked: 8,
	secDecisions: 35, secErrors: 30, secFiles: 40, secContext: 20, secLastTurns: 12,
}

// sectionWeight is each section's claim on the room the others leave:
// room is shared in these proportions, and what a section does not need
// goes to the rest.
var sectionWeight = [nSecs]int{
	secEarlierAsks: 10, secConstraints: 8, secActions: 16, secActive: 6, secBlocked: 3,
	secDecisions: 20, secErrors: 12, secFiles: 10, secContext: 8, secLastTurns: 5,
}

// trimOrder is the order in which the final total cap removes items: the
// whole of a section's lowest-ranked items before the next section is
// touched. The goal goes after the earlier asks; the task snapshot is
// never dropped, only shortened, once everything else is gone.
var trimOrder = []sec{secLastTurns, secContext, secFiles, secActions, secDecisions, secErrors, secEarlierAsks, -1, secConstraints, secBlocked, secActive}

// fillOrder is the order in which room left after the shares is handed
// out again: the reverse of trimOrder.
var fillOrder = []sec{secActive, secBlocked, secConstraints, secEarlierAsks, secErrors, secDecisions, secActions, secFiles, secLastTurns, secContext}

// narration marks the sections that tell what happened (actions, plans,
// decisions, errors, the last turns, earlier asks and rules). Past the
// default budget they stop growing: a larger handoff budget, given for a
// longer window, is spent on the index of names and files, which holds the
// most of what a next turn reaches for per token (measured: about ten
// times as much as narration per byte).
var narration = [nSecs]bool{secEarlierAsks: true, secConstraints: true, secActions: true, secActive: true,
	secBlocked: true, secDecisions: true, secErrors: true, secLastTurns: true}

// narrationBudget is the budget whose shares cap the narration sections.
const narrationBudget = DefaultMaxTokens

// limits are the resolved bounds of one Build.
type limits struct {
	max    int
	count  func(string) int
	item   [nSecs]int
	secCap [nSecs]int
	setCap [nSecs]bool // secCap comes from Config.SectionTokens
	// noOverflow marks sections that take no room past their cap, even
	// room no other section can use.
	noOverflow  [nSecs]bool
	snapshotCap int
	goalCap     int
}

// fitted is a section after bounding: the entries kept, and how many were
// left out.
type fitted struct {
	kept    []entry
	omitted int
	// pool is every costed entry, best first: the note of a section that
	// names what it left out (Relevant files) reads them.
	pool []entry
}

// fit bounds the draft: every item to its item cap, every section to its
// section cap, and the rendered whole to the total cap, in that order.
func fit(d *draft, lim *limits) (compact.Handoff, error) {
	b, err := allot(d, lim)
	if err != nil {
		return compact.Handoff{}, err
	}
	return b.capTotal(d, lim), nil
}

// bounded is a draft cut to its item and section caps, before the total
// cap is applied.
type bounded struct {
	secs     [nSecs]fitted
	snapshot string
	goal     string
	snapCap  int
}

// allot applies the item and section caps and shares the total among the
// sections by weight, using the per-item counts.
func allot(d *draft, lim *limits) (*bounded, error) {
	skeleton := lim.count(compact.Handoff{}.Render())
	if lim.max < skeleton+minRoom {
		return nil, errBudget(lim.max, skeleton+minRoom)
	}
	b := &bounded{snapCap: min(lim.snapshotCap, lim.secCap[secEarlierAsks])}
	var snapCost, goalCost int
	b.snapshot, snapCost = truncateMiddle(d.snapshot, b.snapCap, lim.count)
	b.goal, goalCost = truncateTokens(d.goal, lim.goalCap, lim.count)
	room := lim.max - skeleton - snapCost - goalCost
	var costed [nSecs][]entry
	var need [nSecs]int
	for s := sec(0); s < nSecs; s++ {
		capTokens := lim.secCap[s]
		if s == secEarlierAsks {
			capTokens -= snapCost
		}
		costed[s], need[s] = costEntries(d.secs[s], s, lim, capTokens)
	}
	alloc := share(need, max(room, 0))
	for s := sec(0); s < nSecs; s++ {
		b.secs[s] = pick(costed[s], alloc[s], len(d.secs[s])+d.unlisted[s])
	}
	// An error a kept action's outcome already states is not listed
	// again: its share goes to the next errors, what is left to the
	// sections below.
	if stated := statedErrors(d.secs[secErrors], b.secs[secActions].kept); len(stated) > 0 {
		d.secs[secErrors] = slices.DeleteFunc(d.secs[secErrors], func(e entry) bool { return stated[e.call] })
		costed[secErrors] = slices.DeleteFunc(costed[secErrors], func(e entry) bool { return stated[e.call] })
		b.secs[secErrors] = pick(costed[secErrors], alloc[secErrors], len(d.secs[secErrors])+d.unlisted[secErrors])
	}
	used := 0
	for s := sec(0); s < nSecs; s++ {
		used += sum(b.secs[s].kept)
	}
	// Hand out what the shares left unused, most important sections first.
	left := room - used
	for _, s := range fillOrder {
		if left <= 0 {
			break
		}
		capLeft := lim.secCap[s] - sum(b.secs[s].kept)
		if s == secEarlierAsks {
			capLeft -= snapCost
		}
		if len(b.secs[s].kept) < len(d.secs[s])+d.unlisted[s] {
			capLeft -= noteReserve // for "(N more not listed)"
		}
		left -= topUp(&b.secs[s], costed[s], min(left, capLeft), len(d.secs[s])+d.unlisted[s])
	}
	// Room no section could take under its cap goes to the sections that
	// still have items, in the same order: a default cap keeps one section
	// from crowding out the others, not from using room nobody else needs.
	// (A cap the caller set, Config.SectionTokens, holds.)
	for _, s := range fillOrder {
		if left <= 0 {
			break
		}
		if !lim.setCap[s] && !lim.noOverflow[s] && len(b.secs[s].kept) < len(d.secs[s])+d.unlisted[s] {
			left -= topUp(&b.secs[s], costed[s], left-noteReserve, len(d.secs[s])+d.unlisted[s])
		}
	}
	b.dedupeIndex(costed[secContext], len(d.secs[secContext])+d.unlisted[secContext], lim.max*weakShare/100)
	b.secs[secFiles].pool = costed[secFiles]
	return b, nil
}

// statedErrors returns the calls whose error entries repeat what a kept
// action of the same call says in its outcome: every line that says what
// went wrong is already there.
func statedErrors(errs, actions []entry) map[*call]bool {
	shown := map[*call]string{}
	for _, a := range actions {
		if a.call != nil {
			shown[a.call] = a.text
		}
	}
	stated := map[*call]bool{}
	for _, e := range errs {
		text, ok := shown[e.call]
		if e.call == nil || !ok || len(e.states) == 0 {
			continue
		}
		if !slices.ContainsFunc(e.states, func(l string) bool { return !strings.Contains(text, l) }) {
			stated[e.call] = true
		}
	}
	return stated
}

// weakShare is the share of the budget, in percent, that weak index
// entries (see entry.weak) may take: a tool printed them once and nobody
// used them, so few are needed later (about one in seventy), but a reader
// of code does reach for some of them.
const weakShare = 13

// indexGroups are the Critical context groups that list names, one entry
// per name.
var indexGroups = map[string]bool{"Names": true, "Calls": true, "Ids": true, "Versions": true, "URLs": true, "Commits": true, "Issues and PRs": true}

// dedupeIndex spends the room Critical context was given again, leaving
// out each name the rest of the handoff already spells out (in an action,
// a file, a decision) or that a longer listed name holds (NewHash in
// plumbing.NewHash()): a reader finds it there, and the room goes to the
// next name by rank.
func (b *bounded) dedupeIndex(costed []entry, total, weakRoom int) {
	f := &b.secs[secContext]
	room := sum(f.kept)
	var other strings.Builder
	other.WriteString(b.snapshot + "\n" + b.goal)
	for s := range b.secs {
		if sec(s) == secContext {
			continue
		}
		for _, e := range b.secs[s].kept {
			other.WriteString("\n" + e.text)
		}
	}
	said := other.String()
	var kept []entry
	used, elsewhere := 0, 0
	for _, e := range costed {
		name := strings.TrimSuffix(e.text, "()")
		if indexGroups[e.group] {
			if strings.Contains(said, name) || slices.ContainsFunc(kept, func(k entry) bool { return strings.Contains(k.text, name) }) {
				elsewhere++ // present, though not listed here
				continue
			}
		}
		if e.cost > room-used || e.weak && e.cost > weakRoom {
			continue
		}
		if e.weak {
			weakRoom -= e.cost
		}
		if indexGroups[e.group] {
			// A longer name holds the shorter ones kept before it.
			kept = slices.DeleteFunc(kept, func(k entry) bool {
				if indexGroups[k.group] && strings.Contains(e.text, strings.TrimSuffix(k.text, "()")) {
					used -= k.cost
					return true
				}
				return false
			})
		}
		kept = append(kept, e)
		used += e.cost
	}
	f.kept, f.omitted = kept, max(total-len(kept)-elsewhere, 0)
}

// capTotal renders the handoff and, while the rendered text is over the
// total cap, removes items in trimOrder; when only the task snapshot is
// left, it shortens the snapshot.
func (b *bounded) capTotal(d *draft, lim *limits) compact.Handoff {
	h := assemble(b.snapshot, b.goal, &b.secs)
	for total := lim.count(h.Render()); total > lim.max; total = lim.count(h.Render()) {
		over := total - lim.max
		for over > 0 {
			freed, ok := trimOne(&b.secs, &b.goal)
			if !ok {
				b.snapCap = max(b.snapCap-over-8, 0)
				b.snapshot, _ = truncateMiddle(d.snapshot, b.snapCap, lim.count)
				break
			}
			over -= freed
		}
		h = assemble(b.snapshot, b.goal, &b.secs)
	}
	return h
}

// costEntries truncates entries to the section's item cap and counts
// them, best-ranked first, stopping once twice the section cap is reached
// (nothing past that could be kept). It returns the costed entries in rank
// order and what the section needs to keep all of them, capped.
func costEntries(es []entry, s sec, lim *limits, capTokens int) ([]entry, int) {
	sorted := make([]entry, len(es))
	copy(sorted, es)
	sort.SliceStable(sorted, func(i, j int) bool {
		if c := sorted[i].rank.cmp(sorted[j].rank); c != 0 {
			return c > 0
		}
		return sorted[i].order.before(sorted[j].order)
	})
	var out []entry
	total := 0
	overhead := 2 // "- " and the newline
	if s == secContext {
		overhead = 1 // ", " inside a packed item
	}
	groups := map[string]bool{}
	for _, e := range sorted {
		if len(out) == maxCosted || total >= 2*capTokens {
			break
		}
		text, c := truncateTokens(e.text, lim.item[s], lim.count)
		e.text, e.cost, e.id = text, c+overhead, len(out)
		if e.group != "" && !groups[e.group] {
			groups[e.group] = true
			e.cost += lim.count(e.group+": ") + 2
		}
		out = append(out, e)
		total += e.cost
	}
	return out, min(total, max(capTokens, 0))
}

// share divides room among sections in proportion to sectionWeight, giving
// what a section does not need to the others (water filling).
func share(need [nSecs]int, room int) [nSecs]int {
	var alloc [nSecs]int
	active := map[sec]bool{}
	for s := sec(0); s < nSecs; s++ {
		if need[s] > 0 {
			active[s] = true
		}
	}
	for room > 0 && len(active) > 0 {
		weight := 0
		for s := sec(0); s < nSecs; s++ {
			if active[s] {
				weight += sectionWeight[s]
			}
		}
		satisfied := false
		for s := sec(0); s < nSecs; s++ {
			if !active[s] {
				continue
			}
			if part := room * sectionWeight[s] / weight; need[s]-alloc[s] <= part {
				room -= need[s] - alloc[s]
				alloc[s] = need[s]
				delete(active, s)
				satisfied = true
			}
		}
		if satisfied {
			continue
		}
		for s := sec(0); s < nSecs; s++ {
			if active[s] {
				alloc[s] += room * sectionWeight[s] / weight
			}
		}
		break
	}
	return alloc
}

// noteReserve is kept free in a section that cannot hold all its entries,
// for the "(N more not listed)" note.
const noteReserve = 10

// pick keeps the best-ranked entries that fit in alloc tokens. An entry too
// large for what is left is passed over for smaller ones after it.
func pick(costed []entry, alloc, total int) fitted {
	var f fitted
	if sum(costed) > alloc || len(costed) < total {
		alloc -= noteReserve
	}
	for _, e := range costed {
		if e.cost <= alloc {
			f.kept = append(f.kept, e)
			alloc -= e.cost
		}
	}
	f.omitted = total - len(f.kept)
	return f
}

// topUp adds entries left out of f that fit in room, best first, and
// returns the tokens they use.
func topUp(f *fitted, costed []entry, room, total int) int {
	used := 0
	kept := map[int]bool{}
	for _, e := range f.kept {
		kept[e.id] = true
	}
	for _, e := range costed {
		if kept[e.id] || e.cost > room-used {
			continue
		}
		f.kept = append(f.kept, e)
		used += e.cost
	}
	f.omitted = total - len(f.kept)
	return used
}

func sum(es []entry) int {
	n := 0
	for _, e := range es {
		n += e.cost
	}
	return n
}

// trimOne removes the lowest-ranked item of the first section in trimOrder
// that still has one, and returns its estimated cost.
func trimOne(secs *[nSecs]fitted, goal *string) (int, bool) {
	for _, s := range trimOrder {
		if s < 0 {
			if *goal != "" {
				n := len(*goal)/4 + 1
				*goal = ""
				return n, true
			}
			continue
		}
		f := &secs[s]
		if len(f.kept) == 0 {
			continue
		}
		low := 0
		for i, e := range f.kept {
			if c := e.rank.cmp(f.kept[low].rank); c < 0 || c == 0 && f.kept[low].order.before(e.order) {
				low = i
			}
		}
		cost := f.kept[low].cost
		f.kept = append(f.kept[:low], f.kept[low+1:]...)
		f.omitted++
		return max(cost, 1), true
	}
	return 0, false
}

// assemble renders the kept entries into a Handoff, each section in its
// order, with a note where entries were left out.
func assemble(snapshot, goal string, secs *[nSecs]fitted) compact.Handoff {
	h := compact.Handoff{TaskSnapshot: snapshot, Goal: goal}
	items := func(s sec) []string {
		f := secs[s]
		kept := append([]entry(nil), f.kept...)
		sort.SliceStable(kept, func(i, j int) bool {
			if kept[i].order != kept[j].order {
				return kept[i].order.before(kept[j].order)
			}
			return kept[i].text < kept[j].text
		})
		var out []string
		if s == secContext {
			out = packGroups(kept)
		} else {
			for _, e := range kept {
				out = append(out, e.text)
			}
		}
		// The index says nothing of the names it leaves out: a count of
		// them is no help to a reader.
		if f.omitted > 0 && len(out) > 0 && s != secContext {
			switch {
			case s == secActions:
				out = append([]string{"(" + strconv.Itoa(f.omitted) + " earlier actions not listed)"}, out...)
			case s == secFiles && moreNames(f) != "":
				out = append(out, "("+strconv.Itoa(f.omitted)+" more not listed, touched: "+moreNames(f)+")")
			default:
				out = append(out, "("+strconv.Itoa(f.omitted)+" more not listed)")
			}
		}
		return out
	}
	h.EarlierAsks = items(secEarlierAsks)
	h.Constraints = items(secConstraints)
	h.CompletedActions = items(secActions)
	h.ActiveState = items(secActive)
	h.Blocked = items(secBlocked)
	h.Decisions = items(secDecisions)
	h.ErrorsAndFixes = items(secErrors)
	h.RelevantFiles = items(secFiles)
	h.CriticalContext = items(secContext)
	h.LastDroppedTurns = items(secLastTurns)
	return h
}

// moreNames lists the short names of the files a section left out that
// calls touched, best-ranked first, up to maxMoreNames bytes: a name costs
// a few tokens, and a next turn reaches for names.
func moreNames(f fitted) string {
	kept := make(map[int]bool, len(f.kept))
	for _, e := range f.kept {
		kept[e.id] = true
	}
	var b strings.Builder
	for _, e := range f.pool {
		if kept[e.id] || e.name == "" {
			continue
		}
		if b.Len()+len(e.name)+2 > maxMoreNames {
			break
		}
		if b.Len() > 0 {
			b.WriteString(", ")
		}
		b.WriteString(e.name)
	}
	return b.String()
}

// maxMoreNames bounds the names of left-out files a note lists, in bytes.
const maxMoreNames = 240

// packGroups renders Critical context entries as one item per group
// ("Names: a, b, c"), groups in contextGroups order.
func packGroups(kept []entry) []string {
	byGroup := map[string][]string{}
	for _, e := range kept {
		byGroup[e.group] = append(byGroup[e.group], e.text)
	}
	var out []string
	for _, g := range contextGroups {
		if names := byGroup[g]; len(names) > 0 {
			out = append(out, g+": "+strings.Join(names, groupSep(g)))
		}
	}
	if names := byGroup[""]; len(names) > 0 {
		out = append(out, names...)
	}
	return out
}

// truncateTokens shortens s to at most n tokens, marking the cut, and
// returns it with its count.
func truncateTokens(s string, n int, count func(string) int) (string, int) {
	if s == "" {
		return "", 0
	}
	c := count(s)
	if c <= n {
		return s, c
	}
	if n <= 1 {
		return "", 0
	}
	target := len(s) * n / c
	for target > 0 {
		t := clip(s, target)
		ct := count(t)
		if ct <= n {
			return t, ct
		}
		target = min(target-1, target*n/ct)
	}
	return "", 0
}

// truncateMiddle shortens s to at most n tokens by cutting out its middle,
// so the start of an ask and its last words (often the actual request)
// both survive.
func truncateMiddle(s string, n int, count func(string) int) (string, int) {
	if s == "" {
		return "", 0
	}
	c := count(s) + 4 // the fence around the snapshot
	if c <= n {
		return s, c
	}
	budget := n - 16 // the marker
	if budget <= 0 {
		return "", 0
	}
	keep := len(s) * budget / c
	for keep > 0 {
		head := clip(s, keep*2/3)
		head = strings.TrimSuffix(head, "…")
		tailLen := keep / 3
		start := len(s) - tailLen
		for start < len(s) && !runeStart(s[start]) {
			start++
		}
		t := head + "\n[… " + strconv.Itoa(len(s)-len(head)-(len(s)-start)) + " bytes left out …]\n" + s[start:]
		if ct := count(t) + 4; ct <= n {
			return t, ct
		}
		keep = keep * 9 / 10
	}
	return "", 0
}
