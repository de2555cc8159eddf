package redact

import (
	"hash/maphash"
	"strconv"
	"strings"
	"sync"
)

// A mask reads [REDACTED:label#n]: the rule that found the secret and a
// number that stays the same for the same secret within one scope (one
// call, one transcript, or a Scope's calls). Numbers follow the order in
// which secrets are first met in the scope's content, after those of the
// masks that content already holds: the same content gets the same masks,
// whatever the Redactor did before, and a new secret never takes the
// number of an old mask. A mask holds nothing an agent could paste back as
// a credential, and no byte that needs escaping in JSON, YAML or a shell
// word.

// maskAt reports whether a mask starts at s[i:], and where it ends.
func maskAt(s string, i int) (int, bool) {
	rest := s[i:]
	if !strings.HasPrefix(rest, maskKeyword) {
		return 0, false
	}
	j := len(maskKeyword)
	if j < len(rest) && rest[j] == ']' { // "[REDACTED]", a common hand-written mask
		return i + j + 1, true
	}
	if j >= len(rest) || rest[j] != ':' {
		return 0, false
	}
	j++
	labelStart := j
	for j < len(rest) && isLabelByte(rest[j]) {
		j++
	}
	if j == labelStart || j > labelStart+64 {
		return 0, false
	}
	if j < len(rest) && rest[j] == '#' {
		j++
		d := j
		for j < len(rest) && rest[j] >= '0' && rest[j] <= '9' {
			j++
		}
		if j == d {
			return 0, false
		}
	}
	if j < len(rest) && rest[j] == ']' {
		return i + j + 1, true
	}
	return 0, false
}

func isLabelByte(c byte) bool {
	return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_' || c == '.'
}

// sanitizeLabel turns a rule id into a mask label: lowercase letters,
// digits, '-', '_' and '.', at most 64 bytes.
func sanitizeLabel(id string) string {
	var b strings.Builder
	for _, c := range []byte(strings.ToLower(id)) {
		if isLabelByte(c) {
			b.WriteByte(c)
		} else {
			b.WriteByte('-')
		}
		if b.Len() == 64 {
			break
		}
	}
	if b.Len() == 0 {
		return "secret"
	}
	return b.String()
}

// masker numbers the masks of one scope. A secret is known by a 128-bit
// keyed hash, never by its text, so the registry holds no secret; the keys
// are random, but numbers depend only on the order secrets are met.
type masker struct {
	seed1, seed2 maphash.Seed
	mu           sync.Mutex
	bySecret     map[[2]uint64]string
	count        map[string]int
	// parent is a draft's: the masker whose numbers the draft continues
	// without changing them (see draft).
	parent *masker
}

func newMasker() *masker {
	return &masker{
		seed1:    maphash.MakeSeed(),
		seed2:    maphash.MakeSeed(),
		bySecret: map[[2]uint64]string{},
		count:    map[string]int{},
	}
}

// reserve notes the masks text already holds: new secrets are numbered
// after them.
func (m *masker) reserve(text string) {
	for i := 0; ; {
		j := strings.Index(text[i:], maskKeyword)
		if j < 0 {
			return
		}
		at := i + j
		i = at + len(maskKeyword)
		end, ok := maskAt(text, at)
		if !ok {
			continue
		}
		mask := text[at:end]
		h := strings.LastIndexByte(mask, '#')
		if h < 0 {
			continue
		}
		label := mask[len(maskKeyword)+1 : h]
		n, err := strconv.Atoi(mask[h+1 : len(mask)-1])
		if err != nil || n > 1<<30 {
			continue
		}
		m.mu.Lock()
		if c, ok := m.count[label]; !ok || n > c {
			// A copy: text may be a buffer that is reused (RedactTextTo).
			m.count[strings.Clone(label)] = n
		}
		m.mu.Unlock()
		i = end
	}
}

// draft returns a masker that numbers as m would from here on, and
// leaves m as it is: the masks a rescan reads (see Redactor.find) are
// drawn from a draft, so that numbers are given only to the secrets
// finally masked, in the order they appear. A text read a piece at a time
// then gets the numbers the whole text gets (see RedactTextTo).
func (m *masker) draft() *masker {
	return &masker{seed1: m.seed1, seed2: m.seed2, bySecret: map[[2]uint64]string{}, count: map[string]int{}, parent: m}
}

// lookup returns the mask m gave the secret keyed key, if any.
func (m *masker) lookup(key [2]uint64) (string, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	s, ok := m.bySecret[key]
	return s, ok
}

// countOf returns the last number m gave label.
func (m *masker) countOf(label string) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.count[label]
}

// mask returns the mask for secret found by a rule labelled label. The first
// label a secret is seen with is kept, so it reads the same everywhere.
func (m *masker) mask(label, secret string) string {
	key := [2]uint64{maphash.String(m.seed1, secret), maphash.String(m.seed2, secret)}
	m.mu.Lock()
	defer m.mu.Unlock()
	if s, ok := m.bySecret[key]; ok {
		return s
	}
	if m.parent != nil {
		if s, ok := m.parent.lookup(key); ok {
			return s
		}
		if _, ok := m.count[label]; !ok {
			m.count[label] = m.parent.countOf(label)
		}
	}
	m.count[label]++
	s := "[REDACTED:" + label + "#" + strconv.Itoa(m.count[label]) + "]"
	m.bySecret[key] = s
	return s
}
