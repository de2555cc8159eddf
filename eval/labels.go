package eval

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"path"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/compactor"
	"github.com/compactkit/compact/fallback"
	"github.com/compactkit/compact/format"
)

// Labels is a labelled transcript, NAME.labels.json in the layout of the
// shared corpus's handoff/ folder: exact substrings a handoff of the
// transcript's middle should keep, the latest ask, secrets that must not
// leak. Only the fields scoring reads are here.
type Labels struct {
	Transcript     string `json:"transcript"`
	RecordSelector *struct {
		JSONLLine  int    `json:"jsonl_line"`
		InstanceID string `json:"instance_id"`
	} `json:"record_selector"`
	NRecords        int               `json:"n_records"`
	MiddleWindow    [2]int            `json:"middle_window"`
	LatestUserAsk   *string           `json:"latest_user_ask"`
	MustKeep        []string          `json:"must_keep"`
	MustKeepAt      map[string]int    `json:"must_keep_at"`
	MustKeepKind    map[string]string `json:"must_keep_kind"`
	Secrets         []string          `json:"secrets"`
	SecretSensitive map[string]string `json:"secret_sensitive"`
}

// LabelScore is one text scored against its labels, as score_handoff.py
// scores it.
type LabelScore struct {
	Present int     `json:"present"`
	Total   int     `json:"total"`
	Share   float64 `json:"share"`
	// The middle figures count only the items first seen inside the
	// labels' middle window, the stricter number.
	MiddlePresent int     `json:"middle_present"`
	MiddleTotal   int     `json:"middle_total"`
	MiddleShare   float64 `json:"middle_share"`
	// Ask says whether the latest ask is there verbatim; nil when the
	// labels have none, or (for a handoff of the window) when it was asked
	// outside the window.
	Ask   *bool `json:"latest_ask_verbatim"`
	Leaks int   `json:"secrets_leaked"`
	// Missing lists the items of the middle window the text lost.
	Missing []string `json:"missing,omitempty"`
	Chars   int      `json:"chars"`
}

// LabelResult scores one labelled transcript three ways: the handoff of
// exactly the labels' middle window, the whole compacted transcript, and
// the compacted transcript's handoff alone.
type LabelResult struct {
	Name        string     `json:"name"`
	Transcript  string     `json:"transcript"`
	Window      LabelScore `json:"window_handoff"`
	Compacted   LabelScore `json:"compacted_output"`
	CompactedHO LabelScore `json:"compacted_handoff"`
	// Dropped is the compaction's dropped range, of Messages.
	DroppedFrom int    `json:"dropped_from"`
	DroppedTo   int    `json:"dropped_to"`
	Messages    int    `json:"messages"`
	Error       string `json:"error,omitempty"`
	// WindowText and CompactedText are the window's rendered handoff and
	// the compaction's (not in JSON: see compact eval --handoffs).
	WindowText    string `json:"-"`
	CompactedText string `json:"-"`
}

// DefaultLabelWindow is the window a labelled transcript is compacted at
// when Options.Config sets none.
const DefaultLabelWindow = 32000

// WindowSummarizer writes the handoff of a window of messages, for the
// labelled measure of a summarizer alone.
type WindowSummarizer func(ctx context.Context, window []compact.Message) (compact.Handoff, error)

// Labelled scores one labelled transcript: labels is the content of its
// labels file, called name; the transcript it names is read from
// transcripts. summarize writes the handoff of the labels' middle window
// (nil: the deterministic fallback at its default budget).
func (e *Evaluator) Labelled(ctx context.Context, name string, labels []byte, transcripts fs.FS, summarize WindowSummarizer) LabelResult {
	res := LabelResult{Name: strings.TrimSuffix(path.Base(name), ".labels.json")}
	if summarize == nil {
		summarize = func(_ context.Context, w []compact.Message) (compact.Handoff, error) {
			return fallback.Build(w, fallback.Config{})
		}
	}
	data := labels
	var l Labels
	if err := json.Unmarshal(data, &l); err != nil {
		res.Error = fmt.Sprintf("%s: %v", name, err)
		return res
	}
	res.Transcript = l.Transcript
	lt, err := readLabelled(transcripts, l.Transcript, &l)
	if err != nil {
		res.Error = err.Error()
		return res
	}
	res.Messages = len(lt.t.Messages)

	h, err := summarize(ctx, lt.window)
	if err != nil {
		res.Error = fmt.Sprintf("handoff of the middle window: %v", err)
		return res
	}
	text := h.Message().Text()
	res.Window = ScoreLabels(&l, text)
	res.WindowText = h.Render()
	if !lt.askInWindow {
		res.Window.Ask = nil
	}

	out, err := e.compactLabelled(ctx, lt.t)
	if err != nil {
		res.Error = err.Error()
		return res
	}
	if out.Handoff == nil {
		res.Error = fmt.Sprintf("compacting left no handoff (%s: %s)", out.Record.Method, out.Record.Reason)
		return res
	}
	res.DroppedFrom, res.DroppedTo = out.Record.DroppedFrom, out.Record.DroppedTo
	whole, err := written(out.Transcript)
	if err != nil {
		res.Error = err.Error()
		return res
	}
	res.Compacted = ScoreLabels(&l, whole)
	res.CompactedText = out.Handoff.Render()
	res.CompactedHO = ScoreLabels(&l, res.CompactedText)
	return res
}

