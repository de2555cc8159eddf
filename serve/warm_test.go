package serve_test

import (
	"encoding/json"
	"strings"
	"testing"
)

// A warm request (its conversation was compacted before, and it goes out
// as the stored prefix and its new elements) is never read in full with
// the format reader: the proxy counts the body as it goes out, new
// elements only, and teaches the count cache what it counted, so that its
// log line says "counted":"bound" (no exact figure of the whole request
// was taken). It was read in full each time the new elements' byte bounds
// added up past the threshold, every few requests, at the cost of a full
// read of the request.
func TestWarmRequestsNotReadInFull(t *testing.T) {
	for _, api := range allAPIs {
		t.Run(string(api), func(t *testing.T) {
			r := newRig(t)
			turns := conversation(80, 16)
			cuts := roundEnds(turns)
			for k := 0; k < 20; k++ {
				body := request(api, modelFor(api), turns[:cuts[20+k]], false)
				if status, answer := r.post(t, apiPaths[api], body, nil); status != 200 {
					t.Fatalf("request %d: %d %s", k, status, answer)
				}
			}
			logs := r.waitLogsN(t, `"msg":"request"`, 20)
			warm := 0
			for _, line := range strings.Split(strings.TrimSpace(logs), "\n") {
				var l struct {
					Prefix, Counted string
					Tokens          int `json:"tokens_after"`
				}
				if err := json.Unmarshal([]byte(line), &l); err != nil {
					t.Fatal(err)
				}
				if l.Prefix != "reused" {
					continue
				}
				warm++
				if l.Counted != "bound" {
					t.Errorf("a warm request was read in full (counted %q):\n%s", l.Counted, line)
				}
			}
			if warm < 15 {
				t.Fatalf("%d of 20 requests went out with a reused prefix, want most:\n%s", warm, logs)
			}
		})
	}
}
