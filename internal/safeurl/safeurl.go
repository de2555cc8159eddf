// Package safeurl masks, in the text of an error, the password of one URL
// the caller knows (a checkpoint store, an upstream, an LLM base URL):
// net/url and go-redis quote the URL they could not parse whole, escaped
// by %q, or cut where they stopped, and a password may be percent-encoded.
// redact.MaskURLs finds the passwords of URLs in any text; Text and Error
// add the forms only the caller's knowing the URL can find.
package safeurl

import (
	"net/url"
	"strconv"
	"strings"

	"github.com/compactkit/compact/redact"
)

// Mask replaces a password: redact.MaskURLs' mask.
const Mask = "[REDACTED:url-password]"

// minForm is the shortest password Text masks wherever it appears in a
// message, not only inside the URL: a shorter one would mask ordinary
// words, and guards nothing.
const minForm = 4

// String returns raw with its password masked, for printing: as
// redact.MaskURLs masks it, or, where MaskURLs does not take raw for a URL
// with a password (user information alone, a password holding a quote), at
// the span net/url's reading, or failing that the last '@', gives it. A
// string without "://" (a directory) is returned as it is.
func String(raw string) string { return Text(raw, raw) }

// span is the place of a URL's secret: its password, or its user
// information when it has no password.
type span struct{ start, end int }

// secret finds the secret of raw, or false when it has none.
func secret(raw string) (span, bool) {
	i := strings.Index(raw, "://")
	if i < 0 {
		return span{}, false
	}
	auth := i + 3
	u, err := url.Parse(raw)
	if err == nil && u.User == nil && !strings.Contains(raw[auth:], "@") {
		return span{}, false
	}
	if err == nil && u.User != nil {
		// A URL that parses has no unescaped '@' in its user
		// information: its authority ends at the first one.
		at := auth + strings.IndexByte(raw[auth:], '@')
		if _, has := u.User.Password(); !has {
			return span{auth, at}, at > auth
		}
		colon := auth + strings.IndexByte(raw[auth:at], ':')
		return span{colon + 1, at}, at > colon+1
	}
	at := strings.LastIndexByte(raw, '@')
	if at < auth {
		return span{}, false
	}
	colon := strings.IndexByte(raw[auth:at], ':')
	if colon < 0 {
		return span{auth, at}, at > auth // user information alone
	}
	return span{auth + colon + 1, at}, at > auth+colon+1
}

// Text returns s with raw's secret masked, wherever s has it: raw itself
// becomes redact.MaskURLs(raw), in any quoting; other URLs in s are masked
// by redact.MaskURLs; and a secret of 4 bytes or more is
// masked as written, percent-decoded, and as %q quotes it, and so is each
// piece of 4 bytes or more between its '#', '?' and '/'. It is for the
// messages of other packages that may quote raw.
func Text(s, raw string) string {
	sp, ok := secret(raw)
	if !ok {
		return redact.MaskURLs(s)
	}
	safe := redact.MaskURLs(raw)
	if safe == raw {
		// A URL MaskURLs does not take for one (user information
		// without a host after it): masked at the span secret found.
		safe = raw[:sp.start] + Mask + raw[sp.end:]
	}
	s = strings.ReplaceAll(s, raw, safe)
	s = strings.ReplaceAll(s, quoted(raw), quoted(safe))
	pw := raw[sp.start:sp.end]
	// A parser quotes what it took for the URL: it may have cut a
	// password with '#', '?' or '/' at one of them.
	forms := append([]string{pw}, strings.FieldsFunc(pw, func(r rune) bool { return r == '#' || r == '?' || r == '/' })...)
	if dec, err := url.PathUnescape(pw); err == nil && dec != pw {
		forms = append(forms, dec)
	}
	for _, f := range forms {
		if q := quoted(f); q != f {
			forms = append(forms, q)
		}
	}
	for _, f := range forms {
		if len(f) >= minForm {
			s = strings.ReplaceAll(s, f, Mask)
		}
	}
	return redact.MaskURLs(s)
}

// quoted is s as it appears inside a %q.
func quoted(s string) string {
	q := strconv.Quote(s)
	return q[1 : len(q)-1]
}

// Error returns err with raw's secret masked in its text (see Text); it
// still unwraps to err, so errors.Is and errors.As see through it. Nil
// stays nil.
func Error(err error, raw string) error {
	if err == nil {
		return nil
	}
	msg := Text(err.Error(), raw)
	if msg == err.Error() {
		return err
	}
	return &maskedError{msg: msg, err: err}
}

type maskedError struct {
	msg string
	err error
}

func (e *maskedError) Error() string { return e.msg }
func (e *maskedError) Unwrap() error { return e.err }
