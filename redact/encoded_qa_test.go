package redact_test

import (
	"encoding/base64"
	"strings"
	"testing"

	"github.com/compactkit/compact/redact"
)

// QA-3: issue 17 leak 7. Encoded and split secrets survive the redactor.
func TestQAEncodedAndSplitSecrets(t *testing.T) {
	r, err := redact.New(redact.Config{})
	if err != nil {
		t.Fatal(err)
	}
	b64 := func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }
	const (
		akid  = "AKIAQ3EGUQ7XH2MPLW5R"
		ghTok = "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" // CRC32 valid
		pw    = "Kq7mZ2pQA99x"
	)
	cases := []struct{ name, in, secret string }{
		{"base64 of an AWS key id", "blob " + b64(akid), b64(akid)},
		{"base64 of a key=value line", "config: " + b64("aws_access_key_id="+akid), b64("aws_access_key_id=" + akid)},
		{"base64 of a URL with a password", "blob " + b64("postgres://admin:"+pw+"@db.internal/app"), b64("postgres://admin:" + pw + "@db.internal/app")},
		{"echo base64 | base64 -d", "echo " + b64(akid+"\n") + " | base64 -d", b64(akid + "\n")},
		{"percent-encoded URL password", "DATABASE_URL=postgres%3A%2F%2Fadmin%3A" + pw + "%40db.internal%2Fapp", pw},
		{"percent-encoded query holding a token", "redirect=https%3A%2F%2Fx.com%2Fcb%3Ftoken%3D" + ghTok, ghTok},
		{"key split by a line break in a quoted value", "api_key = \"sk-proj-QAsplitAb12Cd34Ef56Gh78\nIj90Kl12Mn34Op56Qr78St90Uv\"", "Ij90Kl12Mn34Op56Qr78St90Uv"},
		{"URL password holding < (issue 17 leak 2)", "DATABASE_URL=postgres://admin:Kq7<mZ2p>QAx@db.internal/app", "Kq7<mZ2p>QAx"},
		{"URL password holding < written by Go's encoding/json", `{"url": "postgres://admin:Kq7\u003cmZ2p\u003eQAx@db.internal/app"}`, `Kq7\u003cmZ2p\u003eQAx`},
		{"key split by a CRLF line break in a quoted value", "api_key = \"sk-proj-QAsplitAb12Cd34Ef56Gh78\r\nIj90Kl12Mn34Op56Qr78St90Uv\"", "Ij90Kl12Mn34Op56Qr78St90Uv"},
		{"key split by an escaped CRLF in JSON", `{"api_key": "sk-proj-QAsplitAb12Cd34Ef56Gh78\r\nIj90Kl12Mn34Op56Qr78St90Uv"}`, "Ij90Kl12Mn34Op56Qr78St90Uv"},
		{"token split by a line break in JSON", "{\"token\": \"" + ghTok[:20] + "\n" + ghTok[20:] + "\"}", ghTok[20:]},
	}
	for _, c := range cases {
		got := r.String(c.in)
		if strings.Contains(got, c.secret) {
			t.Errorf("%s: not masked:\n  in:  %q\n  out: %q", c.name, c.in, got)
		}
	}
}
