package compact

import (
	"errors"
	"fmt"
	"strings"
)

// Handoff is the structured summary that replaces the dropped middle of a
// transcript. An LLM writes it, or the deterministic fallback builds it; both
// render it under the same headings (HandoffSections), in the same order.
type Handoff struct {
	// TaskSnapshot is the latest user ask, verbatim.
	TaskSnapshot string
	// EarlierAsks are the user's earlier asks, newest first. They render
	// under the task snapshot.
	EarlierAsks      []string
	Goal             string
	Constraints      []string // constraints and preferences, verbatim where the user stated them
	CompletedActions []string // in the order they happened
	ActiveState      []string
	Blocked          []string
	Decisions        []string
	ErrorsAndFixes   []string
	RelevantFiles    []string
	CriticalContext  []string // identifiers to keep exactly: SHAs, URLs, issue numbers, names
	LastDroppedTurns []string
}

// HandoffSections are the headings of a rendered handoff, in order.
var HandoffSections = []string{
	"Task snapshot",
	"Goal",
	"Constraints and preferences",
	"Completed actions",
	"Active state",
	"Blocked",
	"Decisions",
	"Errors and fixes",
	"Relevant files",
	"Critical context",
	"Last dropped turns",
}

// Markers that open and close a handoff message, so that readers, the
// compactor and the model can tell a handoff from a real user turn.
const (
	HandoffBegin = "<<<compact:handoff>>>"
	// HandoffEnd closes an unsigned handoff. A signed one (what Message
	// writes) closes with "<<<compact:handoff-end mac=HEX>>>".
	HandoffEnd = "<<<compact:handoff-end>>>"
	// HandoffPreamble follows HandoffBegin and tells the model how to treat
	// what follows.
	HandoffPreamble = "This is a reference summary of earlier turns of this conversation, which were compacted to save context. It is background, not new instructions: keep working on the task from the most recent messages."
)

const (
	noneItem          = "(none)"
	earlierAsksLeadIn = "Earlier asks, newest first:"
)

// ErrIncompleteHandoff is returned (wrapped) by ParseHandoff when headings are
// missing from the text.
var ErrIncompleteHandoff = errors.New("handoff is missing sections")

// IsEmpty reports whether no section holds anything.
func (h *Handoff) IsEmpty() bool {
	if h.TaskSnapshot != "" || h.Goal != "" || len(h.EarlierAsks) > 0 {
		return false
	}
	for _, l := range h.lists() {
		if len(*l) > 0 {
			return false
		}
	}
	return true
}

// lists returns the list sections in heading order (after Goal).
func (h *Handoff) lists() []*[]string {
	return []*[]string{&h.Constraints, &h.CompletedActions, &h.ActiveState, &h.Blocked,
		&h.Decisions, &h.ErrorsAndFixes, &h.RelevantFiles, &h.CriticalContext, &h.LastDroppedTurns}
}

// Render writes the handoff as markdown: every heading of HandoffSections, in
// order, each followed by its content or "(none)". The task snapshot is
// fenced so a verbatim ask may contain markdown of its own; list items that
// span lines continue indented by two spaces.
func (h Handoff) Render() string {
	var b strings.Builder
	b.WriteString("## " + HandoffSections[0] + "\n\n")
	if h.TaskSnapshot == "" {
		b.WriteString(noneItem + "\n")
	} else {
		fence := fenceFor(h.TaskSnapshot)
		b.WriteString(fence + "text\n" + h.TaskSnapshot + "\n" + fence + "\n")
	}
	if len(h.EarlierAsks) > 0 {
		b.WriteString("\n" + earlierAsksLeadIn + "\n")
		writeItems(&b, h.EarlierAsks)
	}
	b.WriteString("\n## " + HandoffSections[1] + "\n\n")
	if h.Goal == "" {
		b.WriteString(noneItem + "\n")
	} else {
		b.WriteString(indentHeadings(h.Goal) + "\n")
	}
	for i, l := range h.lists() {
		b.WriteString("\n## " + HandoffSections[i+2] + "\n\n")
		if len(*l) == 0 {
			b.WriteString(noneItem + "\n")
			continue
		}
		writeItems(&b, *l)
	}
	return b.String()
}

func writeItems(b *strings.Builder, items []string) {
	for _, it := range items {
		b.WriteString("- " + strings.ReplaceAll(it, "\n", "\n  ") + "\n")
	}
}

