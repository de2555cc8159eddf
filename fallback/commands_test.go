package fallback

import (
	"testing"
)

func TestCommandKinds(t *testing.T) {
	type seg struct {
		kind int
		text string
	}
	for _, tc := range []struct {
		cmd  string
		want []seg
	}{
		{"cd /w && go test ./pkg/... -run TestX 2>&1 | tail -5", []seg{{cmdTest, "go test ./pkg/... -run TestX"}}},
		{"python -m pytest tests/x.py -xvs > /dev/null", []seg{{cmdTest, "python -m pytest tests/x.py -xvs"}}},
		{"python3 -W ignore -m django test app.tests", []seg{{cmdTest, "python3 -W ignore -m django test app.tests"}}},
		{"./manage.py test && python tests/runtests.py migrations", []seg{{cmdTest, "python tests/runtests.py migrations"}}},
		{"python manage.py test app", []seg{{cmdTest, "python manage.py test app"}}},
		{"npm run test:unit; pnpm --filter web test", []seg{{cmdTest, "npm run test:unit"}}},
		{"npx vitest run src", []seg{{cmdTest, "npx vitest run src"}}},
		{"cargo test -p core && cargo add serde", []seg{{cmdTest, "cargo test -p core"}, {cmdInstall, "cargo add serde"}}},
		{"make -C build check", []seg{{cmdTest, "make -C build check"}}},
		{"sudo apt-get install -y jq", []seg{{cmdInstall, "sudo apt-get install -y jq"}}},
		{"uv pip install requests && poetry run pytest", []seg{{cmdInstall, "uv pip install requests"}, {cmdTest, "poetry run pytest"}}},
		{"pip install -e . 2>&1 | tail -2", []seg{{cmdInstall, "pip install -e ."}}},
		{"go get example.com/x@v1 && go build ./...", []seg{{cmdInstall, "go get example.com/x@v1"}}},
		{"cat > t.sh << 'EOF'\npytest -q\nEOF\nbash t.sh", nil},
		{"grep -rn test src/ && ls tests", nil},
		{"echo install", nil},
		// A script is a test runner by its name or a "test" sub-command.
		{"python scripts/run_checks_and_tests.py --fast", []seg{{cmdTest, "python scripts/run_checks_and_tests.py --fast"}}},
		{"python tool.py test core", []seg{{cmdTest, "python tool.py test core"}}},
		{"python tool.py build", nil},
	} {
		var got []seg
		commandKinds(tc.cmd, func(kind int, s string) { got = append(got, seg{kind, s}) })
		if len(got) != len(tc.want) {
			t.Errorf("%q: got %v, want %v", tc.cmd, got, tc.want)
			continue
		}
		for i := range got {
			if got[i] != tc.want[i] {
				t.Errorf("%q: got %v, want %v", tc.cmd, got, tc.want)
			}
		}
	}
}

func TestDiagnostics(t *testing.T) {
	for _, tc := range []struct {
		out  string
		want bool
	}{
		{"WARNING: Running pip as the 'root' user can result in broken permissions", false},
		{"  211:11  Warning: 'x' is assigned a value but never used.", true},
		{"main.go:3:1: warning: unused variable", true},
		{"✔ No ESLint warnings or errors", false},
		{"ImportError: cannot import name 'x'", true},
		{"1 warning generated.", false},
	} {
		if got := diagnostics(errorLines(tc.out, true, false)); got != tc.want {
			t.Errorf("diagnostics(%q) = %v, want %v", tc.out, got, tc.want)
		}
	}
}

func TestOpening(t *testing.T) {
	for _, tc := range []struct {
		s    string
		want int
	}{
		{"So the `_order` field is not in the model state fields.", openConclusion},
		{"Now, this means the index is created first.", openConclusion},
		{"So we need to move the index after it.", openIntent},
		{"Let's write a small script.", openIntent},
		{"But first, we need to check the loader.", openIntent},
		{"We can print files from other directories as well.", openOther},
		{"The inserted line is not correctly placed.", openOther},
	} {
		if got := opening(tc.s); got != tc.want {
			t.Errorf("opening(%q) = %d, want %d", tc.s, got, tc.want)
		}
	}
}

