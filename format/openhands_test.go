package format

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/compactkit/compact"
)

const ohEval = "openhands_multi_swe_bench_output.jsonl"

func TestOpenHandsInstances(t *testing.T) {
	data, err := readCorpusBytes(t, ohEval)
	if err != nil {
		t.Fatal(err)
	}
	all, err := ReadOpenHandsInstances(bytes.NewReader(data), ohEval)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, in := range all {
		ids = append(ids, in.ID)
		if len(in.Transcript.Records) > 0 && in.Transcript.Records[0].Type == ohInstance {
			t.Errorf("%s carries other instances", in.ID)
		}
	}
	if strings.Join(ids, ",") != "ponylang__ponyc-4595,ponylang__ponyc-4593,ponylang__ponyc-4588" || all[2].Line != 3 {
		t.Fatalf("instances %v", ids)
	}

	// The instance the handoff scorer uses, with the other two kept.
	tr, err := ReadOpenHandsInstance(bytes.NewReader(data), ohEval, "ponylang__ponyc-4588")
	if err != nil {
		t.Fatal(err)
	}
	if tr.Format != string(OpenHands) {
		t.Errorf("format %q", tr.Format)
	}
	if got, want := len(tr.Messages), len(all[2].Transcript.Messages); got != want || got == 0 {
		t.Fatalf("%d messages, want %d", got, want)
	}
	if o := tr.Orphans(); len(o) != 0 {
		t.Errorf("orphans %v", o)
	}
	in, ok := compactForTest(&tr, 4, 6)
	if !ok {
		t.Fatal("nothing to compact")
	}
	var out bytes.Buffer
	if err := Write(&out, in, OpenHands); err != nil {
		t.Fatal(err)
	}
	inLines := bytes.Split(bytes.TrimRight(data, "\n"), []byte{'\n'})
	outLines := bytes.Split(bytes.TrimRight(out.Bytes(), "\n"), []byte{'\n'})
	if len(outLines) != 3 || !bytes.Equal(outLines[0], inLines[0]) || !bytes.Equal(outLines[1], inLines[1]) || bytes.Equal(outLines[2], inLines[2]) {
		t.Fatalf("the other instances must be copied and the selected one rewritten")
	}
	back, err := ReadOpenHandsInstance(bytes.NewReader(out.Bytes()), "out", "ponylang__ponyc-4588")
	if err != nil {
		t.Fatal(err)
	}
	for i := range in.Messages {
		if back.Messages[i].Fingerprint() != in.Messages[i].Fingerprint() {
			t.Errorf("message %d differs", i)
		}
	}

	_, err = ReadOpenHandsInstance(bytes.NewReader(data), ohEval, "nope")
	if !errors.Is(err, ErrInstanceNotFound) || !strings.Contains(err.Error(), "ponylang__ponyc-4593") {
		t.Errorf("unknown instance: %v", err)
	}
}

// TestOpenHandsOldEvents: events without tool metadata still pair up, by
// cause or by kind.
func TestOpenHandsOldEvents(t *testing.T) {
	src := `[
  {"content": "fix it", "action": "message"},
  {"id": 5, "command": "ls", "thought": "look first", "action": "run"},
  {"id": 6, "cause": 5, "content": "a.go", "observation": "run"},
  {"code": "print(1)", "thought": "", "action": "run_ipython"},
  {"content": "1", "observation": "run_ipython"},
  {"outputs": {}, "thought": "done", "action": "finish"}
]`
	tr, err := Read(strings.NewReader(src), "traj.json", "")
	if err != nil || tr.Format != string(OpenHands) {
		t.Fatal(err, tr.Format)
	}
	var got []string
	for _, m := range tr.Messages {
		s := string(m.Role)
		for _, c := range m.ToolCalls() {
			s += " call " + c.ID + " " + string(c.Arguments)
		}
		for _, id := range m.ResultIDs() {
			s += " answers " + id
		}
		got = append(got, s)
	}
	// An event with no id has a call id from its bytes, not its place, so
	// dropping events before it (a compaction) does not rename it.
	hashed := regexp.MustCompile(`oh-[0-9a-f]{12}`)
	want := []string{"user", `assistant call oh-5 {"command":"ls"}`, "tool answers oh-5", `assistant call oh-<hash> {"code":"print(1)"}`, "tool answers oh-<hash>", "assistant"}
	if g := hashed.ReplaceAllString(strings.Join(got, "|"), "oh-<hash>"); g != strings.Join(want, "|") {
		t.Errorf("read\n%q\nwant\n%q", got, want)
	}
	later, err := Read(strings.NewReader(strings.Replace(src, `{"content": "fix it", "action": "message"},`, "", 1)), "traj.json", "")
	if err != nil || len(later.Messages) != len(tr.Messages)-1 {
		t.Fatal(err, len(later.Messages))
	}
	if a, b := tr.Messages[3].ToolCalls()[0].ID, later.Messages[2].ToolCalls()[0].ID; a != b {
		t.Errorf("the call of an event with no id is %s, and %s with an event before it dropped", a, b)
	}
	if len(tr.Orphans()) != 0 {
		t.Errorf("orphans %v", tr.Orphans())
	}
}

