package format

import (
	"slices"
	"strings"
	"testing"
)

func TestPatchOf(t *testing.T) {
	// Codex apply_patch, invented: every header, a hunk, diff headers that
	// are not changed lines, a blank added line.
	text := `apply_patch <<'EOF'
*** Begin Patch
*** Add File: docs/kettle.md
+# Kettle
+
*** Update File: src/kettle.rs
@@ fn boil
--- a/src/kettle.rs
+++ b/src/kettle.rs
-    heat(40)
+    heat(100)
*** Move to: src/boiler.rs
*** Delete File: src/old_kettle.rs
*** End Patch
EOF`
	p, ok := PatchOf(text)
	if !ok {
		t.Fatal("not read as a patch")
	}
	wantFiles := []FileEdit{
		{"docs/kettle.md", FileCreated},
		{"src/kettle.rs", FileChanged},
		{"src/boiler.rs", FileCreated},
		{"src/old_kettle.rs", FileDeleted},
	}
	if !slices.Equal(p.Files, wantFiles) {
		t.Errorf("Files = %v, want %v", p.Files, wantFiles)
	}
	if want := []string{"# Kettle", "", "heat(100)"}; !slices.Equal(p.Added, want) {
		t.Errorf("Added = %q, want %q", p.Added, want)
	}
	if want := []string{"heat(40)"}; !slices.Equal(p.Removed, want) {
		t.Errorf("Removed = %q, want %q", p.Removed, want)
	}
}

func TestPatchOfNotAPatch(t *testing.T) {
	// A plain unified diff has "+" lines but no envelope: not an edit this
	// table knows.
	for _, text := range []string{"", "git diff\n+added\n-removed", "*** Update File: x.go"} {
		if p, ok := PatchOf(text); ok || p.Files != nil || p.Added != nil {
			t.Errorf("PatchOf(%q) = %v, %v; want nothing", text, p, ok)
		}
	}
	// The envelope with no file header is a patch touching no file.
	p, ok := PatchOf("*** Begin Patch\n*** End Patch")
	if !ok || len(p.Files) != 0 {
		t.Errorf("empty envelope: %v, %v", p, ok)
	}
}

func TestLineEditOf(t *testing.T) {
	// SWE-agent's line editor, invented.
	lines, ok := LineEditOf("  edit 7:8\n    return celsius * 9 / 5 + 32\n    # fahrenheit\nend_of_edit\n")
	if !ok {
		t.Fatal("not read as a line edit")
	}
	if want := []string{"    return celsius * 9 / 5 + 32", "    # fahrenheit", ""}; !slices.Equal(lines, want) {
		t.Errorf("lines = %q, want %q", lines, want)
	}
	if lines, ok := LineEditOf("edit 12\nx = 1\nend_of_edit"); !ok || !slices.Equal(lines, []string{"x = 1", ""}) {
		t.Errorf("single line: %q, %v", lines, ok)
	}
	for _, cmd := range []string{
		"edit 7:8",                      // no body
		"edit notes.md\nx\nend_of_edit", // not a range
		"edit 7:b\nx\nend_of_edit",
		"vim_edit 7:8\nx\nend_of_edit",
		"git commit -m 'edit 7:8'\nmore",
	} {
		if lines, ok := LineEditOf(cmd); ok {
			t.Errorf("LineEditOf(%q) = %q, want not an edit", cmd, lines)
		}
	}
}

func TestOpenFileOf(t *testing.T) {
	// SWE-agent's editor answer, invented.
	p, ok := OpenFileOf("[File: /srv/kettle/temp.py (31 lines total)]\n(1 more lines above)\n7:    return 1")
	if !ok || p != "/srv/kettle/temp.py" {
		t.Errorf("OpenFileOf = %q, %v", p, ok)
	}
	for _, res := range []string{"", "File updated.", "[File: no-count]", "[File:  (3 lines)]"} {
		if p, ok := OpenFileOf(res); ok {
			t.Errorf("OpenFileOf(%q) = %q, want none", res, p)
		}
	}
}

func TestEditorOp(t *testing.T) {
	for sub, want := range map[string]FileOp{
		// str_replace_editor (OpenHands, SWE-agent, Anthropic's text editor)
		"view": FileRead, "create": FileCreated, "str_replace": FileChanged,
		"insert": FileChanged, "undo_edit": FileChanged,
		// other editor tools' verbs, any case
		"Read": FileRead, "WRITE": FileCreated, "append": FileChanged, "rm": FileDeleted,
		// unknown
		"": FileUnknown, "summon": FileUnknown, "ls -la": FileUnknown,
	} {
		if got := EditorOp(sub); got != want {
			t.Errorf("EditorOp(%q) = %d, want %d", sub, got, want)
		}
	}
}

