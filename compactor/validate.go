package compactor

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"sort"
	"strings"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/redact"
)

// digest identifies a message byte for byte: its content (Fingerprint),
// its ID and its source records. Digests of the kept messages are taken
// before anything runs, so a bug that changed a shared message in place
// would still be caught.
func digest(m *compact.Message) string {
	h := sha256.New()
	var n [8]byte
	str := func(s string) {
		binary.LittleEndian.PutUint64(n[:], uint64(len(s)))
		h.Write(n[:])
		h.Write([]byte(s))
	}
	str(m.Fingerprint())
	str(m.ID)
	str(m.Source.Format)
	str(m.Source.Fingerprint)
	for _, r := range m.Source.Records {
		str(string(r))
	}
	// A message read from a file may hold where its records lie instead
	// of their bytes: the spans (with their checksums) are its source.
	for _, sp := range m.Source.Spans {
		var b [20]byte
		binary.LittleEndian.PutUint64(b[0:], uint64(sp.Offset))
		binary.LittleEndian.PutUint64(b[8:], uint64(sp.Len))
		binary.LittleEndian.PutUint32(b[16:], sp.Sum)
		h.Write(b[:])
	}
	return hex.EncodeToString(h.Sum(nil))
}

// keptDigests digests the messages a plan keeps verbatim.
func keptDigests(msgs []compact.Message, p *Plan) map[int]string {
	d := make(map[int]string, p.HeadEnd+len(p.Pinned)+len(msgs)-p.TailStart)
	for i := 0; i < p.HeadEnd; i++ {
		d[i] = digest(&msgs[i])
	}
	for _, i := range p.Pinned {
		d[i] = digest(&msgs[i])
	}
	for i := p.TailStart; i < len(msgs); i++ {
		d[i] = digest(&msgs[i])
	}
	return d
}

type orphanKey struct {
	kind   compact.OrphanKind
	callID string
	index  int // in the input
}

