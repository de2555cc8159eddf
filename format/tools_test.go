package format

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/compactkit/compact"
)

// tagCase is one call and the tags it must get.
type tagCase struct {
	name, args string
	kind       compact.ToolKind
	target     string
}

// testTable checks each case against table (then genericTools, as the
// readers do), and that every row of the table has a case: a row nobody
// tested is a convention nobody checked.
func testTable(t *testing.T, table toolTable, cases []tagCase) {
	t.Helper()
	seen := map[string]bool{}
	for _, c := range cases {
		call := &compact.ToolCall{Name: c.name, Arguments: json.RawMessage(c.args)}
		_, kind, target := callTag(call, []toolTable{table, genericTools})
		if kind != c.kind || target != c.target {
			t.Errorf("%s %s: %s %q, want %s %q", c.name, c.args, kind, target, c.kind, c.target)
		}
		for k := range table {
			if p, ok := strings.CutSuffix(k, "*"); k == c.name || ok && strings.HasPrefix(c.name, p) {
				seen[k] = true
			}
		}
	}
	for k := range table {
		if !seen[k] {
			t.Errorf("row %q has no case", k)
		}
	}
}

func TestClaudeCodeTools(t *testing.T) {
	testTable(t, claudeCodeTools, []tagCase{
		{"Bash", `{"command":"go test ./...","description":"Run tests"}`, compact.ToolShell, "go test ./..."},
		{"Bash", `{"command":"cat go.mod"}`, compact.ToolRead, "go.mod"},
		{"Bash", `{"command":"cd /w && grep -rn 'func main' --include=*.go ."}`, compact.ToolSearch, "func main"},
		{"Bash", `{"command":"ls -la src/"}`, compact.ToolList, "src/"},
		{"Bash", `{"command":"cat > notes.md <<'EOF'\n# Notes\n$(x) | y && z\nEOF"}`, compact.ToolWrite, "notes.md"},
		{"BashOutput", `{"bash_id":"bash_1"}`, compact.ToolShell, "bash_1"},
		{"KillShell", `{"shell_id":"bash_1"}`, compact.ToolShell, "bash_1"},
		{"KillBash", `{"shell_id":"bash_2"}`, compact.ToolShell, "bash_2"},
		{"Read", `{"file_path":"/w/a.go","offset":10}`, compact.ToolRead, "/w/a.go"},
		{"NotebookRead", `{"notebook_path":"/w/n.ipynb"}`, compact.ToolRead, "/w/n.ipynb"},
		{"Write", `{"file_path":"/w/b.go","content":"package b"}`, compact.ToolWrite, "/w/b.go"},
		{"Edit", `{"file_path":"/w/a.go","old_string":"x","new_string":"y"}`, compact.ToolWrite, "/w/a.go"},
		{"MultiEdit", `{"file_path":"/w/a.go","edits":[]}`, compact.ToolWrite, "/w/a.go"},
		{"NotebookEdit", `{"notebook_path":"/w/n.ipynb","new_source":"x"}`, compact.ToolWrite, "/w/n.ipynb"},
		{"Glob", `{"pattern":"**/*.go"}`, compact.ToolSearch, "**/*.go"},
		{"Grep", `{"pattern":"TODO","path":"/w"}`, compact.ToolSearch, "TODO"},
		{"LS", `{"path":"/w"}`, compact.ToolList, "/w"},
		{"WebFetch", `{"url":"https://go.dev/doc","prompt":"summarise"}`, compact.ToolWeb, "https://go.dev/doc"},
		{"WebSearch", `{"query":"go 1.26 release notes"}`, compact.ToolWeb, "go 1.26 release notes"},
		{"TodoWrite", `{"todos":[{"content":"x","status":"pending"}]}`, compact.ToolPlan, ""},
		{"TodoRead", `{}`, compact.ToolPlan, ""},
		{"TaskCreate", `{"subject":"Fix the pager","description":"…"}`, compact.ToolPlan, "Fix the pager"},
		{"TaskUpdate", `{"taskId":"1","status":"in_progress"}`, compact.ToolPlan, "1"},
		{"TaskList", `{}`, compact.ToolPlan, ""},
		{"TaskGet", `{"taskId":"2"}`, compact.ToolPlan, "2"},
		{"TaskOutput", `{"task_id":"t1"}`, compact.ToolOther, "t1"},
		{"TaskStop", `{"taskId":"task-abc"}`, compact.ToolOther, "task-abc"},
		{"Task", `{"description":"Review branch","prompt":"…","subagent_type":"general-purpose"}`, compact.ToolAgent, "Review branch"},
		{"Agent", `{"description":"Explore","prompt":"…"}`, compact.ToolAgent, "Explore"},
		{"ExitPlanMode", `{"plan":"1. do x"}`, compact.ToolPlan, "1. do x"},
		{"EnterPlanMode", `{}`, compact.ToolPlan, ""},
		{"AskUserQuestion", `{"questions":[{"question":"Where?"}]}`, compact.ToolOther, ""},
		{"Skill", `{"skill":"github-pr-review","args":"342"}`, compact.ToolOther, "github-pr-review"},
		{"SlashCommand", `{"command":"/review"}`, compact.ToolOther, "/review"},
		{"ListMcpResourcesTool", `{"server":"ctx"}`, compact.ToolOther, "ctx"},
		{"ReadMcpResourceTool", `{"server":"ctx","uri":"file:///a"}`, compact.ToolRead, "file:///a"},
		{"mcp__ide__getDiagnostics", `{"uri":"file:///w/a.go"}`, compact.ToolOther, "file:///w/a.go"},
		{"FailingTool", `{"test_param":"x"}`, compact.ToolOther, ""},
	})
}

