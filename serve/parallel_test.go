package serve_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/checkpoint"
	"github.com/compactkit/compact/serve"
	"github.com/compactkit/compact/serve/servetest"
)

// TestParallelRunsKeepTheirPrefixes (QA-16): two runs of one task (the same
// system prompt and first ask, different turns after), sent alternately
// without X-Compact-Session, share a conversation key; each keeps its own
// compacted prefix: one compaction per run, then every request of either
// run goes out on its own prefix, byte-stable.
func TestParallelRunsKeepTheirPrefixes(t *testing.T) {
	for _, api := range allAPIs {
		t.Run(string(api), func(t *testing.T) {
			r := newRig(t)
			runs := [2][]turn{conversation(40, 16), diverged(conversation(40, 16), "run B")}
			cuts := roundEnds(runs[0])
			const start, requests = 20, 5
			for k := 0; k < requests; k++ {
				for run := range runs {
					body := request(api, modelFor(api), runs[run][:cuts[start+k]], false)
					if status, answer := r.post(t, apiPaths[api], body, nil); status != http.StatusOK {
						t.Fatalf("run %d request %d: %d %s", run, k, status, answer)
					}
				}
			}
			logs := r.waitLogsN(t, `"msg":"request"`, 2*requests)
			var sessions []string
			for _, l := range strings.Split(logs, "\n") {
				if i := strings.Index(l, `"session":"`); i >= 0 {
					sessions = append(sessions, l[i:i+40])
				}
			}
			if len(sessions) != 2*requests || sessions[0] != sessions[1] {
				t.Fatalf("the two runs should share a conversation key (the test's premise): %q", sessions)
			}
			if n := r.summary.calls.Load(); n != 2 {
				t.Errorf("%d summarizer calls for 2 runs of %d requests, want 2 (one per run):\n%s", n, requests, logs)
			}
			m := r.waitMetrics(t, fmt.Sprintf("compact_serve_prefix_compared_total %d", 2*(requests-1)))
			want := fmt.Sprintf("compact_serve_prefix_stable_total %d", 2*(requests-1))
			if !strings.Contains(m, want) {
				t.Errorf("metrics do not say %q:\n%s\n%s", want, grepLines(m, "prefix"), logs)
			}
		})
	}
}

// diverged returns turns as another run of the same task wrote them: the
// same first ask, then other words and other outputs.
func diverged(turns []turn, tag string) []turn {
	out := make([]turn, len(turns))
	for i, tn := range turns {
		if i > 0 && tn.role != compact.RoleUser {
			tn.text = strings.ReplaceAll(tn.text, "handler", "handler_"+strings.ReplaceAll(tag, " ", "_"))
			tn.text += " (" + tag + ")"
		}
		out[i] = tn
	}
	return out
}

// TestParallelRunsSurviveRestart: both runs' prefixes are stored under
// their shared key, and a restarted proxy forwards each run's next request
// on its own prefix, with no summarizer call.
func TestParallelRunsSurviveRestart(t *testing.T) {
	api := servetest.Chat
	dir := t.TempDir()
	open := func() checkpoint.Store { return openFileStore(t, dir) }
	runs := [2][]turn{conversation(70, 8), diverged(conversation(70, 8), "run B")}
	a := newRig(t, func(c *serve.Config) { c.Store = open() })
	for _, turns := range runs {
		a.post(t, apiPaths[api], request(api, modelFor(api), turns[:120], false), nil)
	}
	if n := a.summary.calls.Load(); n != 2 {
		t.Fatalf("%d compactions of two runs, want 2", n)
	}
	b := newRig(t, func(c *serve.Config) { c.Store = open() })
	for run, turns := range runs {
		b.post(t, apiPaths[api], request(api, modelFor(api), turns[:122], false), nil)
		got := readForwarded(t, api, b.up.Last().Body)
		if countHandoffs(got) != 1 {
			t.Fatalf("run %d: not forwarded with a stored prefix", run)
		}
	}
	if n := b.summary.calls.Load(); n != 0 {
		t.Fatalf("the restarted proxy compacted %d times, want 0 (each run's prefix stored)\n%s", n, b.logs.String())
	}
}
