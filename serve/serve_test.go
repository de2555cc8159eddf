package serve_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/compactkit/compact/serve"
	"github.com/compactkit/compact/serve/servetest"
)

// A request under the threshold reaches the upstream byte for byte, and
// the answer, JSON or streamed, reaches the client byte for byte.
func TestUnderWindowByteIdentical(t *testing.T) {
	for _, api := range allAPIs {
		for _, stream := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/stream=%t", api, stream), func(t *testing.T) {
				r := newRig(t)
				r.up.Script = func(servetest.API, []byte) servetest.Reply {
					return servetest.Reply{Text: "Fixed: the handler returned early — «ok» 🎉."}
				}
				body := request(api, modelFor(api), conversation(3, 5), stream)
				status, answer := r.post(t, apiPaths[api], body, nil)
				if status != 200 {
					t.Fatalf("status %d: %s", status, answer)
				}
				if got := r.up.Last().Body; !bytes.Equal(got, body) {
					t.Fatalf("forwarded body differs from the client's:\n%s\nvs\n%s", got, body)
				}
				if sent := r.up.Last().Response; !bytes.Equal(answer, sent) {
					t.Fatalf("answer differs from the upstream's:\n%s\nvs\n%s", answer, sent)
				}
				if r.summary.calls.Load() != 0 {
					t.Fatal("the summarizer was called under the threshold")
				}
			})
		}
	}
}

// A request over the threshold arrives compacted: one handoff, every tool
// call with its results, head and tail elements as the client wrote them,
// and every other member of the body byte for byte.
func TestOverWindowCompacted(t *testing.T) {
	for _, api := range allAPIs {
		for _, stream := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/stream=%t", api, stream), func(t *testing.T) {
				r := newRig(t)
				r.up.Script = func(servetest.API, []byte) servetest.Reply { return servetest.Reply{Text: "Done."} }
				body := request(api, modelFor(api), conversation(60, 8), stream)
				status, answer := r.post(t, apiPaths[api], body, nil)
				if status != 200 {
					t.Fatalf("status %d: %s", status, answer)
				}
				got := r.up.Last().Body
				checkCompacted(t, api, body, got)
				if r.summary.calls.Load() != 1 {
					t.Fatalf("%d summarizer calls, want 1", r.summary.calls.Load())
				}
				if !bytes.Contains(answer, []byte("Done.")) && !bytes.Contains(answer, []byte(`"Done`)) && !strings.Contains(string(answer), "Don") {
					t.Fatalf("answer lost: %s", answer)
				}
				logs := r.waitLogs(t, `"prefix":"new"`)
				if !strings.Contains(logs, `"compaction":"fallback"`) || !strings.Contains(logs, `"prefix":"new"`) {
					t.Fatalf("log line does not say what was done: %s", logs)
				}
			})
		}
	}
}

// checkCompacted checks a forwarded body against the client's.
func checkCompacted(t *testing.T, api servetest.API, sent, got []byte) {
	t.Helper()
	if bytes.Equal(sent, got) {
		t.Fatal("an over-window request was forwarded unchanged")
	}
	in, inRest := split(t, api, sent)
	out, outRest := split(t, api, got)
	if inRest != outRest {
		t.Fatalf("members beside the list changed:\n%s\nvs\n%s", outRest, inRest)
	}
	tr := readForwarded(t, api, got)
	if n := countHandoffs(tr); n != 1 {
		t.Fatalf("%d handoffs in the forwarded request, want 1", n)
	}
	if o := tr.Orphans(); len(o) > 0 {
		t.Fatalf("tool pairs split: %+v", o)
	}
	if len(out) >= len(in) {
		t.Fatalf("%d elements forwarded of %d", len(out), len(in))
	}
	// Every forwarded element but the handoff is one of the client's,
	// byte for byte and in order; the last ones are the client's last.
	j := 0
	handoffs := 0
	for _, e := range out {
		if bytes.Contains(e, []byte("<<<compact:handoff>>>")) {
			handoffs++
			continue
		}
		for j < len(in) && !bytes.Equal(in[j], e) {
			j++
		}
		if j == len(in) {
			t.Fatalf("forwarded element is none of the client's (in order): %.200s", e)
		}
		j++
	}
	if handoffs != 1 {
		t.Fatalf("%d handoff elements", handoffs)
	}
	if !bytes.Equal(out[len(out)-1], in[len(in)-1]) {
		t.Fatal("the last element is not the client's last")
	}
}

