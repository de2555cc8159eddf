package fallback_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/compactor"
	"github.com/compactkit/compact/fallback"
	"github.com/compactkit/compact/format"
	"github.com/compactkit/compact/internal/corpus"
	"github.com/compactkit/compact/tokens"
)

// The retention goal is measured on the labelled real transcripts of the
// corpus (see its handoff/README.md). Run
//
//	go test ./fallback/ -run TestRetention -v
//
// to print per-transcript figures; -retention.out DIR also writes each
// handoff (and each compacted transcript) there, so score_handoff.py can
// be run on it by hand.
var (
	corpusFlag   = flag.String("corpus", "", "the corpus directory (holding handoff/ and transcripts/); default: the shared corpus, found by package internal/corpus")
	retentionOut = flag.String("retention.out", "", "write each labelled transcript's handoff to this directory")
)

// corpusPath returns the directory of part sub ("handoff", "transcripts")
// of the corpus: under -corpus when given, else in the shared corpus
// (skipping tb where it is missing, failing it under
// COMPACT_REQUIRE_CORPUS).
func corpusPath(tb testing.TB, sub string) string {
	tb.Helper()
	if *corpusFlag != "" {
		return filepath.Join(*corpusFlag, sub)
	}
	return corpus.Dir(tb, sub)
}