// checkResult verifies the invariants every output must hold: kept
// messages byte-identical to the input, no tool pair broken that the input
// had intact, exactly one handoff (none for prune) with one pair of
// markers, and no secret from the middle in it. Errors wrap
// ErrInvalidResult and never quote content.
func checkResult(in *compact.Transcript, out *compact.Transcript, origin []int, digests map[int]string,
	l *layout, handoffText string, sec *secrets, r *redact.Redactor) error {
	fail := func(format string, a ...any) error {
		return fmt.Errorf("%w: %s", ErrInvalidResult, fmt.Sprintf(format, a...))
	}
	if len(origin) != len(out.Messages) {
		return fail("%d messages but %d origins", len(out.Messages), len(origin))
	}
	handoffs := 0
	for i, o := range origin {
		m := &out.Messages[i]
		if o < 0 {
			handoffs++
			continue
		}
		if want, ok := digests[o]; ok && digest(m) != want {
			return fail("kept message %d (input %d, id %q) differs from the input", i, o, in.Messages[o].ID)
		}
		if handoffText != "" && l.summary[o] && !holdsOpaque(m) {
			// (A provider's opaque compaction cannot be folded: it stays.)
			return fail("message %d is an earlier summary left beside the new handoff", i)
		}
	}
	if want := boolInt(handoffText != ""); handoffs != want {
		return fail("%d handoff messages, want %d", handoffs, want)
	}
	known := make(map[orphanKey]bool, len(l.orphans))
	for _, o := range l.orphans {
		known[orphanKey{o.Kind, o.CallID, o.Index}] = true
	}
	for _, o := range out.Orphans() {
		src := origin[o.Index]
		if src < 0 || !known[orphanKey{o.Kind, o.CallID, src}] {
			return fail("message %d has a %s for call %q that the input had paired", o.Index, o.Kind, o.CallID)
		}
	}
	if handoffText == "" {
		return nil
	}
	if c := strings.Count(handoffText, compact.HandoffBegin); c != 1 {
		return fail("the handoff holds %d begin markers (nested handoff)", c)
	}
	if c := strings.Count(handoffText, "<<<compact:handoff-end"); c != 1 {
		return fail("the handoff holds %d end markers (nested handoff)", c)
	}
	if rule, ok := sec.find(handoffText); ok {
		return fail("the handoff holds a secret from the dropped middle (%s)", rule)
	}
	if _, found := r.Redact(handoffText); len(found) > 0 {
		return fail("the handoff holds %d unmasked secrets (%s)", len(found), found[0].Rule)
	}
	return nil
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// secrets are the secret values found in the dropped middle, longest
// first, with the rule that found each: what must never reach the handoff,
// a log line or an error, even if a summarizer reconstructs it.
type secrets struct {
	values []string
	rules  map[string]string
}

// secretValues collects the values behind the redactor's findings in
// window.
func secretValues(window []compact.Message, found []redact.Finding) *secrets {
	s := &secrets{rules: map[string]string{}}
	for _, f := range found {
		if f.Message < 0 || f.Message >= len(window) || f.Part < 0 || f.Part >= len(window[f.Message].Parts) {
			continue
		}
		p := &window[f.Message].Parts[f.Part]
		text := p.Text
		if f.Field == "arguments" {
			text = ""
			if p.ToolCall != nil {
				text = string(p.ToolCall.Arguments)
			}
		}
		if f.Start < 0 || f.End > len(text) || f.End-f.Start < 4 {
			continue
		}
		v := text[f.Start:f.End]
		if _, ok := s.rules[v]; !ok {
			s.values = append(s.values, v)
		}
		s.rules[v] = f.Rule
	}
	sort.Slice(s.values, func(i, j int) bool {
		a, b := s.values[i], s.values[j]
		if len(a) != len(b) {
			return len(a) > len(b)
		}
		return a < b
	})
	return s
}

// mask replaces every secret value in text by its mask.
func (s *secrets) mask(text string) string {
	if s == nil {
		return text
	}
	for _, v := range s.values {
		if strings.Contains(text, v) {
			text = strings.ReplaceAll(text, v, "[REDACTED:"+s.rules[v]+"]")
		}
	}
	return text
}

// find returns the rule of a secret value text holds.
func (s *secrets) find(text string) (string, bool) {
	if s == nil {
		return "", false
	}
	for _, v := range s.values {
		if strings.Contains(text, v) {
			return s.rules[v], true
		}
	}
	return "", false
}

// secureHandoff masks, in every field of h, the handoff markers (so
// handoffs never nest), the middle's secrets by value, and anything the
// redactor finds. It reports how many fields changed.
func secureHandoff(h compact.Handoff, sec *secrets, r *redact.Redactor) (compact.Handoff, int) {
	changed := 0
	clean := func(s string) string {
		orig := s
		s = r.String(sec.mask(compact.StripHandoffMarkers(s)))
		if s != orig {
			changed++
		}
		return s
	}
	list := func(items []string) []string {
		if len(items) == 0 {
			return items
		}
		out := make([]string, len(items))
		for i, it := range items {
			out[i] = clean(it)
		}
		return out
	}
	h.TaskSnapshot = clean(h.TaskSnapshot)
	h.Goal = clean(h.Goal)
	h.EarlierAsks = list(h.EarlierAsks)
	h.Constraints = list(h.Constraints)
	h.CompletedActions = list(h.CompletedActions)
	h.ActiveState = list(h.ActiveState)
	h.Blocked = list(h.Blocked)
	h.Decisions = list(h.Decisions)
	h.ErrorsAndFixes = list(h.ErrorsAndFixes)
	h.RelevantFiles = list(h.RelevantFiles)
	h.CriticalContext = list(h.CriticalContext)
	h.LastDroppedTurns = list(h.LastDroppedTurns)
	return h, changed
}