func TestListingBanner(t *testing.T) {
	if !ListingBanner("Here's the result of running `cat -n` on /srv/kettle/temp.py:") {
		t.Error("str_replace_editor's view banner not recognised")
	}
	for _, line := range []string{"", "cat -n temp.py", "     1\timport os", "result of running ls"} {
		if ListingBanner(line) {
			t.Errorf("ListingBanner(%q) = true", line)
		}
	}
}

func FuzzEdits(f *testing.F) {
	f.Add("*** Begin Patch\n*** Update File: a.go\n-x\n+y\n*** End Patch")
	f.Add("edit 1:2\nfoo\nend_of_edit")
	f.Add("[File: /a.py (2 lines total)]")
	f.Fuzz(func(t *testing.T, s string) {
		if p, ok := PatchOf(s); ok {
			for _, e := range p.Files {
				if e.Op == FileUnknown || e.Op == FileRead {
					t.Fatalf("patch file %q op %d", e.Path, e.Op)
				}
			}
		}
		_, _ = LineEditOf(s)
		if p, ok := OpenFileOf(s); ok && p == "" {
			t.Fatal("empty open file")
		}
		_ = EditorOp(s)
		_ = ListingBanner(s)
	})
}

func TestLineNumberMark(t *testing.T) {
	for _, c := range []struct {
		in   string
		want int
	}{
		{"→	return celsius", len("→")}, // Claude Code's Read tool, after "    12"
		{"→", len("→")},
		{"\treturn celsius", 0}, // cat -n: no agent's mark
		{": return celsius", 0},
		{"", 0},
		{" →x", 0},
	} {
		if got := LineNumberMark(c.in); got != c.want {
			t.Errorf("LineNumberMark(%q) = %d, want %d", c.in, got, c.want)
		}
	}
}

func TestShellCommandOf(t *testing.T) {
	for _, c := range []struct {
		prog string
		want ShellCommand
		ok   bool
	}{
		{"open", ShellCommand{Op: FileRead, FirstOnly: true, Shows: true}, true}, // open src/kettle.py 40
		{"create", ShellCommand{Op: FileCreated}, true},                          // create notes/plan.md
		{"scroll_down", ShellCommand{Shows: true}, true},
		{"search_dir", ShellCommand{Shows: true}, true}, // search_dir boil src
		{"find_file", ShellCommand{Shows: true}, true},
		{"cat", ShellCommand{}, false}, // a shell program, no agent's
		{"Open", ShellCommand{}, false},
		{"", ShellCommand{}, false},
	} {
		got, ok := ShellCommandOf(c.prog)
		if got != c.want || ok != c.ok {
			t.Errorf("ShellCommandOf(%q) = %+v, %v; want %+v, %v", c.prog, got, ok, c.want, c.ok)
		}
	}
}

func TestSplitIDEAsk(t *testing.T) {
	wrapped := "# Context from my IDE setup:\n## Open tabs:\n- kettle.rs\n## My request for Codex:\nmake boil() stop at 100"
	ide, ask, ok := SplitIDEAsk(wrapped)
	if !ok || ide != "# Context from my IDE setup:\n## Open tabs:\n- kettle.rs\n" || ask != "\nmake boil() stop at 100" {
		t.Errorf("SplitIDEAsk(wrapped) = %q, %q, %v", ide, ask, ok)
	}
	// The last marker wins: an earlier one is part of the context.
	twice := "## My request for Codex:\nold ask\n## My request for Codex:\nnew ask"
	if ide, ask, ok := SplitIDEAsk(twice); !ok || ide != "## My request for Codex:\nold ask\n" || ask != "\nnew ask" {
		t.Errorf("SplitIDEAsk(twice) = %q, %q, %v", ide, ask, ok)
	}
	if ide, ask, ok := SplitIDEAsk("make boil() stop at 100"); ok || ide != "" || ask != "" {
		t.Errorf("SplitIDEAsk(plain) = %q, %q, %v; want no marker", ide, ask, ok)
	}
}

func TestInterruption(t *testing.T) {
	for _, c := range []struct {
		in   string
		want bool
	}{
		{"[Request interrupted by user]", true}, // Claude Code
		{"  [Request interrupted by user for tool use]\n", true},
		{"[Request interrupted by user] and then I said stop", false},
		{"[Request interrupted by user" + strings.Repeat(" and more", 10) + "]", false}, // too long for a note
		{"please stop, [Request interrupted by user]", false},
		{"", false},
	} {
		if got := Interruption(c.in); got != c.want {
			t.Errorf("Interruption(%q) = %v, want %v", c.in, got, c.want)
		}
	}
}