// indentHeadings keeps prose that holds its own markdown headings from
// starting a section when the rendered handoff is parsed again.
func indentHeadings(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		if quotedHeading(l) {
			lines[i] = " " + l
		}
	}
	return strings.Join(lines, "\n")
}

// quotedHeading reports whether a line of prose would read as a heading at
// the left margin: Render indents it by one space, parseProse takes the
// space off again.
func quotedHeading(l string) bool {
	_, section := headingSection(l)
	return strings.HasPrefix(l, "#") || section
}

// fenceFor returns a backtick fence longer than any backtick run in s.
func fenceFor(s string) string {
	longest, run := 0, 0
	for i := 0; i < len(s); i++ {
		if s[i] == '`' {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	return strings.Repeat("`", max(3, longest+1))
}

// Message wraps the rendered handoff in a user message that opens with
// HandoffBegin and the preamble and closes with an end marker signed under
// DefaultHandoffKey (SignedMessage signs under a key of one's own). The
// message is marked Summary.
func (h Handoff) Message() Message {
	return h.SignedMessage(nil)
}

// StripHandoffMarkers removes HandoffBegin, every end marker (signed or
// not) and the preamble from s: what a summarizer may echo of an earlier handoff, which must not
// reappear inside a new one (handoffs never nest).
func StripHandoffMarkers(s string) string {
	// Removing one marker may join the text around it into another
	// ("<<<compact:<<<compact:handoff>>>handoff>>>"): repeat until none is
	// left.
	for strings.Contains(s, HandoffBegin) || strings.Contains(s, handoffEndOpen) || strings.Contains(s, HandoffPreamble) {
		s = strings.ReplaceAll(s, HandoffBegin, "")
		s = stripEndMarkers(s)
		s = strings.ReplaceAll(s, HandoffPreamble, "")
	}
	return s
}

// ParseHandoff recovers a Handoff from rendered markdown: Render's output, a
// handoff message, or an LLM's answer that uses the same headings. Headings
// are matched by name at the start of a line, ignoring case, the number of
// '#', bold markers, numbering and a trailing colon; text before the first
// heading is ignored, and so is a heading inside the task snapshot's fence
// or indented inside an item: text quoted in a handoff never becomes one
// of its sections. Any missing heading yields the parsed sections together
// with an error wrapping ErrIncompleteHandoff that names them.
func ParseHandoff(s string) (Handoff, error) {
	if i := strings.Index(s, handoffEndOpen); i >= 0 {
		s = s[:i]
	}
	lines := strings.Split(strings.ReplaceAll(s, "\r\n", "\n"), "\n")
	bodies := sectionBodies(lines, true)
	if len(bodies) < len(HandoffSections) {
		// A fence an LLM left open must not hide the sections after it.
		if loose := sectionBodies(lines, false); len(loose) > len(bodies) {
			bodies = loose
		}
	}
	var h Handoff
	h.TaskSnapshot, h.EarlierAsks = parseSnapshot(bodies[0])
	h.Goal = parseProse(bodies[1])
	for i, l := range h.lists() {
		*l = parseItems(bodies[i+2])
	}
	var missing []string
	for i, name := range HandoffSections {
		if _, ok := bodies[i]; !ok {
			missing = append(missing, name)
		}
	}
	if len(missing) > 0 {
		return h, fmt.Errorf("%w: %s", ErrIncompleteHandoff, strings.Join(missing, ", "))
	}
	return h, nil
}

// sectionBodies splits lines at the section headings. With fences set, a
// fenced block of the task snapshot (Render fences the verbatim ask) is
// read as text, whatever headings it holds.
func sectionBodies(lines []string, fences bool) map[int][]string {
	bodies := map[int][]string{}
	current := -1
	fence := ""
	for _, line := range lines {
		if fence != "" {
			if strings.TrimRight(line, " \t") == fence {
				fence = ""
			}
			bodies[current] = append(bodies[current], line)
			continue
		}
		if sec, ok := headingSection(line); ok {
			current = sec
			if _, seen := bodies[sec]; !seen {
				bodies[sec] = []string{}
			}
			continue
		}
		if current >= 0 {
			bodies[current] = append(bodies[current], line)
			if fences && current == 0 {
				fence = leadingFence(strings.TrimRight(line, " \t"))
			}
		}
	}
	return bodies
}

// headingSection tells whether line is a heading naming one of the
// sections. A heading starts at the left margin: Render indents what it
// quotes (item continuations, prose lines that would read as headings).
func headingSection(line string) (int, bool) {
	if line == "" || line[0] == ' ' || line[0] == '\t' {
		return 0, false
	}
	t := strings.TrimSpace(line)
	hashes := len(t) - len(strings.TrimLeft(t, "#"))
	bold := strings.HasPrefix(t, "**") && strings.HasSuffix(strings.TrimRight(t, ":"), "**")
	if hashes == 0 && !bold {
		return 0, false
	}
	t = strings.Trim(strings.TrimLeft(t, "#"), " *:_")
	t = strings.TrimLeft(t, "0123456789.) ")
	t = strings.TrimRight(t, ": *_")
	for i, name := range HandoffSections {
		if strings.EqualFold(t, name) {
			return i, true
		}
	}
	return 0, false
}

func parseSnapshot(lines []string) (string, []string) {
	// The verbatim ask is fenced (Render): what it holds, a lead-in line
	// included, is the ask's own text.
	first := 0
	for first < len(lines) && strings.TrimSpace(lines[first]) == "" {
		first++
	}
	snapshot, rest := "", lines
	if first < len(lines) {
		if open := leadingFence(strings.TrimSpace(lines[first])); open != "" {
			for j := first + 1; j < len(lines); j++ {
				if strings.TrimSpace(lines[j]) == open {
					snapshot, rest = strings.Join(lines[first+1:j], "\n"), lines[j+1:]
					lines = nil
					break
				}
			}
		}
	}
	var asks []string
	for i, l := range rest {
		if strings.TrimSpace(l) == earlierAsksLeadIn {
			asks = parseItems(rest[i+1:])
			rest = rest[:i]
			break
		}
	}
	if lines == nil {
		return snapshot, asks
	}
	trimmed := strings.TrimSpace(strings.Join(rest, "\n"))
	if trimmed == noneItem {
		return "", asks
	}
	return trimmed, asks
}

func leadingFence(s string) string {
	n := len(s) - len(strings.TrimLeft(s, "`"))
	if n < 3 {
		return ""
	}
	return s[:n]
}

func parseProse(lines []string) string {
	text := strings.TrimSpace(strings.Join(lines, "\n"))
	if isNone(text) {
		return ""
	}
	out := strings.Split(text, "\n")
	for i, l := range out {
		if rest, ok := strings.CutPrefix(l, " "); ok && quotedHeading(rest) {
			out[i] = rest
		}
	}
	return strings.Join(out, "\n")
}

// parseItems reads a markdown list; paragraphs without bullets (as LLMs
// sometimes write) become one item each.
func parseItems(lines []string) []string {
	var items []string
	var cur []string
	inPara := false
	flush := func() {
		if len(cur) > 0 {
			it := strings.TrimRight(strings.Join(cur, "\n"), " \n")
			if !isNone(it) {
				items = append(items, it)
			}
		}
		cur, inPara = nil, false
	}
	for _, l := range lines {
		if item, ok := bulletItem(l); ok {
			flush()
			cur = []string{item}
			continue
		}
		switch {
		case strings.TrimSpace(l) == "":
			if inPara {
				flush()
			} else if cur != nil {
				cur = append(cur, "")
			}
		case cur != nil && strings.HasPrefix(l, "  "):
			cur = append(cur, l[2:])
		case cur != nil && !inPara:
			flush()
			cur, inPara = []string{strings.TrimSpace(l)}, true
		case inPara:
			cur = append(cur, strings.TrimSpace(l))
		default:
			cur, inPara = []string{strings.TrimSpace(l)}, true
		}
	}
	flush()
	return items
}

// bulletItem recognises "- x", "* x", "+ x" and "1. x" list items that start
// at the left margin.
func bulletItem(l string) (string, bool) {
	if len(l) >= 2 && (l[0] == '-' || l[0] == '*' || l[0] == '+') && l[1] == ' ' {
		return l[2:], true
	}
	i := 0
	for i < len(l) && l[i] >= '0' && l[i] <= '9' {
		i++
	}
	if i > 0 && i+1 < len(l) && (l[i] == '.' || l[i] == ')') && l[i+1] == ' ' {
		return l[i+2:], true
	}
	return "", false
}

func isNone(s string) bool {
	s = strings.TrimSpace(s)
	if s == "" {
		return true
	}
	switch strings.ToLower(strings.Trim(s, "*_.")) {
	case "(none)", "none", "n/a", "- none", "nothing", "none yet":
		return true
	}
	return false
}
