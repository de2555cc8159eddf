package safeurl

import (
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"strings"
	"testing"

	"pgregory.net/rapid"
)

func TestString(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"redis://:Pw55zz@127.0.0.1:6379/0", "redis://:[REDACTED:url-password]@127.0.0.1:6379/0"},
		{"redis://user:Pw55zz@127.0.0.1:1/notanumber", "redis://user:[REDACTED:url-password]@127.0.0.1:1/notanumber"},
		{"redis://user:Pw55zz@[::1:1/0", "redis://user:[REDACTED:url-password]@[::1:1/0"},
		{"http://admin:Hunter2Secret99@127.0.0.1:9901", "http://admin:[REDACTED:url-password]@127.0.0.1:9901"},
		{"https://ghp_token123456@github.com/x", "https://[REDACTED:url-password]@github.com/x"},
		{"http://u:p/w?x#y@host:80/v1", "http://u:[REDACTED:url-password]@host:80/v1"},
		{"http://user:12345?x@host", "http://user:[REDACTED:url-password]@host"},
		{"http://u:p%40ss@host", "http://u:[REDACTED:url-password]@host"},
		{"https://api.openai.com/v1", "https://api.openai.com/v1"},
		{"http://host:8080/path", "http://host:8080/path"},
		{".compact/checkpoints", ".compact/checkpoints"},
		{"/tmp/a:b@c", "/tmp/a:b@c"},
		{"", ""},
		{"redis://:@host", "redis://:@host"},
	} {
		if got := String(c.in); got != c.want {
			t.Errorf("String(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// TestTextOfLibraryErrors: the parse errors of net/url quote the whole
// URL; Text masks the password in them, in any form.
func TestTextOfLibraryErrors(t *testing.T) {
	for _, raw := range []string{
		"redis://user:RedisPw55zz@[::1:1/0",
		"http://admin:Hunter\"2Secret99@host:notaport",
		"http://admin:p%40ssW0rd99@host:notaport",
		"http://u:Tab\tSecret99@host",
		"rediss://user:Secret99#/x@127.0.0.1:1/0",
	} {
		_, err := url.Parse(raw)
		if err == nil {
			t.Fatalf("%q parses", raw)
		}
		wrapped := Error(fmt.Errorf("open %q: %w", raw, err), raw)
		msg := wrapped.Error()
		for _, leak := range []string{"RedisPw55zz", "Secret99", "p@ssW0rd99", "p%40ssW0rd99"} {
			if strings.Contains(msg, leak) {
				t.Errorf("%q: %s", raw, msg)
			}
		}
		var ue *url.Error
		if !errors.As(wrapped, &ue) {
			t.Errorf("%q: the masked error does not unwrap to the *url.Error", raw)
		}
	}
	if err := Error(fs.ErrNotExist, "redis://:Secret99@h"); err != fs.ErrNotExist {
		t.Errorf("an error without the URL changed: %v", err)
	}
	if Error(nil, "x") != nil {
		t.Error("Error(nil) != nil")
	}
	if got := Text("dial a host", "redis://:a@h"); got != "dial a host" {
		t.Errorf("a 1-byte password masked ordinary text: %q", got)
	}
}

// TestNoPasswordSurvives: for any password, String drops it and Text
// drops it from a message that quotes the URL.
func TestNoPasswordSurvives(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		pw := rapid.StringMatching(`[A-Za-z0-9!$&'()*+,;=._~%/?#\[\]-]{4,24}`).Draw(t, "pw")
		if !strings.ContainsAny(pw, "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789") || strings.Contains(pw, "@") {
			return
		}
		scheme := rapid.SampledFrom([]string{"redis", "rediss", "http", "https"}).Draw(t, "scheme")
		user := rapid.SampledFrom([]string{"", "user"}).Draw(t, "user")
		rest := rapid.SampledFrom([]string{"127.0.0.1:6379/0", "host", "[::1]:80/v1", "[::1:1/0", "h:notaport"}).Draw(t, "rest")
		raw := scheme + "://" + user + ":" + pw + "@" + rest
		if s := String(raw); strings.Contains(s, pw) {
			t.Fatalf("String(%q) = %q", raw, s)
		}
		_, err := url.Parse(raw)
		msg := fmt.Sprintf("store %q: %v", raw, err)
		if s := Text(msg, raw); strings.Contains(s, pw) {
			t.Fatalf("Text: %q", s)
		}
	})
}