// TestErrorLines: the line of an output that says what went wrong is
// chosen by general features: it reports a failure and names a value, a
// location or a cause; a banner, a rule or a bare header never stands for
// the error; a failing test keeps its name beside its message.
func TestErrorLines(t *testing.T) {
	for _, tc := range []struct {
		name   string
		out    string
		failed bool
		want   string
	}{
		{"a header's message, the line of it that tells most",
			"ERROR:\nThe edit could not be applied because the anchor text\nwas not found in /srv/app/router.ts.", true,
			"The edit could not be applied because the anchor text"},
		{"a test's name with its message",
			"=== RUN   TestParseHeader\n--- FAIL: TestParseHeader (0.01s)\n    header_test.go:41: got \"v1\", want \"v2\"\nFAIL", true,
			"--- FAIL: TestParseHeader (0.01s) | header_test.go:41: got \"v1\", want \"v2\""},
		{"the exception over its traceback header",
			"Traceback (most recent call last):\n  File \"/srv/cli.py\", line 9, in <module>\n    main()\nLookupError: unknown codec 'utf-9'", true,
			"LookupError: unknown codec 'utf-9'"},
		{"a banner is no error line",
			"============ 2 failed, 10 passed in 0.31s ============\nE   AssertionError: assert 'eur' == 'EUR'", true,
			"E   AssertionError: assert 'eur' == 'EUR'"},
		{"a failed call whose output uses no failure word",
			"No match for `renderRow(` in src/table.tsx.\nTry a shorter anchor.", true,
			"No match for `renderRow(` in src/table.tsx."},
	} {
		got := bestError(errorLines(tc.out, !tc.failed, tc.failed))
		if got != tc.want {
			t.Errorf("%s:\n got %q\nwant %q", tc.name, got, tc.want)
		}
	}
	// "stderr:" with nothing after it is an empty stream, not an error.
	if got := errorLines("stdout: done\nstderr:", true, false); len(got) != 0 {
		t.Errorf("an empty stderr reads as an error: %v", got)
	}
}

// TestTrailingStatus: one row per exit-status note a program may end its
// output with.
func TestTrailingStatus(t *testing.T) {
	for _, tc := range []struct {
		out  string
		code int
		ok   bool
	}{
		{"FAIL\tgithub.com/acme/x\nexit status 2", 2, true},            // go, sh
		{"npm ERR! Test failed.\nProcess exited with code 1", 1, true}, // process runners
		{"step lint\nexit code: 3\n", 3, true},                         // CI steps
		{"[The run completed with exit code 0.]", 0, true},             // a bracketed note
		{"the exit status is documented in man 1 test", 0, false},      // prose
		{"exit status 2\nthen more output", 0, false},                  // not the last line
	} {
		code, ok := trailingStatus(tc.out)
		if code != tc.code || ok != tc.ok {
			t.Errorf("trailingStatus(%q) = %d, %v; want %d, %v", tc.out, code, ok, tc.code, tc.ok)
		}
	}
}

// TestInformative: one row per feature that makes an output line tell
// more than "it failed".
func TestInformative(t *testing.T) {
	for _, tc := range []struct {
		line string
		want int
	}{
		{"unknown codec 'utf-9'", 1},                                      // a quoted value
		{"timeout=30s exceeded", 1},                                       // key=value
		{"error in lib/queue/worker.rb", 1},                               // a path
		{"syntax error on line 14", 1},                                    // a line number
		{"refused because the token expired", 1},                          // a cause
		{"expected 3 rows, got 2 in db/seed.sql", 2},                      // a cause and a path
		{"======================== 3 failed ========================", 0}, // a rule
		{"[##########----------] 50%", 0},                                 // a progress meter
		{"Something went wrong.", 0},
	} {
		if got := informative(tc.line); got != tc.want {
			t.Errorf("informative(%q) = %d, want %d", tc.line, got, tc.want)
		}
	}
}

// TestSearchFiles is the searchValueOption row: a grep-like search's first
// operand is its pattern, not a file (unless -e or -f gave the pattern),
// and an option's value is neither.
func TestSearchFiles(t *testing.T) {
	for _, tc := range []struct {
		cmd  string
		want []string
	}{
		{`grep -rn "config.yaml" internal/app/server.go`, []string{"internal/app/server.go"}},
		{`rg "\.sql" -n`, nil},
		{`rg -g '*.ts' -A 3 createClient lib/db.ts`, []string{"lib/db.ts"}},
		{`grep -e main.go cmd/tool/main.go`, []string{"cmd/tool/main.go"}},
		{`ag --regexp=setup.py setup.cfg`, []string{"setup.cfg"}},
		{`cat notes.txt | grep -c TODO.md`, []string{"notes.txt"}},
	} {
		var got []string
		for _, f := range shellFiles(tc.cmd) {
			got = append(got, f.path)
		}
		if len(got) != len(tc.want) {
			t.Errorf("%q: files %q, want %q", tc.cmd, got, tc.want)
			continue
		}
		for i := range got {
			if got[i] != tc.want[i] {
				t.Errorf("%q: files %q, want %q", tc.cmd, got, tc.want)
			}
		}
	}
}
