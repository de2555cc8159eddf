package serve_test

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/serve/servetest"
	"pgregory.net/rapid"
)

// genTurns draws a conversation: asks, replies, and assistant turns making
// one to three tool calls answered in order or out of it, of mixed sizes.
func genTurns(t *rapid.T) []turn {
	turns := []turn{{role: compact.RoleUser, text: "Start: " + rapid.StringMatching(`[a-z ]{5,40}`).Draw(t, "ask")}}
	steps := rapid.IntRange(1, 60).Draw(t, "steps")
	for k := 0; k < steps; k++ {
		size := rapid.SampledFrom([]int{1, 5, 30, 120}).Draw(t, "size")
		switch rapid.IntRange(0, 5).Draw(t, "kind") {
		case 0:
			turns = append(turns, turn{role: compact.RoleUser, text: fmt.Sprintf("Ask %d: %s", k, strings.Repeat("more detail ", size))})
		case 1:
			turns = append(turns, turn{role: compact.RoleAssistant, text: fmt.Sprintf("Reply %d: %s", k, strings.Repeat("thinking aloud ", size))})
		default:
			n := rapid.IntRange(1, 3).Draw(t, "calls")
			call := turn{role: compact.RoleAssistant, text: fmt.Sprintf("Step %d", k)}
			var results []turn
			for c := 0; c < n; c++ {
				id := fmt.Sprintf("c%d_%d", k, c)
				call.calls = append(call.calls, servetest.ToolCall{ID: id, Name: "read_file", Arguments: fmt.Sprintf(`{"path":"f%d_%d.go"}`, k, c)})
				results = append(results, turn{role: compact.RoleTool, callID: id, text: fileBody(k*10+c, size)})
			}
			if rapid.Bool().Draw(t, "reversed") {
				for i, j := 0, len(results)-1; i < j; i, j = i+1, j-1 {
					results[i], results[j] = results[j], results[i]
				}
			}
			turns = append(turns, call)
			turns = append(turns, results...)
		}
	}
	return turns
}

// Whatever the conversation and the API: the forwarded body keeps every
// member beside the list byte for byte; a compacted list has one handoff,
// no split tool pair, the client's elements in order and its last element
// last; the same request again goes out the same; a longer one goes out as
// the same prefix plus its new elements unless it fills the window again.
func TestPropertyRewrite(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		api := rapid.SampledFrom(allAPIs).Draw(rt, "api")
		turns := genTurns(rt)
		stream := rapid.Bool().Draw(rt, "stream")
		r := newRig(t)
		body := request(api, modelFor(api), turns, stream)
		r.post(t, apiPaths[api], body, nil)
		got := r.up.Last().Body
		in, inRest := split(t, api, body)
		out, outRest := split(t, api, got)
		if inRest != outRest {
			rt.Fatalf("members beside the list changed")
		}
		tr := readForwarded(t, api, got)
		if bytes.Equal(got, body) {
			return // under the threshold, or nothing to drop
		}
		if len(tr.Orphans()) > 0 {
			rt.Fatalf("tool pairs split: %v", tr.Orphans())
		}
		if countHandoffs(tr) != 1 {
			rt.Fatalf("%d handoffs", countHandoffs(tr))
		}
		j := 0
		for _, e := range out {
			if bytes.Contains(e, []byte("<<<compact:handoff>>>")) {
				continue
			}
			for j < len(in) && !bytes.Equal(in[j], e) {
				j++
			}
			if j == len(in) {
				rt.Fatalf("a forwarded element is none of the client's, in order")
			}
			j++
		}
		if !bytes.Equal(out[len(out)-1], in[len(in)-1]) {
			rt.Fatalf("the last element is not the client's last")
		}
		r.post(t, apiPaths[api], body, nil)
		if again := r.up.Last().Body; !bytes.Equal(again, got) {
			a, _ := split(t, api, again)
			for i := range min(len(a), len(out)) {
				if !bytes.Equal(a[i], out[i]) {
					rt.Fatalf("the same request went out differently the second time: element %d of %d/%d:\n%.400s\nvs\n%.400s", i, len(a), len(out), a[i], out[i])
				}
			}
			rt.Fatalf("the same request went out differently the second time: %d vs %d elements", len(a), len(out))
		}
		calls := r.summary.calls.Load()
		more := append(append([]turn(nil), turns...), turn{role: compact.RoleUser, text: "One more thing."})
		r.post(t, apiPaths[api], request(api, modelFor(api), more, stream), nil)
		next := r.up.Last().Body
		if r.summary.calls.Load() == calls {
			nout, _ := split(t, api, next)
			if len(nout) != len(out)+1 {
				rt.Fatalf("%d elements after one new turn, want %d", len(nout), len(out)+1)
			}
			for i := range out[:len(out)-1] { // the last carries Anthropic's moving breakpoint
				if !bytes.Equal(normalize(api, nout[i]), normalize(api, out[i])) {
					rt.Fatalf("prefix element %d changed", i)
				}
			}
		}
	})
}
