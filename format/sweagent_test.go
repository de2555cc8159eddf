package format

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"
)

// TestSWEAgentKeepsTheDocument: a compacted history goes back into the same
// document; trajectory, info and environment stay byte for byte.
func TestSWEAgentKeepsTheDocument(t *testing.T) {
	const file = "sweagent_marshmallow-1867_function_calling.traj"
	tr := readCorpus(t, file)
	if got := tr.Messages[3].ToolCallIDs; len(got) != 1 || got[0] != "call_cyI71DYnRdoLHWwtZgIaW2wr" {
		t.Errorf("tool_call_ids read as %v", got)
	}
	in, ok := compactForTest(&tr, 2, 4)
	if !ok {
		t.Fatal("nothing to compact")
	}
	out := checkCompacted(t, &in)
	var before, after map[string]json.RawMessage
	data, _ := readCorpusBytes(t, file)
	if err := json.Unmarshal(data, &before); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(out, &after); err != nil {
		t.Fatal(err)
	}
	for k, v := range before {
		if k != "history" && !bytes.Equal(v, after[k]) {
			t.Errorf("%s changed", k)
		}
	}
	var hist []map[string]any
	_ = json.Unmarshal(after["history"], &hist)
	if h := hist[2]; h["role"] != "user" || h["agent"] != "main" || h["message_type"] != "observation" || h["content"] != testHandoff.Text() {
		t.Errorf("handoff entry %v", h)
	}
}

func TestSWEAgentOldFormatAsks(t *testing.T) {
	tr := readCorpus(t, "sweagent_gpt4_pydicom-1458.traj")
	// demonstration, then the issue (the ask), then observations
	if !tr.Messages[1].Synthetic || tr.Messages[2].Synthetic || !tr.Messages[2].IsUserAsk() || !tr.Messages[4].Synthetic {
		t.Errorf("synthetic flags: %v %v %v", tr.Messages[1].Synthetic, tr.Messages[2].Synthetic, tr.Messages[4].Synthetic)
	}
	if len(tr.ToolGroups()) != 0 {
		t.Error("old trajectories carry no tool calls")
	}
}

func TestSWEAgentBadInput(t *testing.T) {
	const doc = `{"trajectory": [], "history": [{"role": "user", "content": "x"},, ]}`
	_, err := Read(strings.NewReader(doc), "run.traj", SWEAgent)
	var fe *Error
	// the offset is just past the stray comma
	if !errors.As(err, &fe) || fe.Offset != int64(strings.Index(doc, ",,")+2) || fe.Format != SWEAgent || !strings.Contains(fe.Msg, "expected a SWE-agent trajectory") {
		t.Fatalf("error %v (%#v)", err, fe)
	}
	_, err = Read(strings.NewReader(`{"trajectory": [], "info": {}}`), "run.traj", SWEAgent)
	if !errors.As(err, &fe) || !strings.Contains(fe.Msg, `"history"`) {
		t.Fatalf("error %v", err)
	}
}

func readCorpusBytes(t *testing.T, file string) ([]byte, error) {
	return os.ReadFile(corpusPath(t, file))
}