func TestCodexTools(t *testing.T) {
	testTable(t, codexTools, []tagCase{
		{"shell", `{"command":["bash","-lc","rg -n \"TeamSheet\" apps"],"workdir":"/w"}`, compact.ToolSearch, "TeamSheet"},
		{"shell", `{"command":["bash","-lc","sed -n '1,200p' src/app.ts"]}`, compact.ToolRead, "src/app.ts"},
		{"shell", `{"command":["bash","-lc","npm test"]}`, compact.ToolShell, "npm test"},
		{"shell", `{"command":["ls","-la"]}`, compact.ToolList, "ls -la"},
		{"shell", `{"command":["bash","-lc","apply_patch <<'EOF'\n*** Begin Patch\n*** Update File: go.mod\n@@\n-a\n+b\n*** End Patch\nEOF"]}`, compact.ToolWrite, "go.mod"},
		{"container.exec", `{"cmd":["bash","-lc","make"]}`, compact.ToolShell, "make"},
		{"local_shell", `{"type":"exec","command":["bash","-lc","cat README.md"]}`, compact.ToolRead, "README.md"},
		{"shell_command", `{"command":"git status"}`, compact.ToolShell, "git status"},
		{"exec_command", `{"cmd":"rg --files | head","workdir":"/w"}`, compact.ToolSearch, "--files | head"[:0] + "rg --files | head"},
		{"write_stdin", `{"session_id":7,"chars":"q"}`, compact.ToolShell, ""},
		{"exec", `"await tools.apply_patch(patchText);"`, compact.ToolShell, "await tools.apply_patch(patchText);"},
		{"apply_patch", `"*** Begin Patch\n*** Add File: docs/NOTES.md\n+hi\n*** End Patch"`, compact.ToolWrite, "docs/NOTES.md"},
		{"apply_patch", `{"input":"*** Begin Patch\n*** Delete File: old.txt\n*** End Patch"}`, compact.ToolWrite, "old.txt"},
		{"update_plan", `{"plan":[{"step":"x","status":"pending"}]}`, compact.ToolPlan, ""},
		{"view_image", `{"path":"shot.png"}`, compact.ToolRead, "shot.png"},
		{"web_search", `{"query":"codex rollout format"}`, compact.ToolWeb, "codex rollout format"},
		{"read_file", `{"file_path":"a.go","offset":1}`, compact.ToolRead, "a.go"},
		{"list_dir", `{"dir_path":"src"}`, compact.ToolList, "src"},
		{"grep_files", `{"pattern":"TODO","path":"."}`, compact.ToolSearch, "TODO"},
		{"spawn_agent", `{"message":"review the diff"}`, compact.ToolAgent, "review the diff"},
		{"send_input", `{"id":"a1","message":"continue"}`, compact.ToolAgent, "continue"},
		{"wait", `{"ids":["a1"]}`, compact.ToolAgent, "a1"},
		{"close_agent", `{"id":"a1"}`, compact.ToolAgent, "a1"},
	})
}