// compactLabelled compacts a labelled transcript as the options say, at
// DefaultLabelWindow unless they set a window.
func (e *Evaluator) compactLabelled(ctx context.Context, t compact.Transcript) (compactor.Result, error) {
	cfg := e.opts.Config
	if cfg.Window == 0 {
		cfg.Window = DefaultLabelWindow
	}
	c, err := compactor.New(withWindow(cfg, cfg.Window))
	if err != nil {
		return compactor.Result{}, err
	}
	out, err := c.Compact(ctx, t)
	if err == nil {
		err = fellBack(out)
	}
	if err != nil {
		return out, fmt.Errorf("compacting: %w", err)
	}
	return out, nil
}

// labelledTranscript is a labelled transcript read and placed against its
// labels' records.
type labelledTranscript struct {
	t compact.Transcript
	// window holds the messages whose first source record lies in the
	// labels' middle window.
	window      []compact.Message
	askInWindow bool
}

// readLabelled reads the labelled transcript (for an OpenHands evaluation
// output, the selected instance alone) and finds its middle window.
//
// The labels count records of the raw file (JSONL lines; elements of
// messages[] or history[]), while format.Read returns messages. Each
// message keeps the records it was read from, so a message is placed at
// the record its first source record equals (compared as compacted JSON,
// matching forward so that repeated identical records map in order).
func readLabelled(fsys fs.FS, file string, l *Labels) (labelledTranscript, error) {
	var lt labelledTranscript
	data, err := fs.ReadFile(fsys, file)
	if err != nil {
		return lt, err
	}
	raw := data
	if sel := l.RecordSelector; sel != nil {
		lines := nonEmptyLines(data)
		if sel.JSONLLine >= len(lines) {
			return lt, fmt.Errorf("%s: record_selector line %d beyond its %d lines", file, sel.JSONLLine, len(lines))
		}
		raw = lines[sel.JSONLLine]
		lt.t, err = format.ReadOpenHandsInstance(bytes.NewReader(data), file, sel.InstanceID)
		// The other instances ride along as records; scored with them, a
		// compacted file would hold what they hold.
		var keep []compact.Record
		for _, r := range lt.t.Records {
			if r.Type != "instance" {
				keep = append(keep, r)
			}
		}
		lt.t.Records = keep
	} else {
		lt.t, err = format.Read(bytes.NewReader(data), file, "")
	}
	if err != nil {
		return lt, err
	}
	records, err := rawRecords(raw, l.RecordSelector != nil)
	if err != nil {
		return lt, fmt.Errorf("%s: %w", file, err)
	}
	if len(records) != l.NRecords {
		return lt, fmt.Errorf("%s: %d records, the labels say %d", file, len(records), l.NRecords)
	}
	at := 0
	lo, hi := l.MiddleWindow[0], l.MiddleWindow[1]
	for i, m := range lt.t.Messages {
		if len(m.Source.Records) == 0 {
			return lt, fmt.Errorf("%s: message %d (%s) has no source records to place it", file, i, m.Role)
		}
		want := compactJSON(m.Source.Records[0])
		idx := -1
		for j := at; j < len(records); j++ {
			if bytes.Equal(records[j], want) {
				idx = j
				break
			}
		}
		if idx < 0 {
			return lt, fmt.Errorf("%s: message %d (%s): its first source record is no record of the file after record %d", file, i, m.Role, at)
		}
		at = idx + 1
		if idx >= lo && idx < hi {
			lt.window = append(lt.window, m)
			if l.LatestUserAsk != nil && strings.Contains(m.Text(), *l.LatestUserAsk) {
				lt.askInWindow = true
			}
		}
	}
	return lt, nil
}

