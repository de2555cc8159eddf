package llm

import (
	"strings"

	"github.com/compactkit/compact/internal/safeurl"
	"github.com/compactkit/compact/redact"
)

// keyMask replaces the configured API key, or a long piece of it, in text
// from the provider.
const keyMask = "[REDACTED:api-key]"

// minKeyPiece is the shortest run of the API key masked when a provider
// echoes only part of it (a key cut short, or split by its own masking).
const minKeyPiece = 12

// masker hides, in what a provider sends back, the API key (as an exact
// value, whatever the redactor's rules), the base URL's password, and
// every secret the redactor finds: providers echo keys and prompts in
// their error messages, and net/url quotes a URL it cannot parse whole.
type masker struct {
	key     string
	baseURL string
	r       *redact.Redactor
}

func newMasker(key, baseURL string, r *redact.Redactor) *masker {
	return &masker{key: key, baseURL: baseURL, r: r}
}

// clean returns s with the key and secrets masked.
func (m *masker) clean(s string) string {
	s = safeurl.Text(s, m.baseURL)
	if len(m.key) >= 4 {
		s = strings.ReplaceAll(s, m.key, keyMask)
	}
	if len(m.key) >= minKeyPiece {
		s = m.maskPieces(s)
	}
	if m.r != nil {
		s = m.r.String(s)
	}
	return s
}

// maskPieces masks every run of key characters of at least minKeyPiece
// bytes that is part of the key.
func (m *masker) maskPieces(s string) string {
	var b strings.Builder
	last := 0
	for i := 0; i < len(s); {
		if !keyByte(s[i]) {
			i++
			continue
		}
		j := i
		for j < len(s) && keyByte(s[j]) {
			j++
		}
		if j-i >= minKeyPiece && strings.Contains(m.key, s[i:j]) {
			b.WriteString(s[last:i])
			b.WriteString(keyMask)
			last = j
		}
		i = j
	}
	if last == 0 {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
}

func keyByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_'
}

// wrap returns err with its message cleaned, still unwrapping to err.
func (m *masker) wrap(err error) error {
	if err == nil {
		return nil
	}
	return redact.MaskedError(err, m.clean(err.Error()))
}
