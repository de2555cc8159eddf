package format

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/compactkit/compact"
)

// TestMiniSWEExitRole: the final "exit" message is a Synthetic user message
// named exit; changed, it is written back with role "exit" and its extra.
func TestMiniSWEExitRole(t *testing.T) {
	tr := readCorpus(t, "minisweagent_deepseek_chat_test_1-100_django__django-11099.traj.json")
	last := &tr.Messages[len(tr.Messages)-1]
	if last.Role != compact.RoleUser || last.Name != miniExitRole || !last.Synthetic || last.IsUserAsk() {
		t.Fatalf("exit message read as %+v", last.Role)
	}
	last.Parts[0].Text = "diff --git (shortened)"
	var out bytes.Buffer
	if err := Write(&out, tr, MiniSWEAgent); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Messages []map[string]json.RawMessage `json:"messages"`
	}
	if err := json.Unmarshal(out.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	m := doc.Messages[len(doc.Messages)-1]
	if string(m["role"]) != `"exit"` || string(m["content"]) != `"diff --git (shortened)"` || !bytes.Contains(m["extra"], []byte(`"Submitted"`)) {
		t.Errorf("exit written as role %s content %s", m["role"], m["content"])
	}
	back, err := Read(bytes.NewReader(out.Bytes()), "t", "")
	if err != nil || back.Messages[len(back.Messages)-1].Fingerprint() != last.Fingerprint() {
		t.Errorf("read back %v", err)
	}
}

func TestMiniSWEReasoning(t *testing.T) {
	tr := readCorpus(t, "minisweagent_deepseek_reasoner_dev_sqlfluff__sqlfluff-1733.traj.json")
	m := tr.Messages[2]
	if m.Role != compact.RoleAssistant || m.Parts[0].Type != compact.PartThinking || m.Parts[0].Text == "" || len(m.ToolCalls()) != 1 {
		t.Fatalf("assistant read as %+v", m.Parts)
	}
	// A changed assistant message keeps its reasoning and calls.
	m.Parts[0].Text = "shorter reasoning"
	tr.Messages[2] = m
	var out bytes.Buffer
	if err := Write(&out, tr, MiniSWEAgent); err != nil {
		t.Fatal(err)
	}
	back, err := Read(bytes.NewReader(out.Bytes()), "t", "")
	if err != nil || back.Messages[2].Fingerprint() != m.Fingerprint() {
		t.Errorf("read back %v: %+v", err, back.Messages[2].Parts)
	}
}

// TestMiniSWEBareList: a bare list is mini-swe-agent's only when something
// marks it so.
func TestMiniSWEBareList(t *testing.T) {
	marked := `[{"role":"system","content":"s"},{"role":"user","content":"u"},{"role":"assistant","content":"a","extra":{}},{"role":"exit","content":"done"}]`
	f, err := Detect([]byte(marked))
	if err != nil || f.Name != MiniSWEAgent {
		t.Fatalf("marked list detected as %v (%v)", f.Name, err)
	}
	plain := `[{"role":"system","content":"s"},{"role":"user","content":"u"},{"role":"assistant","content":"a"}]`
	if sniffMiniSWE([]byte(plain)) != 0 {
		t.Error("a plain list is claimed")
	}
	tr, err := Read(strings.NewReader(marked), "t", "")
	if err != nil || len(tr.Messages) != 4 {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := Write(&out, tr, MiniSWEAgent); err != nil || out.String() != marked {
		t.Errorf("bare list round trip: %v\n%s", err, out.String())
	}
}