func TestGeminiTools(t *testing.T) {
	testTable(t, geminiTools, []tagCase{
		{"run_shell_command", `{"command":"git status","description":"status"}`, compact.ToolShell, "git status"},
		{"run_shell_command", `{"command":"ls docs/blue.md"}`, compact.ToolList, "docs/blue.md"},
		{"read_file", `{"absolute_path":"/w/main.py"}`, compact.ToolRead, "/w/main.py"},
		{"read_many_files", `{"paths":["a.md","b.md"]}`, compact.ToolRead, "a.md"},
		{"write_file", `{"file_path":"docs/blue.md","content":"x"}`, compact.ToolWrite, "docs/blue.md"},
		{"replace", `{"file_path":"/tmp/c.txt","old_string":"a","new_string":"b"}`, compact.ToolWrite, "/tmp/c.txt"},
		{"edit", `{"file_path":"/tmp/c.txt"}`, compact.ToolWrite, "/tmp/c.txt"},
		{"glob", `{"pattern":"**/*.ts"}`, compact.ToolSearch, "**/*.ts"},
		{"search_file_content", `{"pattern":"useState"}`, compact.ToolSearch, "useState"},
		{"grep", `{"pattern":"useEffect","path":"src"}`, compact.ToolSearch, "useEffect"},
		{"list_directory", `{"path":"/w/"}`, compact.ToolList, "/w/"},
		{"ls", `{"dir_path":"src"}`, compact.ToolList, "src"},
		{"web_fetch", `{"prompt":"Summarise https://example.com/docs and list the tools"}`, compact.ToolWeb, "https://example.com/docs"},
		{"google_web_search", `{"query":"restrictedpy"}`, compact.ToolWeb, "restrictedpy"},
		{"save_memory", `{"fact":"prefers tabs"}`, compact.ToolOther, "prefers tabs"},
		{"write_todos", `{"todos":[]}`, compact.ToolPlan, ""},
		{"codebase_investigator", `{"objective":"find the auth flow"}`, compact.ToolAgent, "find the auth flow"},
		{"delegate_to_agent", `{"agent":"reviewer"}`, compact.ToolAgent, "reviewer"},
	})
}

func TestOpenHandsTools(t *testing.T) {
	testTable(t, openHandsTools, []tagCase{
		{"run", `{"command":"touch LICENSE"}`, compact.ToolWrite, "LICENSE"},
		{"run_ipython", `{"code":"print(1)"}`, compact.ToolShell, "print(1)"},
		{"read", `{"path":"/workspace/a.py"}`, compact.ToolRead, "/workspace/a.py"},
		{"write", `{"path":"/workspace/b.py","content":"x"}`, compact.ToolWrite, "/workspace/b.py"},
		{"edit", `{"path":"/workspace/b.py"}`, compact.ToolWrite, "/workspace/b.py"},
		{"browse", `{"url":"http://localhost:8000"}`, compact.ToolWeb, "http://localhost:8000"},
		{"browse_interactive", `{"browser_actions":"goto('http://x')"}`, compact.ToolWeb, "goto('http://x')"},
		{"delegate", `{"agent":"BrowsingAgent","inputs":{}}`, compact.ToolAgent, "BrowsingAgent"},
		{"finish", `{"message":"done"}`, compact.ToolOther, "done"},
		{"think", `{"thought":"check the base commit"}`, compact.ToolOther, "check the base commit"},
		{"execute_bash", `{"command":"ls -l /workspace/repo"}`, compact.ToolList, "/workspace/repo"},
		{"execute_bash", `{"command":"make clean && make"}`, compact.ToolShell, "make clean && make"},
		{"execute_ipython_cell", `{"code":"x=1"}`, compact.ToolShell, "x=1"},
		{"str_replace_editor", `{"command":"view","path":"/workspace/parser.c"}`, compact.ToolRead, "/workspace/parser.c"},
		{"str_replace_editor", `{"command":"str_replace","path":"/workspace/parser.c","old_str":"a","new_str":"b"}`, compact.ToolWrite, "/workspace/parser.c"},
		{"edit_file", `{"path":"/workspace/c.py","content":"…"}`, compact.ToolWrite, "/workspace/c.py"},
		{"web_read", `{"url":"https://docs.all-hands.dev"}`, compact.ToolWeb, "https://docs.all-hands.dev"},
		{"browser", `{"code":"goto('http://x')"}`, compact.ToolWeb, "goto('http://x')"},
		{"task_tracker", `{"command":"plan","task_list":[]}`, compact.ToolPlan, ""},
		{"terminal", `{"command":"pwd && ls -la"}`, compact.ToolList, "pwd && ls -la"},
		{"file_editor", `{"command":"create","path":"/workspace/hello.py","file_text":"print(1)"}`, compact.ToolWrite, "/workspace/hello.py"},
		{"browser_navigate", `{"url":"https://example.com"}`, compact.ToolWeb, "https://example.com"},
		{"glob", `{"pattern":"**/*.py"}`, compact.ToolSearch, "**/*.py"},
		{"grep", `{"pattern":"def main"}`, compact.ToolSearch, "def main"},
		{"planning_file_editor", `{"command":"view","path":"PLAN.md"}`, compact.ToolRead, "PLAN.md"},
	})
}

