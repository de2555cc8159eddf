package redact

import "testing"

func TestMaskURLs(t *testing.T) {
	tests := []struct{ in, want string }{
		{"open checkpoint store redis://:Hunter2x9@cache:6379/0: connection refused",
			"open checkpoint store redis://:[REDACTED:url-password]@cache:6379/0: connection refused"},
		{"--base-url http://user:p@ss#w/rd@gw.internal:8080/v1", "--base-url http://user:[REDACTED:url-password]@gw.internal:8080/v1"},
		{"https://gw.example/v1?api_key=abc12&model=x", "https://gw.example/v1?api_key=[REDACTED:api-key]&model=x"},
		{"https://gw.example/v1?key=${KEY}", "https://gw.example/v1?key=${KEY}"},
		{"https://example.com/a:b/c and redis://cache:6379", "https://example.com/a:b/c and redis://cache:6379"},
		{"postgres://u:[REDACTED:url-password]@db/x", "postgres://u:[REDACTED:url-password]@db/x"},
		{"a://b:c@d://e:f@g", "a://b:[REDACTED:url-password]@d://e:[REDACTED:url-password]@g"},
		{"no url here", "no url here"},
	}
	for _, tt := range tests {
		if got := MaskURLs(tt.in); got != tt.want {
			t.Errorf("MaskURLs(%q)\n got %q\nwant %q", tt.in, got, tt.want)
		}
		if got := MaskURLs(MaskURLs(tt.in)); got != MaskURLs(tt.in) {
			t.Errorf("MaskURLs not idempotent on %q: %q", tt.in, got)
		}
	}
}

func FuzzMaskURLs(f *testing.F) {
	f.Add("redis://:pw@h:1/0?token=x&a=b")
	f.Add("a://b:c@d://")
	f.Fuzz(func(t *testing.T, s string) {
		out := MaskURLs(s)
		if again := MaskURLs(out); again != out {
			t.Fatalf("not idempotent: %q -> %q -> %q", s, out, again)
		}
	})
}
