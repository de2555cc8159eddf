package compactor

import (
	"bytes"
	"encoding/json"
	"fmt"
	"hash/maphash"
	"strings"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/internal/clip"
)

// Markers left where pruning removed something. They say what happened so
// a model (or a person) reading the result knows the text is incomplete.
const (
	duplicateMarker = "[compact: duplicate tool output omitted; the same output appears again later]"
	imageMarker     = "[compact: image omitted%s]"
	linesMarker     = "[... compact: %d lines omitted ...]"
)

// pruneStats counts what pruning did.
type pruneStats struct {
	Deduped, Shortened, Images int
	// Changed lists the indices (into the pruned slice) of changed messages.
	Changed []int
}

func (s pruneStats) total() int { return s.Deduped + s.Shortened + s.Images }

// outputPart reports whether part j of m holds a tool's output.
func outputPart(m *compact.Message, j int) bool {
	p := &m.Parts[j]
	switch p.Type {
	case compact.PartToolResult:
		return true
	case compact.PartText:
		return m.Role == compact.RoleTool || len(m.ToolCallIDs) > 0
	}
	return false
}

// prune returns msgs with identical tool outputs deduplicated (the latest
// copy kept), long outputs shortened to their first and last lines, and
// images replaced by a placeholder. msgs is not modified: changed messages
// are cloned, unchanged ones shared.
func (pc *PruneConfig) prune(msgs []compact.Message, count func(string) int) ([]compact.Message, pruneStats) {
	var st pruneStats
	out := make([]compact.Message, len(msgs))
	copy(out, msgs)
	latest := pc.latestCopies(msgs)
	seed := latest.seed
	for i := range out {
		cloned := false
		change := func() *compact.Message {
			if !cloned {
				out[i] = out[i].Clone()
				cloned = true
			}
			return &out[i]
		}
		m := &msgs[i]
		for j := range m.Parts {
			p := &m.Parts[j]
			if p.Type == compact.PartImage {
				desc := ""
				if p.Image != nil && p.Image.MediaType != "" {
					desc = " (" + p.Image.MediaType + ")"
				}
				change().Parts[j] = compact.Part{Type: compact.PartText, Text: fmt.Sprintf(imageMarker, desc)}
				st.Images++
				continue
			}
			if !outputPart(m, j) {
				continue
			}
			if len(p.Text) >= pc.MinDuplicateBytes {
				if last, ok := latest.at[maphash.String(seed, p.Text)]; ok && last != [2]int{i, j} &&
					msgs[last[0]].Parts[last[1]].Text == p.Text {
					change().Parts[j].Text = duplicateMarker
					st.Deduped++
					continue
				}
			}
			if short, ok := pc.shortenOutput(p.Text, count); ok {
				change().Parts[j].Text = short
				st.Shortened++
			}
		}
		if cloned {
			st.Changed = append(st.Changed, i)
		}
	}
	return out, st
}

type copies struct {
	seed maphash.Seed
	at   map[uint64][2]int // hash of an output -> (message, part) of its latest copy
}

func (pc *PruneConfig) latestCopies(msgs []compact.Message) copies {
	c := copies{seed: maphash.MakeSeed(), at: map[uint64][2]int{}}
	for i := range msgs {
		m := &msgs[i]
		for j := range m.Parts {
			if outputPart(m, j) && len(m.Parts[j].Text) >= pc.MinDuplicateBytes {
				c.at[maphash.String(c.seed, m.Parts[j].Text)] = [2]int{i, j}
			}
		}
	}
	return c
}

// shortenOutput shortens a tool output. An output that is a JSON document
// (Codex wraps every shell output in {"output": …, "metadata": …}) has its
// long string values shortened in place, so it stays valid JSON for the
// agent that reads it back; any other output is shortened as text.
func (pc *PruneConfig) shortenOutput(s string, count func(string) int) (string, bool) {
	if t := strings.TrimSpace(s); t != "" && (t[0] == '{' || t[0] == '[') && json.Valid([]byte(s)) {
		return pc.shortenJSON(s, count)
	}
	return pc.shorten(s, count)
}

// shortenJSON shortens each long string literal of the valid JSON text s,
// keeping every other byte.
func (pc *PruneConfig) shortenJSON(s string, count func(string) int) (string, bool) {
	var b strings.Builder
	prev, changed := 0, false
	for i := 0; i < len(s); i++ {
		if s[i] != '"' {
			continue
		}
		j := i + 1
		for s[j] != '"' { // s is valid JSON: every literal is closed
			if s[j] == '\\' {
				j++
			}
			j++
		}
		lit := s[i : j+1]
		i = j
		if len(lit) <= pc.MinTokens {
			continue
		}
		var v string
		if json.Unmarshal([]byte(lit), &v) != nil {
			continue
		}
		short, ok := pc.shorten(v, count)
		if !ok {
			continue
		}
		enc, err := marshalString(short)
		if err != nil {
			continue
		}
		b.WriteString(s[prev : j-len(lit)+1])
		b.WriteString(enc)
		prev, changed = j+1, true
	}
	if !changed {
		return s, false
	}
	b.WriteString(s[prev:])
	return b.String(), true
}

// marshalString encodes s as a JSON string without HTML escaping, as the
// agents' own files write their strings.
func marshalString(s string) (string, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(s); err != nil {
		return "", err
	}
	return strings.TrimSuffix(b.String(), "\n"), nil
}

// shorten cuts s to its first HeadLines and last TailLines lines with a
// marker between, then, if lines are so long that the result is still big,
// to its first and last bytes. ok is false when s is short enough already.
func (pc *PruneConfig) shorten(s string, count func(string) int) (string, bool) {
	// Every token holds at least one byte, so short strings need no count;
	// past the byte cap below, the output is cut whatever its count, so long
	// strings need none either. Only the sizes between are counted.
	maxBytes := 8 * pc.MinTokens
	if len(s) <= pc.MinTokens || len(s) <= maxBytes && count(s) <= pc.MinTokens {
		return s, false
	}
	out := s
	body, nl := strings.CutSuffix(s, "\n")
	if lines := strings.Count(body, "\n") + 1; lines > pc.HeadLines+pc.TailLines+1 {
		a := nthIndex(body, '\n', pc.HeadLines)
		b := lastNthIndex(body, '\n', pc.TailLines)
		out = body[:a+1] + fmt.Sprintf(linesMarker, lines-pc.HeadLines-pc.TailLines) + body[b:]
		if nl {
			out += "\n"
		}
	}
	if len(out) > maxBytes {
		out = clip.Ends(out, maxBytes, clip.BytesMarker)
	}
	return out, true
}

// nthIndex returns the index of the n-th (1-based) occurrence of c in s.
func nthIndex(s string, c byte, n int) int {
	i := -1
	for ; n > 0; n-- {
		k := strings.IndexByte(s[i+1:], c)
		if k < 0 {
			return len(s) - 1
		}
		i += k + 1
	}
	return i
}

// lastNthIndex returns the index of the n-th occurrence of c in s counting
// from the end.
func lastNthIndex(s string, c byte, n int) int {
	i := len(s)
	for ; n > 0; n-- {
		k := strings.LastIndexByte(s[:i], c)
		if k < 0 {
			return 0
		}
		i = k
	}
	return i
}