func TestSWEAgentTools(t *testing.T) {
	testTable(t, sweAgentTools, []tagCase{
		{"bash", `{"command":"python reproduce.py"}`, compact.ToolShell, "python reproduce.py"},
		{"bash", `{"command":"find_file fields.py src"}`, compact.ToolSearch, "fields.py"},
		{"str_replace_editor", `{"command":"view","path":"/repo/a.py"}`, compact.ToolRead, "/repo/a.py"},
		{"open", `{"path":"src/marshmallow/fields.py","line_number":1474}`, compact.ToolRead, "src/marshmallow/fields.py"},
		{"goto", `{"line_number":100}`, compact.ToolRead, ""},
		{"scroll_up", `{}`, compact.ToolRead, ""},
		{"scroll_down", `{}`, compact.ToolRead, ""},
		{"create", `{"filename":"reproduce.py"}`, compact.ToolWrite, "reproduce.py"},
		{"edit", `{"search":"a","replace":"b"}`, compact.ToolWrite, ""},
		{"insert", `{"text":"import x"}`, compact.ToolWrite, ""},
		{"append", `{"text":"x"}`, compact.ToolWrite, ""},
		{"search_file", `{"search_term":"TimeDelta","file":"f.py"}`, compact.ToolSearch, "TimeDelta"},
		{"search_dir", `{"search_term":"TimeDelta","dir":"src"}`, compact.ToolSearch, "TimeDelta"},
		{"find_file", `{"file_name":"fields.py","dir":"src"}`, compact.ToolSearch, "fields.py"},
		{"filemap", `{"file_path":"src/a.py"}`, compact.ToolRead, "src/a.py"},
		{"submit", `{}`, compact.ToolOther, ""},
		{"exit_forfeit", `{}`, compact.ToolOther, ""},
	})
}

func TestMiniSWEAgentTools(t *testing.T) {
	testTable(t, miniSWEAgentTools, []tagCase{
		{"bash", `{"command":"find . -type f -name \"*.py\" | grep -i validator | head -20"}`, compact.ToolList, "."},
		{"bash", `{"command":"nl -ba django/core/validators.py | sed -n '1,80p'"}`, compact.ToolRead, "django/core/validators.py"},
		{"bash", `{"command":"sed -i 's/a/b/' django/core/validators.py"}`, compact.ToolWrite, "django/core/validators.py"},
		{"bash", `{"command":"cd /testbed && python -m pytest tests/ -x"}`, compact.ToolShell, "cd /testbed && python -m pytest tests/ -x"},
	})
}