// TestOpenHandsChangedObservation: pruning a tool output rewrites that
// event's content only.
func TestOpenHandsChangedObservation(t *testing.T) {
	const file = "openhands_traj_basic_gui_mode.json"
	data, _ := readCorpusBytes(t, file)
	tr := readCorpus(t, file)
	idx := -1
	for i, m := range tr.Messages {
		if m.Role == compact.RoleTool {
			idx = i
			break
		}
	}
	tr.Messages[idx].Parts[0].Text = "[pruned]"
	var out bytes.Buffer
	if err := Write(&out, tr, OpenHands); err != nil {
		t.Fatal(err)
	}
	back, err := Read(bytes.NewReader(out.Bytes()), file, "")
	if err != nil {
		t.Fatal(err)
	}
	for i := range tr.Messages {
		if back.Messages[i].Fingerprint() != tr.Messages[i].Fingerprint() {
			t.Errorf("message %d differs", i)
		}
		if i != idx && !bytes.Contains(out.Bytes(), tr.Messages[i].Source.Records[0]) {
			t.Errorf("message %d not kept verbatim", i)
		}
	}
	if bytes.Equal(out.Bytes(), data) {
		t.Error("nothing changed")
	}
}

// TestReadOpenHandsInstanceCorpus: an evaluation-output file holds one
// benchmark instance per line; ReadOpenHandsInstance picks one by its
// instance_id. The other lines ride along as records, so writing the
// transcript back rewrites that instance and copies the rest. (It was an
// Example, which cannot skip where the shared corpus is missing.)
func TestReadOpenHandsInstanceCorpus(t *testing.T) {
	f, err := os.Open(corpusPath(t, "openhands_multi_swe_bench_output.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tr, err := ReadOpenHandsInstance(f, "output.jsonl", "ponylang__ponyc-4588")
	if err != nil {
		t.Fatal(err)
	}
	others := 0
	for _, r := range tr.Records {
		if r.Type == "instance" {
			others++
		}
	}
	got := fmt.Sprint(tr.Format, " ", len(tr.Messages), " messages, ", len(tr.ToolGroups()), " tool groups, ", others, " other instances kept")
	if want := "openhands 102 messages, 49 tool groups, 2 other instances kept"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

// TestOpenHandsErrorObservationFailed: an error observation that answers
// no call (the harness could not run the action) is a harness message
// tagged Failed, so the layers above see a failure without knowing
// OpenHands; a plain observation of the same shape is not.
func TestOpenHandsErrorObservationFailed(t *testing.T) {
	src := `[
  {"content": "fix it", "action": "message"},
  {"id": 7, "content": "Allowed values for 'mode': fast, safe.", "observation": "error", "source": "agent"},
  {"id": 8, "content": "Agent state changed to running.", "observation": "agent_state_note", "source": "agent"}
]`
	tr, err := Read(strings.NewReader(src), "traj.json", "")
	if err != nil {
		t.Fatal(err)
	}
	if len(tr.Messages) != 3 {
		t.Fatalf("read %d messages, want 3", len(tr.Messages))
	}
	for i, want := range []bool{true, false} {
		m := tr.Messages[i+1]
		if !m.Synthetic || m.Role != compact.RoleUser || m.Parts[0].Failed != want {
			t.Errorf("message %d: synthetic %v role %s failed %v, want a harness message failed %v", i+1, m.Synthetic, m.Role, m.Parts[0].Failed, want)
		}
	}
}