func nonEmptyLines(data []byte) [][]byte {
	var out [][]byte
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 1<<20), 1<<30)
	for sc.Scan() {
		if len(bytes.TrimSpace(sc.Bytes())) > 0 {
			out = append(out, append([]byte(nil), sc.Bytes()...))
		}
	}
	return out
}

// rawRecords splits a transcript file into the records the labels count,
// each as compacted JSON.
func rawRecords(data []byte, instance bool) ([][]byte, error) {
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(data, &doc); err == nil {
		key := "messages"
		if _, ok := doc[key]; !ok || instance {
			key = "history"
		}
		var elems []json.RawMessage
		if err := json.Unmarshal(doc[key], &elems); err != nil {
			return nil, fmt.Errorf("%s[]: %w", key, err)
		}
		out := make([][]byte, len(elems))
		for i, e := range elems {
			out[i] = compactJSON(e)
		}
		return out, nil
	}
	lines := nonEmptyLines(data)
	for i, l := range lines {
		lines[i] = compactJSON(l)
	}
	return lines, nil
}

func compactJSON(b []byte) []byte {
	var buf bytes.Buffer
	if err := json.Compact(&buf, b); err != nil {
		return bytes.TrimSpace(b)
	}
	return buf.Bytes()
}

// ScoreLabels scores text against l as score_handoff.py does: an item is
// present when it occurs verbatim in the text (CRLF read as LF), in the
// text after one to three rounds of JSON unescaping, or in a string (or
// key) of JSON found in it, nested JSON strings decoded up to three deep; a
// secret leaks when it, or any 12-character run of its sensitive part, is
// present.
func ScoreLabels(l *Labels, text string) LabelScore {
	views := scoreViews(text)
	present := func(s string) bool {
		for _, v := range views {
			if strings.Contains(v, s) {
				return true
			}
		}
		return false
	}
	sc := LabelScore{Chars: utf8.RuneCountInString(strings.ReplaceAll(text, "\r\n", "\n"))}
	lo, hi := l.MiddleWindow[0], l.MiddleWindow[1]
	for _, k := range l.MustKeep {
		sc.Total++
		at, ok := l.MustKeepAt[k]
		mid := ok && at >= lo && at < hi
		if mid {
			sc.MiddleTotal++
		}
		switch {
		case present(k):
			sc.Present++
			if mid {
				sc.MiddlePresent++
			}
		case mid:
			sc.Missing = append(sc.Missing, k)
		}
	}
	sc.Share = share(sc.Present, sc.Total)
	sc.MiddleShare = share(sc.MiddlePresent, sc.MiddleTotal)
	if l.LatestUserAsk != nil {
		ok := present(*l.LatestUserAsk)
		sc.Ask = &ok
	}
	for _, secret := range l.Secrets {
		core := secret
		if c, ok := l.SecretSensitive[secret]; ok {
			core = c
		}
		if leaked(secret, core, present) {
			sc.Leaks++
		}
	}
	return sc
}

// leaked is the scorer's rule: the whole secret, or any run of 12
// characters of its sensitive core (the core itself when shorter).
func leaked(secret, core string, present func(string) bool) bool {
	if present(secret) {
		return true
	}
	r := []rune(core)
	const run = 12
	if len(r) < run {
		return present(core)
	}
	for i := 0; i+run <= len(r); i++ {
		if present(string(r[i : i+run])) {
			return true
		}
	}
	return false
}