func TestGenericTools(t *testing.T) {
	var cases []tagCase
	for name, row := range genericTools {
		args, target := `{}`, ""
		switch {
		case row.sub != "":
			args, target = `{"command":"view","path":"a.go"}`, "a.go"
		case hasKey(row.target, "command"):
			args, target = `{"command":"make test"}`, "make test"
		case hasKey(row.target, "code"):
			args, target = `{"code":"print(1)"}`, "print(1)"
		case hasKey(row.target, "file_path"):
			args, target = `{"file_path":"a.go"}`, "a.go"
		case hasKey(row.target, "path"):
			args, target = `{"path":"src"}`, "src"
		case hasKey(row.target, "query"):
			args, target = `{"query":"x y"}`, "x y"
		case hasKey(row.target, "url"):
			args, target = `{"url":"https://x.dev"}`, "https://x.dev"
		case hasKey(row.target, "input"):
			args, target = `"*** Begin Patch\n*** Add File: n.md\n*** End Patch"`, "n.md"
		case len(row.target) > 0:
			args, target = `{"`+row.target[0]+`":"t"}`, "t"
		}
		kind := row.kind
		if row.sub != "" {
			kind = compact.ToolRead
		}
		if kind == compact.ToolShell && target == "make test" {
			target = "make test"
		}
		name = strings.TrimSuffix(name, "*") + map[bool]string{true: "billing", false: ""}[strings.HasSuffix(name, "*")]
		cases = append(cases, tagCase{name, args, kind, target})
	}
	// Case does not matter for the generic names.
	cases = append(cases, tagCase{"Bash", `{"command":"rg foo"}`, compact.ToolSearch, "foo"})
	testTable(t, genericTools, cases)
}

// TestCallTagUnknownTool: a tool no table knows is ToolOther, named by
// its most telling argument.
func TestCallTagUnknownTool(t *testing.T) {
	call := &compact.ToolCall{Name: "frobnicate", Arguments: json.RawMessage(`{"level":3,"path":"/etc/x"}`)}
	if _, kind, target := callTag(call, []toolTable{genericTools}); kind != compact.ToolOther || target != "/etc/x" {
		t.Errorf("got %s %q", kind, target)
	}
	long := &compact.ToolCall{Name: "bash", Arguments: json.RawMessage(`{"command":"python - <<'EOF'\n` + strings.Repeat("x = 1\\n", 400) + `EOF"}`)}
	if _, _, target := callTag(long, []toolTable{genericTools}); len(target) != maxTarget {
		t.Errorf("a long command's target is %d bytes, want %d", len(target), maxTarget)
	}
}

func TestCommandKind(t *testing.T) {
	cases := []struct {
		cmd    string
		kind   compact.ToolKind
		target string
	}{
		{`cat a.go`, compact.ToolRead, "a.go"},
		{`head -n 50 "dir with space/a.go"`, compact.ToolRead, "dir with space/a.go"},
		{`sed -n '10,40p' pkg/x.go`, compact.ToolRead, "pkg/x.go"},
		{`nl -ba x.py | sed -n '1,20p'`, compact.ToolRead, "x.py"},
		{`cat a.go b.go`, compact.ToolRead, "a.go"},
		{`cat a.go && cat b.go`, compact.ToolRead, ""},
		{`cd /w && echo "== a ==" && cat a.go`, compact.ToolRead, "a.go"},
		{`grep -rn "foo bar" src/`, compact.ToolSearch, "foo bar"},
		{`grep -e '-x' -r .`, compact.ToolSearch, "-x"},
		{`rg -n -A 3 --glob '*.go' Handler`, compact.ToolSearch, "Handler"},
		{`git grep -n TODO`, compact.ToolSearch, "TODO"},
		{`ls`, compact.ToolList, ""},
		{`ls -la src 2>/dev/null`, compact.ToolList, "src"},
		{`find . -name '*.go' | head -20`, compact.ToolList, "."},
		{`tree -L 2 pkg`, compact.ToolList, "pkg"},
		{`sed -i 's/a/b/g' x.go`, compact.ToolWrite, "x.go"},
		{`cat > x.py <<'EOF'` + "\nimport os && rm -rf /\nEOF", compact.ToolWrite, "x.py"},
		{`cat <<EOF > notes.txt` + "\nhello\nEOF", compact.ToolWrite, "notes.txt"},
		{`echo 'x=1' >> .env`, compact.ToolWrite, ".env"},
		{`printf '%s\n' a | tee out.txt`, compact.ToolWrite, "out.txt"},
		{`rm -f build/a.o`, compact.ToolWrite, "build/a.o"},
		{`mv a.go b.go`, compact.ToolWrite, "b.go"},
		{"apply_patch <<'EOF'\n*** Begin Patch\n*** Update File: main.go\n*** End Patch\nEOF", compact.ToolWrite, "main.go"},
		{"edit 12:14\n    return x\nend_of_edit", compact.ToolWrite, ""},
		{`open src/a.py 100`, compact.ToolRead, "src/a.py"},
		{`search_dir "TimeDelta" src`, compact.ToolSearch, "TimeDelta"},
		// Runs: anything that builds, tests, installs or mixes kinds.
		{`go test ./...`, compact.ToolShell, ""},
		{`python x.py > out.txt`, compact.ToolShell, ""},
		{`cat a.go | python -`, compact.ToolShell, ""},
		{`cat a.go && go build`, compact.ToolShell, ""},
		{`ls && cat a.go`, compact.ToolShell, ""},
		{`cat > t.py <<'EOF'` + "\nx\nEOF\npython t.py", compact.ToolShell, ""},
		{`tail -f log.txt`, compact.ToolShell, ""},
		{`sed 's/a/b/'`, compact.ToolShell, ""},
		{`echo hi`, compact.ToolShell, ""},
		{`'unclosed`, compact.ToolShell, ""},
	}
	for _, c := range cases {
		if k, tg := commandKind(c.cmd); k != c.kind || tg != c.target {
			t.Errorf("%q: %s %q, want %s %q", c.cmd, k, tg, c.kind, c.target)
		}
	}
}

