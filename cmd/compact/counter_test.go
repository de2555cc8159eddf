package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/compactkit/compact/internal/corpus"
)

// TestInspectAgreesWithIndependentCounter: for every real transcript of the
// shared corpus (transcripts/, wild/ and wild/entire/), compact inspect
// --json and an independent counter agree on the messages, their roles, the
// tool calls and the call ids results answer. The counter,
// format/testdata/expect.py, is a second implementation of the reading
// rules in Python's standard library, sharing nothing with the readers; it
// takes each file's format from the corpus's SOURCES.md, not from
// detection.
func TestInspectAgreesWithIndependentCounter(t *testing.T) {
	files := corpus.AllTranscripts(t)
	python, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 is not on PATH: the independent counter is a Python script")
	}
	root, err := corpus.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(python, append([]string{filepath.Join(root, "format", "testdata", "expect.py"), "--count"}, files...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("expect.py --count: %v\n%s", err, stderr.String())
	}
	type figures struct {
		File        string         `json:"file"`
		Error       string         `json:"error"`
		Messages    int            `json:"messages"`
		Roles       map[string]int `json:"roles"`
		ToolCalls   int            `json:"tool_calls"`
		ToolResults int            `json:"tool_results"`
	}
	want := map[string]figures{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var f figures
		if err := json.Unmarshal(sc.Bytes(), &f); err != nil {
			t.Fatalf("expect.py printed %q: %v", sc.Text(), err)
		}
		want[f.File] = f
	}
	if len(want) != len(files) {
		t.Fatalf("expect.py counted %d files of %d", len(want), len(files))
	}
	for _, file := range files {
		w := want[file]
		if w.Error != "" {
			t.Errorf("%s: the counter: %s", file, w.Error)
			continue
		}
		code, stdout, stderr := runCmd(t, "", nil, "inspect", "--json", file)
		if code != exitOK {
			t.Errorf("%s: inspect exit %d: %s", filepath.Base(file), code, stderr)
			continue
		}
		var g figures
		if err := json.Unmarshal([]byte(stdout), &g); err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		g.File = file
		if len(g.Roles) == 0 {
			g.Roles = nil
		}
		if len(w.Roles) == 0 {
			w.Roles = nil
		}
		if !reflect.DeepEqual(g, w) {
			t.Errorf("%s:\n inspect %+v\n counter %+v", filepath.Base(file), g, w)
		}
	}
	t.Logf("%d files agree", len(files))
}
