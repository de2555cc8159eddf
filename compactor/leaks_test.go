package compactor

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/compactkit/compact"
)

// The prune strategy keeps the middle in place, shortened: it must not
// keep the middle's secrets (issue 17, leak 3). They are masked in the
// messages, their source records and the records among them, so no
// writer can emit them; the head and tail stay byte for byte.
func TestPruneMasksTheMiddlesSecrets(t *testing.T) {
	const secret = "postgres://admin:Kq7mZ2pXw9vB@db.internal/app"
	in := agentRun(60, 600)
	id := in.Messages[20].ToolCallIDs[0]
	in.Messages[20] = result(id, "DATABASE_URL="+secret+"\n"+strings.Repeat("log line\n", 300))
	in.Messages[21].Parts[0].ToolCall.Arguments = json.RawMessage(`{"cmd":"psql ` + secret + `"}`)
	in.Messages[21] = withID(in.Messages[21])
	in.Records = []compact.Record{{At: 30, Type: "event_msg", Raw: json.RawMessage(`{"type":"event_msg","text":"connecting to ` + secret + `"}`)}}
	cfg := testConfig()
	cfg.Strategy, cfg.Force = StrategyPrune, true
	res, err := mustNew(t, cfg).Compact(context.Background(), in)
	if err != nil || res.Record.Method != compact.MethodPrune {
		t.Fatalf("%v %+v", err, res.Record)
	}
	checkInvariants(t, in, res)
	if p := res.Plan; p.HeadEnd > 20 || p.TailStart <= 30 {
		t.Fatalf("the planted messages are not in the middle [%d, %d)", p.HeadEnd, p.TailStart)
	}
	dump, _ := json.Marshal(res.Transcript)
	if strings.Contains(string(dump), "Kq7mZ2pXw9vB") {
		t.Fatal("the middle's secret survived the prune strategy")
	}
	if !strings.Contains(string(dump), "[REDACTED:") {
		t.Fatal("no mask where the secret was")
	}
	if n, _, _ := mustNew(t, cfg).NeedsCompaction(res.Transcript); n != res.Record.TokensAfter {
		t.Fatalf("tokens after %d, the output counts %d", res.Record.TokensAfter, n)
	}
}

// The state records a handoff carries over from the middle are masked too.
func TestCarriedStateRecordsAreMasked(t *testing.T) {
	const secret = "postgres://admin:Kq7mZ2pXw9vB@db.internal/app"
	in := agentRun(60, 600)
	in.Records = []compact.Record{{At: 30, Type: "turn_context", Raw: json.RawMessage(`{"type":"turn_context","cwd":"/srv","env":"` + secret + `"}`), State: true}}
	res, err := mustNew(t, testConfig()).Compact(context.Background(), in)
	if err != nil || !res.Changed() {
		t.Fatalf("%v %+v", err, res.Record)
	}
	if len(res.Transcript.Records) != 1 || strings.Contains(string(res.Transcript.Records[0].Raw), "Kq7mZ2pXw9vB") ||
		!json.Valid(res.Transcript.Records[0].Raw) {
		t.Fatalf("carried records %+v", res.Transcript.Records)
	}
}