func TestUnwrapOutput(t *testing.T) {
	cases := []struct {
		text, out string
		code      int
		ok        bool
	}{
		{`{"output":"ok\n","metadata":{"exit_code":0,"duration_seconds":0.1}}`, "ok\n", 0, true},
		{`{"output":"boom","metadata":{"exit_code":2}}`, "boom", 2, true},
		{`{"output":"cut short`, "cut short", 0, false},
		{"Exit code: 1\nWall time: 0.2 seconds\nOutput:\nFAIL\n", "FAIL", 1, true},
		{"Chunk ID: 9a\nWall time: 0.1 seconds\nProcess exited with code 127\nOriginal token count: 5\nOutput:\nnot found", "not found", 127, true},
		{"failed in sandbox MacosSeatbelt with execution error: sandbox denied exec error, exit code: 2, stdout: , stderr: x", "", 2, true},
		{"<returncode>1</returncode>\n<output>\nTraceback\n</output>", "Traceback", 1, true},
		{"hello\n[The command completed with exit code 0.]", "hello", 0, true},
		{"make: *** Error 2\n[The command completed with exit code 2.]", "make: *** Error 2", 2, true},
		{"plain output", "plain output", 0, false},
	}
	for _, c := range cases {
		out, code, ok := UnwrapOutput(c.text)
		if c.out != "" && strings.TrimSpace(out) != strings.TrimSpace(c.out) || code != c.code || ok != c.ok {
			t.Errorf("%q: %q %d %v, want %q %d %v", c.text, out, code, ok, c.out, c.code, c.ok)
		}
	}
}

func TestHarnessText(t *testing.T) {
	cases := map[string]bool{
		"<system-reminder>\nx\n</system-reminder>":                                   true,
		"<system-reminder>a</system-reminder>\n<system-reminder>b</system-reminder>": true,
		"<system-reminder>a</system-reminder> and also fix the bug":                  false,
		"<command-name>/clear</command-name>":                                        true,
		"  Caveat: The messages below were generated by the user":                    true,
		"[Request interrupted by user for tool use]":                                 true,
		"<environment_context>\n<cwd>/w</cwd>\n</environment_context>":               true,
		"# Context from my IDE setup:\n## Open tabs:\n- a.go":                        true,
		"# Context from my IDE setup:\n## My request for Codex:\nfix it":             false,
		"This is the Gemini CLI. We are setting up the context for our chat.\n":      true,
		"please fix <command-name> handling":                                         false,
		"fix the failing test":                                                       false,
	}
	for s, want := range cases {
		if got := harnessText(s); got != want {
			t.Errorf("%q: %v, want %v", s, got, want)
		}
	}
}
