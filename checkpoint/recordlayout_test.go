package checkpoint

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/redact"
)

// TestRedactedRecordKeepsItsLayout: a stored record holding a secret is
// masked in place, every other byte kept (QA-39.5: the record came back
// re-encoded, its keys sorted, so `checkpoint show --transcript` rewrote
// lines the compaction had kept byte for byte); a secret only found in its
// decoded form (\u escapes) is masked all the same.
func TestRedactedRecordKeepsItsLayout(t *testing.T) {
	r, err := redact.New(redact.Config{})
	if err != nil {
		t.Fatal(err)
	}
	const secret = "Kq7mZp2Lx9Wv4Ns8Rt"
	rec := `{"zeta":1,"history":[{"b":"x","a":"export DB_PASSWORD=` + secret + `\nls"}],"alpha":"y"}`
	escaped := `{"zeta":1,"a":"export DB_PASSWORD\u003d` + secret + `"}`
	// As a save stores a record (batch.json), and within a transcript.
	for _, out := range []compact.Transcript{
		{Records: []compact.Record{{Raw: redactJSON(r, json.RawMessage(rec))}, {Raw: redactJSON(r, json.RawMessage(escaped))}}},
		redactTranscript(r, compact.Transcript{Records: []compact.Record{{Raw: json.RawMessage(rec)}, {Raw: json.RawMessage(escaped)}}}),
	} {
		checkLayout(t, out, rec, escaped, secret)
	}
}

func checkLayout(t *testing.T, out compact.Transcript, rec, escaped, secret string) {
	t.Helper()
	got := string(out.Records[0].Raw)
	i := strings.Index(rec, secret)
	if strings.Contains(got, secret) || !strings.HasPrefix(got, rec[:i]) || !strings.HasSuffix(got, rec[i+len(secret):]) {
		t.Errorf("record masked as\n%s\nwant the secret masked in place in\n%s", got, rec)
	}
	var v map[string]any
	if err := json.Unmarshal(out.Records[1].Raw, &v); err != nil || strings.Contains(v["a"].(string), secret) {
		t.Errorf("escaped secret not masked: %s (%v)", out.Records[1].Raw, err)
	}
}