// labels is the part of a NAME.labels.json file the measurement reads.
type labels struct {
	Transcript     string `json:"transcript"`
	RecordSelector *struct {
		JSONLLine  int    `json:"jsonl_line"`
		InstanceID string `json:"instance_id"`
		Records    string `json:"records"`
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

// labelled is one labelled transcript, read and cut to its middle window.
type labelled struct {
	name   string
	labels labels
	// transcript is the whole labelled transcript (for OpenHands, the
	// selected instance).
	transcript compact.Transcript
	// window holds the messages whose first source record lies in the
	// labels' middle_window.
	window []compact.Message
	// askInWindow says whether the labelled latest ask was asked inside
	// the window (it can also sit in the head or the tail).
	askInWindow bool
	// head and tail are the raw records before and after the window, one
	// per line: what a compaction keeps verbatim around the handoff.
	head, tail string
}

// loadLabelled reads every labels file and its transcript. It skips the
// test when the corpus is not there, and fails it when the corpus is there
// without labels.
func loadLabelled(t testing.TB) []labelled {
	t.Helper()
	dir := corpusPath(t, corpus.Handoff)
	transcripts := corpusPath(t, corpus.Transcripts)
	files, _ := filepath.Glob(filepath.Join(dir, "*.labels.json"))
	if len(files) == 0 {
		t.Fatalf("no labelled transcripts (*.labels.json) in %s", dir)
	}
	sort.Strings(files)
	var out []labelled
	for _, f := range files {
		var l labels
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(data, &l); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		name := strings.TrimSuffix(filepath.Base(f), ".labels.json")
		tr, window, askIn, head, tail, err := middleWindow(transcripts, l)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		out = append(out, labelled{name: name, labels: l, transcript: tr, window: window, askInWindow: askIn, head: head, tail: tail})
	}
	return out
}

// middleWindow reads the labelled transcript with format.Read (for the
// OpenHands set, format.ReadOpenHandsInstance with the labels' instance)
// and returns it with the messages of its middle window.
//
// The labels count records of the raw file (JSONL lines for Codex and
// Claude Code; elements of messages[] or history[] for the JSON formats),
// while format.Read returns messages. Each message keeps the raw records it
// was read from in Source.Records, so a message is placed at the record
// its first Source.Records entry equals (compared as compacted JSON,
// matching forward so that repeated identical records map in order), and
// it belongs to the window when that record does.
func middleWindow(dir string, l labels) (tr compact.Transcript, window []compact.Message, askIn bool, head, tail string, err error) {
	path := filepath.Join(dir, l.Transcript)
	data, err := os.ReadFile(path)
	if err != nil {
		return tr, nil, false, "", "", err
	}
	raw := data
	if sel := l.RecordSelector; sel != nil {
		// One instance of a multi-instance JSONL file, fed on its own.
		lines := nonEmptyLines(data)
		if sel.JSONLLine >= len(lines) {
			return tr, nil, false, "", "", fmt.Errorf("record_selector line %d beyond %d lines", sel.JSONLLine, len(lines))
		}
		raw = lines[sel.JSONLLine]
		tr, err = format.ReadOpenHandsInstance(bytes.NewReader(data), l.Transcript, sel.InstanceID)
	} else {
		tr, err = format.Read(bytes.NewReader(data), l.Transcript, "")
	}
	if err != nil {
		return tr, nil, false, "", "", err
	}
	records, err := rawRecords(raw, l.RecordSelector != nil)
	if err != nil {
		return tr, nil, false, "", "", err
	}
	if len(records) != l.NRecords {
		return tr, nil, false, "", "", fmt.Errorf("%d records, labels say %d", len(records), l.NRecords)
	}
	at := 0 // next record to match
	lo, hi := l.MiddleWindow[0], l.MiddleWindow[1]
	head = string(bytes.Join(records[:lo], []byte("\n")))
	tail = string(bytes.Join(records[hi:], []byte("\n")))
	for i, m := range tr.Messages {
		if len(m.Source.Records) == 0 {
			return tr, nil, false, "", "", fmt.Errorf("message %d (%s) has no source records to place it", i, m.Role)
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
			return tr, nil, false, "", "", fmt.Errorf("message %d (%s): its first source record is not a record of the file after record %d", i, m.Role, at)
		}
		at = idx + 1
		if idx >= lo && idx < hi {
			window = append(window, m)
			if l.LatestUserAsk != nil && strings.Contains(m.Text(), *l.LatestUserAsk) {
				askIn = true
			}
		}
	}
	return tr, window, askIn, head, tail, nil
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

// score is the outcome of matching one handoff against its labels, as
// score_handoff.py computes it.
type score struct {
	present, total       int
	midPresent, midTotal int
	missingMid           []string
	askPresent           *bool
	leaks                int
}

func (s score) midShare() float64 {
	if s.midTotal == 0 {
		return 1
	}
	return float64(s.midPresent) / float64(s.midTotal)
}

// scoreHandoff ports score_handoff.py's matching: an item is present when
// it occurs verbatim in the text, in the text after one to three rounds of
// JSON unescaping, or in a string value of JSON found in it; a secret
// leaks when it, or any 12-byte run of its sensitive part, is present.
func scoreHandoff(l labels, text string) score {
	views := scoreViews(text)
	present := func(s string) bool {
		for _, v := range views {
			if strings.Contains(v, s) {
				return true
			}
		}
		return false
	}
	var sc score
	lo, hi := l.MiddleWindow[0], l.MiddleWindow[1]
	for _, k := range l.MustKeep {
		sc.total++
		at, ok := l.MustKeepAt[k]
		mid := ok && at >= lo && at < hi
		if mid {
			sc.midTotal++
		}
		if present(k) {
			sc.present++
			if mid {
				sc.midPresent++
			}
		} else if mid {
			sc.missingMid = append(sc.missingMid, k)
		}
	}
	if l.LatestUserAsk != nil {
		ok := present(*l.LatestUserAsk)
		sc.askPresent = &ok
	}
	for _, secret := range l.Secrets {
		core := secret
		if c, ok := l.SecretSensitive[secret]; ok {
			core = c
		}
		leaked := present(secret)
		for i := 0; !leaked && i+12 <= len(core); i++ {
			leaked = present(core[i : i+12])
		}
		if len(core) < 12 && !leaked {
			leaked = present(core)
		}
		if leaked {
			sc.leaks++
		}
	}
	return sc
}

var jsonEscape = regexp.MustCompile(`\\(u[0-9a-fA-F]{4}|["\\/bfnrt])`)

func scoreViews(text string) []string {
	text = strings.ReplaceAll(text, "\r\n", "\n")
	views := []string{text}
	cur := text
	for range 3 {
		next := jsonEscape.ReplaceAllStringFunc(cur, func(m string) string {
			if m[1] == 'u' {
				n, _ := strconv.ParseUint(m[2:], 16, 32)
				return string(rune(n))
			}
			return map[byte]string{'"': `"`, '\\': `\`, '/': "/", 'b': "\b", 'f': "\f", 'n': "\n", 'r': "\r", 't': "\t"}[m[1]]
		})
		if next == cur {
			break
		}
		views = append(views, next)
		cur = next
	}
	var strs []string
	var walk func(v any, depth int)
	walk = func(v any, depth int) {
		switch x := v.(type) {
		case string:
			strs = append(strs, x)
			if t := strings.TrimSpace(x); depth < 3 && t != "" && strings.ContainsRune("{[", rune(t[0])) {
				var inner any
				if json.Unmarshal([]byte(t), &inner) == nil {
					walk(inner, depth+1)
				}
			}
		case map[string]any:
			for k, e := range x {
				strs = append(strs, k)
				walk(e, depth)
			}
		case []any:
			for _, e := range x {
				walk(e, depth)
			}
		}
	}
	var doc any
	if json.Unmarshal([]byte(text), &doc) == nil {
		walk(doc, 0)
	} else {
		for _, line := range strings.Split(text, "\n") {
			if t := strings.TrimSpace(line); t != "" && strings.ContainsRune("{[", rune(t[0])) && json.Unmarshal([]byte(t), &doc) == nil {
				walk(doc, 0)
			}
		}
	}
	if len(strs) > 0 {
		views = append(views, strings.Join(strs, "\n"))
	}
	return views
}

// pythonScore runs the corpus's own scorer on a handoff file, when python3
// is installed, and returns its middle share.
func pythonScore(t *testing.T, labelsFile, handoffFile string) (float64, bool) {
	py, err := exec.LookPath("python3")
	if err != nil {
		return 0, false
	}
	out, err := exec.Command(py, filepath.Join(corpusPath(t, corpus.Handoff), "score_handoff.py"), labelsFile, handoffFile, "--quiet").Output()
	if err != nil {
		t.Logf("score_handoff.py: %v", err)
		return 0, false
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	var res struct {
		Mid   *float64 `json:"must_keep_middle_share"`
		Error string   `json:"error"`
	}
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &res); err != nil || res.Error != "" || res.Mid == nil {
		t.Logf("score_handoff.py: %s %v", res.Error, err)
		return 0, false
	}
	return *res.Mid, true
}

// TestRetention builds the default-budget handoff of each labelled
// transcript's middle window and scores it: the share of must_keep items
// first seen in the window that the handoff keeps (goal: ≥ 90% on
// average), the latest user ask verbatim where the window holds it, and no
// secret leaks. The figures are logged per transcript and cross-checked
// with score_handoff.py when python3 is available.
func TestRetention(t *testing.T) {
	sets := loadLabelled(t)
	outDir := *retentionOut
	if outDir == "" {
		outDir = t.TempDir()
	} else if err := os.MkdirAll(outDir, 0o755); err != nil {
		t.Fatal(err)
	}
	var sum float64
	for _, s := range sets {
		h, err := fallback.Build(s.window, fallback.Config{})
		if err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		text := h.Message().Text()
		file := filepath.Join(outDir, s.name+".handoff.md")
		if err := os.WriteFile(file, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		sc := scoreHandoff(s.labels, text)
		sum += sc.midShare()
		ask := "n/a (labels have none)"
		switch {
		case sc.askPresent == nil:
		case !s.askInWindow:
			ask = fmt.Sprintf("asked outside the window (present: %v)", *sc.askPresent)
		case *sc.askPresent:
			ask = "verbatim"
		default:
			ask = "MISSING"
			t.Errorf("%s: the latest user ask is in the window but not in the handoff", s.name)
		}
		t.Logf("%-36s middle %2d/%2d = %.3f  all %2d/%2d  ask %s  leaks %d  tokens %d", s.name,
			sc.midPresent, sc.midTotal, sc.midShare(), sc.present, sc.total, ask, sc.leaks, countTokens(h.Render()))
		// The compacted transcript keeps the head and tail verbatim around
		// the handoff: score that too (the latest ask often sits in the tail).
		whole := scoreHandoff(s.labels, s.head+"\n"+text+"\n"+s.tail)
		wholeAsk := "n/a"
		if whole.askPresent != nil {
			wholeAsk = fmt.Sprint(*whole.askPresent)
			if !*whole.askPresent {
				t.Errorf("%s: the latest user ask is missing from head + handoff + tail", s.name)
			}
		}
		t.Logf("%-36s with head and tail: all %2d/%2d = %.3f  ask present %s  leaks %d", "",
			whole.present, whole.total, float64(whole.present)/float64(whole.total), wholeAsk, whole.leaks)
		for _, m := range sc.missingMid {
			t.Logf("    missing [%s] %q", s.labels.MustKeepKind[m], m)
		}
		if sc.leaks > 0 {
			t.Errorf("%s: %d secrets leaked", s.name, sc.leaks)
		}
		labelsFile := filepath.Join(corpusPath(t, corpus.Handoff), s.name+".labels.json")
		if py, ok := pythonScore(t, labelsFile, file); ok && fmt.Sprintf("%.4f", py) != fmt.Sprintf("%.4f", sc.midShare()) {
			t.Errorf("%s: score_handoff.py says middle share %.4f, the Go port %.4f", s.name, py, sc.midShare())
		}
	}
	mean := sum / float64(len(sets))
	t.Logf("mean middle share %.3f over %d transcripts (goal ≥ 0.90)", mean, len(sets))
	if mean < retentionFloor {
		t.Errorf("mean middle share %.3f fell below %.2f", mean, retentionFloor)
	}
}

// retentionFloor guards against regressions: the mean measured when the
// extraction rules were last tuned, rounded down.
const retentionFloor = 0.91

func countTokens(s string) int {
	c, err := tokens.ForModel("gpt-4o")
	if err != nil {
		return -1
	}
	return c.Text(s)
}

// TestRetentionCompacted measures the same goal on what a user gets from
//
//	compact --summarizer fallback --force --window 32000 FILE
//
// for each labelled transcript: compactor.New with the fallback strategy,
// a 32,000-token window and Force, the result written back in its own
// format with format.Write. It logs, per transcript, the middle share of
// the whole compacted output (head + handoff + tail, the goal's figure)
// and of the handoff alone (the compactor drops more than the labels'
// middle window, so its handoff covers a longer stretch under the same
// budget).
func TestRetentionCompacted(t *testing.T) {
	sets := loadLabelled(t)
	cfg := compactor.DefaultConfig()
	cfg.Window, cfg.Force, cfg.Strategy = 32000, true, compactor.StrategyFallback
	c, err := compactor.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	var sumWhole, sumHandoff float64
	for _, s := range sets {
		res, err := c.Compact(context.Background(), s.transcript)
		if err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		if res.Handoff == nil {
			t.Fatalf("%s: no handoff (%s: %s)", s.name, res.Record.Method, res.Record.Reason)
		}
		var out bytes.Buffer
		if err := format.Write(&out, res.Transcript, format.Name(res.Transcript.Format)); err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		if *retentionOut != "" {
			if err := os.WriteFile(filepath.Join(*retentionOut, s.name+".compacted"), out.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(*retentionOut, s.name+".compacted.handoff.md"), []byte(res.Handoff.Render()), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		whole := scoreHandoff(s.labels, out.String())
		ho := scoreHandoff(s.labels, res.Handoff.Render())
		sumWhole += whole.midShare()
		sumHandoff += ho.midShare()
		ask := "n/a"
		if whole.askPresent != nil {
			ask = fmt.Sprint(*whole.askPresent)
			if !*whole.askPresent {
				t.Errorf("%s: the latest user ask is missing from the compacted transcript", s.name)
			}
		}
		t.Logf("%-36s output middle %2d/%2d = %.3f  handoff alone %2d/%2d = %.3f  ask %s  leaks %d  dropped messages %d-%d of %d",
			s.name, whole.midPresent, whole.midTotal, whole.midShare(), ho.midPresent, ho.midTotal, ho.midShare(), ask,
			whole.leaks, res.Record.DroppedFrom, res.Record.DroppedTo, len(s.transcript.Messages))
		for _, m := range whole.missingMid {
			t.Logf("    missing [%s] %q", s.labels.MustKeepKind[m], m)
		}
		if whole.leaks > 0 {
			t.Errorf("%s: %d secrets leaked", s.name, whole.leaks)
		}
	}
	n := float64(len(sets))
	t.Logf("mean middle share %.3f of the compacted output, %.3f of its handoff alone, over %d transcripts (goal ≥ 0.90)",
		sumWhole/n, sumHandoff/n, len(sets))
	if sumWhole/n < compactedFloor {
		t.Errorf("mean middle share of the compacted output %.3f fell below %.2f", sumWhole/n, compactedFloor)
	}
}

// compactedFloor guards TestRetentionCompacted against regressions: the
// mean measured when the extraction rules were last tuned, rounded down.
const compactedFloor = 0.95