// A stable prefix across 20 growing requests: each request is forwarded
// as the previous one's compacted prefix plus only its new turns, byte for
// byte, with no summarizer call, until the window fills again and the
// handoff is folded (one handoff, never two).
func TestStablePrefixAcrossGrowingRequests(t *testing.T) {
	for _, api := range allAPIs {
		t.Run(string(api), func(t *testing.T) {
			r := newRig(t)
			turns := conversation(80, 16)
			cuts := roundEnds(turns)
			start := 20 // rounds in the first request: over the threshold
			var prevPrefix []json.RawMessage
			var prevSent []json.RawMessage
			compactions, reused := 0, 0
			for k := 0; k < 20; k++ {
				n := cuts[start+k] // one more round (assistant call + result) per request
				body := request(api, modelFor(api), turns[:n], false)
				if status, answer := r.post(t, apiPaths[api], body, nil); status != 200 {
					t.Fatalf("request %d: %d %s", k, status, answer)
				}
				got := r.up.Last().Body
				tr := readForwarded(t, api, got)
				if countHandoffs(tr) != 1 {
					t.Fatalf("request %d: %d handoffs\n%s", k, countHandoffs(tr), r.logs.String())
				}
				if o := tr.Orphans(); len(o) > 0 {
					t.Fatalf("request %d: tool pairs split: %+v", k, o)
				}
				out, _ := split(t, api, got)
				in, _ := split(t, api, body)
				calls := r.summary.calls.Load()
				if prevPrefix != nil && int(calls) == compactions {
					// No new compaction: the previous forwarded list, then
					// the client's new elements.
					if len(out) != len(prevPrefix)+len(in)-len(prevSent) {
						t.Fatalf("request %d: %d elements, want %d prefix + %d new", k, len(out), len(prevPrefix), len(in)-len(prevSent))
					}
					for i := range prevPrefix {
						if !bytes.Equal(normalize(api, out[i]), normalize(api, prevPrefix[i])) {
							t.Fatalf("request %d: prefix element %d changed:\n%.300s\nvs\n%.300s", k, i, out[i], prevPrefix[i])
						}
					}
					for i, e := range in[len(prevSent):] {
						if !bytes.Equal(out[len(prevPrefix)+i], e) {
							t.Fatalf("request %d: new element %d is not the client's", k, i)
						}
					}
					reused++
				}
				compactions = int(calls)
				prevPrefix, prevSent = out, in
			}
			if compactions < 2 {
				t.Fatalf("%d compactions over 20 requests: the window never filled again (the test needs a refold)", compactions)
			}
			if reused < 20-compactions {
				t.Fatalf("%d requests reused the prefix, want %d", reused, 20-compactions)
			}
			metrics := r.waitMetrics(t, "compact_serve_prefix_compared_total 19")
			t.Logf("%d compactions, %d requests on a stable prefix\n%s", compactions, reused, grepLines(metrics, "prefix"))
			if !strings.Contains(metrics, "compact_serve_prefix_compared_total 19") {
				t.Fatalf("metrics do not count 19 compared requests:\n%s", metrics)
			}
			wantStable := fmt.Sprintf("compact_serve_prefix_stable_total %d", 20-compactions)
			if !strings.Contains(metrics, wantStable) {
				t.Fatalf("metrics do not say %q:\n%s", wantStable, metrics)
			}
		})
	}
}

// normalize drops Anthropic's moving cache_control breakpoints, which the
// client, not the proxy, places.
func normalize(api servetest.API, e []byte) []byte {
	if api != servetest.Messages {
		return e
	}
	var v any
	if json.Unmarshal(e, &v) != nil {
		return e
	}
	serve.DropCacheControl(v)
	out, _ := json.Marshal(v)
	return out
}

func grepLines(s, substr string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, substr) && !strings.HasPrefix(l, "#") {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// A client may change elements the prefix keeps (it appends to its last
// message, moves a cache breakpoint): the prefix still holds, with the
// element as the client has it now. A change to an element the handoff
// summarized voids the prefix: the request is compacted afresh.
func TestPrefixFollowsKeptElements(t *testing.T) {
	r := newRig(t)
	turns := conversation(60, 8)
	first := request(servetest.Chat, gptModel, turns[:100], false)
	r.post(t, apiPaths[servetest.Chat], first, nil)
	if r.summary.calls.Load() != 1 {
		t.Fatal("the first request was not compacted")
	}
	// The last element, kept in the tail, changes; one turn is added.
	edited := append([]turn(nil), turns[:101]...)
	edited[99].text += "\n(output truncated by the agent)"
	r.post(t, apiPaths[servetest.Chat], request(servetest.Chat, gptModel, edited, false), nil)
	if r.summary.calls.Load() != 1 {
		t.Fatal("a change to a kept element made a new compaction")
	}
	out, _ := split(t, servetest.Chat, r.up.Last().Body)
	if !bytes.Contains(out[len(out)-2], []byte("(output truncated by the agent)")) {
		t.Fatal("the kept element was not forwarded as the client has it now")
	}
	if countHandoffs(readForwarded(t, servetest.Chat, r.up.Last().Body)) != 1 {
		t.Fatal("not forwarded with the stored handoff")
	}
	// An element the handoff summarized changes.
	rewritten := append([]turn(nil), edited...)
	rewritten[10].text = "a different file body"
	r.post(t, apiPaths[servetest.Chat], request(servetest.Chat, gptModel, rewritten, false), nil)
	if r.summary.calls.Load() != 2 {
		t.Fatalf("%d summarizer calls: a changed dropped element must be summarized again", r.summary.calls.Load())
	}
}