// jsonEscape is compiled on first use, not at start-up.
var jsonEscape = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\\(u[0-9a-fA-F]{4}|["\\/bfnrt])`) })

var simpleEscapes = map[byte]string{'"': `"`, '\\': `\`, '/': "/", 'b': "\b", 'f': "\f", 'n': "\n", 'r': "\r", 't': "\t"}

// scoreViews returns the views of text the scorer searches.
func scoreViews(text string) []string {
	text = strings.ReplaceAll(text, "\r\n", "\n")
	views := []string{text}
	cur := text
	for range 3 {
		next := jsonEscape().ReplaceAllStringFunc(cur, func(m string) string {
			if m[1] == 'u' {
				n, _ := strconv.ParseUint(m[2:], 16, 32)
				return string(rune(n))
			}
			return simpleEscapes[m[1]]
		})
		if next == cur {
			break
		}
		views = append(views, next)
		cur = next
	}
	var strs []string
	if json.Valid([]byte(text)) {
		_ = labelStrings([]byte(text), 0, &strs)
	} else {
		for _, line := range strings.Split(text, "\n") {
			t := strings.TrimSpace(line)
			if t != "" && strings.ContainsRune("{[", rune(t[0])) && json.Valid([]byte(t)) {
				_ = labelStrings([]byte(t), 0, &strs)
			}
		}
	}
	if len(strs) > 0 {
		views = append(views, strings.Join(strs, "\n"))
	}
	return views
}

// labelStrings appends, in document order, every key and string value of
// the JSON value data, and the strings of JSON held in string values
// (while depth < 3).
func labelStrings(data []byte, depth int, out *[]string) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	return walkLabelStrings(dec, depth, out)
}

func walkLabelStrings(dec *json.Decoder, depth int, out *[]string) error {
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	switch v := tok.(type) {
	case string:
		*out = append(*out, v)
		t := strings.TrimSpace(v)
		if depth < 3 && t != "" && strings.ContainsRune("{[", rune(t[0])) && strings.ContainsRune("}]", rune(t[len(t)-1])) && json.Valid([]byte(t)) {
			_ = labelStrings([]byte(t), depth+1, out)
		}
	case json.Delim:
		for dec.More() {
			if v == '{' {
				k, err := dec.Token()
				if err != nil {
					return err
				}
				if ks, ok := k.(string); ok {
					*out = append(*out, ks)
				}
			}
			if err := walkLabelStrings(dec, depth, out); err != nil {
				return err
			}
		}
		_, err = dec.Token()
		return err
	}
	return nil
}

// LabelSummary averages labelled results over transcripts (a macro mean,
// each transcript weighing the same, as the corpus's README reports).
type LabelSummary struct {
	Transcripts int `json:"transcripts"`
	Errors      int `json:"errors"`
	// Mean middle shares of the window's handoff, of the compacted output
	// and of its handoff alone; Mean*All the shares over every item.
	WindowMiddle      float64 `json:"window_handoff_middle_share"`
	CompactedMiddle   float64 `json:"compacted_output_middle_share"`
	CompactedHOMiddle float64 `json:"compacted_handoff_middle_share"`
	WindowAll         float64 `json:"window_handoff_share"`
	CompactedAll      float64 `json:"compacted_output_share"`
	CompactedHOAll    float64 `json:"compacted_handoff_share"`
	// Asks counts the labelled latest asks (in the window, for the
	// window's handoff) and how many were kept verbatim.
	WindowAsks, WindowAsksKept       int `json:"-"`
	CompactedAsks, CompactedAsksKept int `json:"-"`
	Leaks                            int `json:"secrets_leaked"`
}

// SummarizeLabels averages results.
func SummarizeLabels(results []LabelResult) LabelSummary {
	var s LabelSummary
	n := 0
	for _, r := range results {
		s.Transcripts++
		if r.Error != "" {
			s.Errors++
			continue
		}
		n++
		s.WindowMiddle += r.Window.MiddleShare
		s.CompactedMiddle += r.Compacted.MiddleShare
		s.CompactedHOMiddle += r.CompactedHO.MiddleShare
		s.WindowAll += r.Window.Share
		s.CompactedAll += r.Compacted.Share
		s.CompactedHOAll += r.CompactedHO.Share
		if r.Window.Ask != nil {
			s.WindowAsks++
			if *r.Window.Ask {
				s.WindowAsksKept++
			}
		}
		if r.Compacted.Ask != nil {
			s.CompactedAsks++
			if *r.Compacted.Ask {
				s.CompactedAsksKept++
			}
		}
		s.Leaks += r.Window.Leaks + r.Compacted.Leaks
	}
	if n > 0 {
		for _, f := range []*float64{&s.WindowMiddle, &s.CompactedMiddle, &s.CompactedHOMiddle, &s.WindowAll, &s.CompactedAll, &s.CompactedHOAll} {
			*f = float64(int(*f/float64(n)*10000+0.5)) / 10000
		}
	}
	return s
}
