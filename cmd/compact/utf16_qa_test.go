package main

import (
	"strings"
	"testing"
	"unicode/utf16"
)

// QA-44: a UTF-16 text (a Windows PowerShell 5 `>` redirect, Notepad's
// "Unicode") goes through `compact redact` unchanged, "0 secret(s) masked",
// exit 0: every secret in it kept. inspect/count call such a transcript
// "unrecognised transcript format". Want: UTF-16 with a byte-order mark
// decoded (and written back as it came), or refused with a message that
// says it is UTF-16; never passed through as clean.
func TestQARedactUTF16DoesNotPassSecretsThrough(t *testing.T) {
	const token = "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" // CRC-valid GitHub token
	text := "deploy log\nGITHUB_TOKEN=" + token + "\n"
	u := utf16.Encode([]rune(text))
	b := []byte{0xff, 0xfe}
	for _, c := range u {
		b = append(b, byte(c), byte(c>>8))
	}
	code, out, stderr := runCmd(t, string(b), nil, "redact", "-")
	if code != exitOK {
		return // refused: fine, if the message says why
	}
	var back []uint16
	ob := []byte(out)
	if len(ob) >= 2 && ob[0] == 0xff && ob[1] == 0xfe {
		for i := 2; i+1 < len(ob); i += 2 {
			back = append(back, uint16(ob[i])|uint16(ob[i+1])<<8)
		}
	}
	if strings.Contains(string(utf16.Decode(back)), token) {
		t.Errorf("UTF-16 input: exit 0 and the token is still in the output (%q)", strings.TrimSpace(stderr))
	}
}
