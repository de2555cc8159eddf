package fallback

import (
	"strings"
	"sync"

	"github.com/compactkit/compact/format"
	"github.com/compactkit/compact/internal/keyword"
)

// sentences splits prose into sentences and list items, skipping fenced
// code blocks, headings and bold titles. A sentence ends at '.', '!' or
// '?' followed by a space and something that starts a sentence, or at a
// line break. fn gets each sentence with its byte offset in s.
func sentences(s string, fn func(off int, sentence string)) {
	inFence := false
	for base := 0; base < len(s); {
		end := strings.IndexByte(s[base:], '\n')
		if end < 0 {
			end = len(s)
		} else {
			end += base
		}
		line := s[base:end]
		off := base
		base = end + 1
		t := strings.TrimLeft(line, " \t\r")
		off += len(line) - len(t)
		t = strings.TrimRight(t, " \t\r")
		if strings.HasPrefix(t, "```") || strings.HasPrefix(t, "~~~") {
			inFence = !inFence
			continue
		}
		if inFence || t == "" || strings.HasPrefix(t, "#") {
			continue // code, blank lines and headings are not sentences
		}
		if len(t) > 4 && strings.HasPrefix(t, "**") && strings.HasSuffix(t, "**") {
			continue // a bold title
		}
		u := strings.TrimLeft(t, "-*+>• ")
		off += len(t) - len(u)
		if n := numberedPrefix(u); n > 0 {
			u, off = u[n:], off+n
		}
		v := strings.TrimLeft(u, " \t")
		splitLine(off+len(u)-len(v), v, fn)
	}
}

func numberedPrefix(t string) int {
	i := 0
	for i < len(t) && t[i] >= '0' && t[i] <= '9' {
		i++
	}
	if i > 0 && i < 3 && i+1 < len(t) && (t[i] == '.' || t[i] == ')') && t[i+1] == ' ' {
		return i + 2
	}
	return 0
}

// splitLine splits one line of prose, found at offset off, into sentences.
func splitLine(off int, t string, fn func(int, string)) {
	emit := func(a, b int) {
		seg := t[a:b]
		trimmed := strings.TrimLeft(seg, " ")
		if trimmed = strings.TrimRight(trimmed, " "); trimmed != "" {
			fn(off+a+len(seg)-len(strings.TrimLeft(seg, " ")), trimmed)
		}
	}
	start := 0
	inCode, inFence := false, false
	for i := 0; i < len(t); i++ {
		c := t[i]
		if c == '`' {
			n := 1
			for i+n < len(t) && t[i+n] == '`' {
				n++
			}
			switch {
			case n >= 3 && inFence:
				// A fence closed inside the line ("…```Lets look"): the
				// code ends a sentence.
				inFence = false
				emit(start, i+n)
				start = i + n
			case n >= 3:
				inFence = true
			case !inFence:
				inCode = !inCode
			}
			i += n - 1
			continue
		}
		if inCode || inFence {
			continue
		}
		if c == ':' {
			// "…the next line `x`:In Perl, …": a colon glued to a
			// capitalised word is a line break that was lost.
			if i > 0 && t[i-1] != ' ' && i+2 < len(t) && t[i+1] >= 'A' && t[i+1] <= 'Z' && t[i+2] >= 'a' && t[i+2] <= 'z' {
				emit(start, i+1)
				start = i + 1
			}
			continue
		}
		if c != '.' && c != '!' && c != '?' {
			continue
		}
		// End of sentence: punctuation, then space, then a sentence start.
		j := i + 1
		for j < len(t) && (t[j] == '.' || t[j] == '!' || t[j] == '?' || t[j] == '"' || t[j] == ')') {
			j++
		}
		if j >= len(t) {
			break
		}
		if t[j] != ' ' || j+1 >= len(t) {
			// "…the input data.Now I will…": text whose line breaks were
			// lost. Split where a lower-case word ends and a capitalised
			// one starts.
			if c == '.' && j == i+1 && glued(t, i) {
				emit(start, i+1)
				start = i + 1
			}
			continue
		}
		next := t[j+1]
		if !(next >= 'A' && next <= 'Z' || next == '`' || next == '"' || next == '*' || next >= '0' && next <= '9' || next >= 0x80) {
			continue
		}
		if abbreviation(t[start:i]) {
			continue
		}
		emit(start, j)
		start = j + 1
		i = j
	}
	emit(start, len(t))
}

// abbreviation reports whether the text before a period ends in a common
// abbreviation (e.g., i.e., etc.) rather than a sentence.
func abbreviation(before string) bool {
	k := strings.LastIndexByte(before, ' ')
	w := strings.ToLower(before[k+1:])
	switch w {
	case "e.g", "i.e", "etc", "vs", "mr", "dr", "no", "approx", "cf", "incl", "fig":
		return true
	}
	return false
}

// Cue words that make an agent's sentence a finding or a choice worth
// carrying over, rather than narration of the next tool call.
var (
	findingCues = []string{"the issue", "the problem", "the bug", "root cause", "because", "caus", "the reason",
		"turns out", "this means", "which means", "in reality", "so the ", "so our ", "i see", "i can see", "i found",
		"found that", "notice", "realiz", "the fix", "fixed", "works", "introduced", "confirm", "the culprit",
		"instead of", "should be", "needs to", "is that", "is not", "are not", "that means", "therefore", "thus ",
		"i can't", "i can’t", "i cannot", "i'm unable", "i am unable", "i won't", "i won’t", "not able to",
		"duplicat", "incorrect", "wrong", "broken", "missing", "not correctly", "doesn't exist", "does not exist"}
	contrastCues = []string{"but ", "however", "unless", "only ", "not ", "n't", "n’t", "never", "no ", "instead",
		"rather than", "actually", "already", "still ", "without", "missing", "wrong", "incorrect", "duplicat", "also "}
	choiceCues = []string{"decid", "i'll use", "we'll use", "i will use", "going with", "approach", "chose", "choose",
		"prefer", "plan is", "the plan", "strategy", "option"}
	narrationStarts = []string{"let me ", "now let me ", "let's ", "now let's ", "i'll ", "i will ", "now i'll ",
		"next, ", "first, ", "then ", "great", "perfect", "excellent", "good", "ok", "okay", "now ", "done"}
)

// Cue groups, as bits of a sentence's cue set.
const (
	cueFinding uint32 = 1 << iota
	cueContrast
	cueChoice
	cueSpeculation
)

// cueMatcher finds the cue phrases of every group in one pass.
var cueMatcher = sync.OnceValue(func() *keyword.Matcher {
	phrases := map[string]uint32{}
	for _, g := range []struct {
		bit     uint32
		phrases []string
	}{{cueFinding, findingCues}, {cueContrast, contrastCues}, {cueChoice, choiceCues}, {cueSpeculation, speculation}} {
		for _, p := range g.phrases {
			phrases[p] |= g.bit
		}
	}
	return keyword.New(keyword.Tagged(phrases), true)
})

// hotMatcher finds the window's hot names (case-sensitive); name i is tag
// bit i.
func hotMatcher(hot []string) *keyword.Matcher {
	if len(hot) == 0 {
		return nil
	}
	phrases := map[string]uint32{}
	for i, h := range hot[:min(len(hot), 32)] {
		phrases[h] |= 1 << i
	}
	return keyword.New(keyword.Tagged(phrases), false)
}

// cueHit is where a cue phrase or a hot name ends in a text.
type cueHit struct {
	end   int
	cues  uint32
	names uint32
}

// findCues finds every cue phrase and hot name in text, in order of
// position.
func findCues(text string, hot *keyword.Matcher) []cueHit {
	var hits []cueHit
	cueMatcher().Ends(text, func(end int, t uint32) { hits = append(hits, cueHit{end: end, cues: t}) })
	if hot == nil {
		return hits
	}
	var names []cueHit
	hot.Ends(text, func(end int, t uint32) { names = append(names, cueHit{end: end, names: t}) })
	merged := make([]cueHit, 0, len(hits)+len(names))
	i, j := 0, 0
	for i < len(hits) || j < len(names) {
		if j == len(names) || i < len(hits) && hits[i].end <= names[j].end {
			merged = append(merged, hits[i])
			i++
		} else {
			merged = append(merged, names[j])
			j++
		}
	}
	return merged
}

// cueCursor walks a text's cue hits along its sentences, which come in
// order of position.
type cueCursor struct {
	hits []cueHit
	next int
}

// within returns the cue groups and the number of distinct hot names
// (counted up to two) that end inside [off, off+n).
func (c *cueCursor) within(off, n int) (cues, names int) {
	for c.next < len(c.hits) && c.hits[c.next].end <= off {
		c.next++
	}
	var nameBits uint32
	for i := c.next; i < len(c.hits) && c.hits[i].end <= off+n; i++ {
		cues |= int(c.hits[i].cues)
		nameBits |= c.hits[i].names
	}
	switch {
	case nameBits == 0:
	case nameBits&(nameBits-1) == 0:
		names = 1
	default:
		names = 2
	}
	return cues, names
}

// decisionScore rates a sentence of the agent's as a decision or finding:
// cue words, then specificity (code spans, quotes, stressed words), minus
// narration ("Let me check …"), questions and speculation.
func decisionScore(s string) int {
	return scoreSentence(s, int(cueMatcher().Tags(s)))
}

// scoreSentence scores a sentence given the cue groups found in it.
func scoreSentence(s string, cues int) int {
	if len(s) >= 2 && s[0] == '`' && s[len(s)-1] == '`' && strings.Count(s, "`") == 2 {
		return 0 // a bare code span: a command or a name, not a statement
	}
	const (
		finding     = int(cueFinding)
		contrast    = int(cueContrast)
		choice      = int(cueChoice)
		speculative = int(cueSpeculation)
	)
	if len(s) < 20 {
		return 0
	}
	score := 0
	isFinding := cues&finding != 0 || hasPrefixFold(s, "so ") || hasPrefixFold(s, "this is because")
	if isFinding {
		score += 3
	}
	if cues&contrast != 0 {
		score += 2
	}
	if cues&choice != 0 {
		score += 2
	}
	if strings.Count(s, "`") >= 2 {
		score += 2
	}
	if quoted(s) {
		score++
	}
	if shouting(s) {
		score++
	}
	narration := hasPrefixFoldAny(s, narrationStarts)
	// What the agent concluded outweighs what it means to do next: the
	// actions that followed say what it did.
	switch opening(s) {
	case openConclusion:
		score++
	case openIntent:
		score--
	}
	switch {
	case narration && strings.HasSuffix(s, ":") && hasPrefixFold(s, "now let") || hasPrefixFold(s, "let me") && strings.HasSuffix(s, ":"):
		return 0 // "Now let me run the tests:": the call says it all
	case !isFinding:
		if narration {
			score -= 2
		}
		if strings.HasSuffix(s, ":") {
			score-- // introduces a list or a command
		}
	}
	if strings.HasSuffix(s, "?") {
		score -= 2 // a question is not a decision
	}
	if cues&speculative != 0 || hasPrefixFold(s, "if ") || hasPrefixFold(s, "wait") {
		score--
	}
	if len(s) > 400 {
		score--
	}
	return score
}

// Openings of a sentence, after discourse words ("Now", "So", "But").
const (
	openOther = iota
	openConclusion
	openIntent
)

// conclusionStarts open a sentence that states what the agent inferred.
var conclusionStarts = []string{"so ", "this means", "that means", "which means", "therefore", "thus", "hence",
	"it turns out", "turns out", "the issue is", "the problem is", "the bug is", "the root cause", "the reason",
	"this confirms", "that confirms", "this explains", "that explains", "this is because", "that's because",
	"that is because", "this shows", "that shows"}

// intentStarts open a sentence about what the agent means to do.
// ("We can …" is left out: it as often states what the agent found it is
// able to do.)
var intentStarts = []string{"we need", "i need", "we'll", "i'll", "we will", "i will", "we should", "i should",
	"let's", "lets ", "let me", "we have to", "i have to", "i'm going", "we're going", "i am going", "we are going",
	"i want", "we want", "better to", "we'd", "i'd", "we also need", "i also need", "we still need", "i still need"}

// discourseStarts are dropped before an opening is classified.
var discourseStarts = []string{"now, ", "now ", "then, ", "then ", "next, ", "next ", "but ", "and ", "also, ", "also ",
	"actually, ", "actually ", "however, ", "ok, ", "okay, ", "first, ", "finally, ", "instead, ", "alternatively, ",
	"great, ", "good, ", "perfect, ", "hmm, ", "wait, "}

// opening classifies how a sentence opens: a conclusion ("So the bug is
// …", "This means …"), an intent ("Now we need to …", "Let's …"), or
// anything else.
func opening(s string) int {
	l := s
	for stripped := true; stripped; {
		stripped = false
		for _, d := range discourseStarts {
			if hasPrefixFold(l, d) {
				l, stripped = l[len(d):], true
				break
			}
		}
		if hasPrefixFold(l, "so ") && hasPrefixFoldAny(l[3:], intentStarts) {
			l, stripped = l[3:], true // "So we need to …" is an intent
		}
	}
	switch {
	case hasPrefixFoldAny(l, intentStarts):
		return openIntent
	case hasPrefixFoldAny(l, conclusionStarts):
		return openConclusion
	}
	return openOther
}

func hasPrefixAny(s string, prefixes []string) bool {
	for _, p := range prefixes {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}

// hasPrefixFold reports whether s starts with prefix, ignoring ASCII case;
// prefix is in lower case. Unlike a lowered copy, it allocates nothing.
func hasPrefixFold(s, prefix string) bool {
	if len(s) < len(prefix) {
		return false
	}
	for i := 0; i < len(prefix); i++ {
		c := s[i]
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != prefix[i] {
			return false
		}
	}
	return true
}

func hasPrefixFoldAny(s string, prefixes []string) bool {
	if s == "" {
		return false
	}
	c := s[0]
	if c >= 'A' && c <= 'Z' {
		c += 'a' - 'A'
	}
	for _, p := range prefixes {
		if p[0] == c && hasPrefixFold(s, p) {
			return true
		}
	}
	return false
}

// quoted reports a sentence holding a quotation mark, straight or curly.
func quoted(s string) bool {
	return strings.IndexByte(s, '"') >= 0 || strings.Contains(s, "“") || strings.Contains(s, "”")
}

var speculation = []string{"maybe", "perhaps", "might ", "possibly", "i think", "probably", "let me think", "hmm", "i wonder", "not sure"}

// shouting reports a word of four or more capitals (EXECUTE, ONLY): agents
// stress what they have found.
func shouting(s string) bool {
	run := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 'A' && c <= 'Z' {
			run++
			if run >= 4 && (i+1 == len(s) || !isLetterOrDigit(s[i+1]) && s[i+1] != '_') {
				start := i - run
				if start < 0 || !isLetterOrDigit(s[start]) && s[start] != '_' {
					return true
				}
			}
			continue
		}
		run = 0
	}
	return false
}

// Cue words of a user's rule or revision.
var ruleCues = []string{"don't", "don’t", "do not", "never", "must", "always", "instead", "only ", "only.", "should",
	"make sure", "avoid", "without", "no need", "not the", "rather", "prefer", "please don", "stop ", "keep ",
	"no more", "no longer", "not use", "not to", "shouldn't", "can't", "cannot", "mustn't", "wrong", "not what"}

// ruleMatcher finds rule cues in one pass, ignoring ASCII case.
var ruleMatcher = sync.OnceValue(func() *keyword.Matcher { return keyword.New(keyword.Words(ruleCues), true) })

// revisionStarts open a message that corrects an earlier ask.
var revisionStarts = []string{"no,", "no ", "not ", "actually", "instead", "wait", "rather", "never mind", "nevermind",
	"scratch that", "change ", "hmm", "that's not", "thats not", "that is not", "undo", "revert", "stop"}

// constraintSentences returns the parts of a user's ask that state a rule
// or revise an earlier ask, verbatim: the whole ask when it opens as a
// correction or is one sentence, otherwise each sentence holding a rule
// word.
func constraintSentences(ask string) []string {
	ask = strings.TrimSpace(ask)
	if hasPrefixFoldAny(ask, revisionStarts) {
		return []string{ask}
	}
	if !ruleMatcher().Contains(ask) {
		return nil
	}
	var all, rules []string
	sentences(ask, func(_ int, s string) {
		all = append(all, s)
		if ruleMatcher().Contains(s) {
			rules = append(rules, s)
		}
	})
	if len(all) == 1 && len(ask) <= 400 {
		return []string{ask}
	}
	return rules
}

// askText returns what the person asked in a user message's text (the
// harness's parts are left out by the caller: the readers tag them).
// An IDE extension may wrap each ask in context (format.SplitIDEAsk): the
// ask is what follows the last marker, and ide gets the wrapper. (The
// reader keeps the message whole, as the person's; see format's codex.go.)
func askText(text string) (ask, ide string) {
	t := strings.TrimSpace(text)
	if ide, ask, ok := format.SplitIDEAsk(t); ok {
		return strings.TrimSpace(ask), ide
	}
	return t, ""
}

// glued reports a period at i between a lower-case word of three or more
// letters and a capitalised word ("data.Now"), as left by text whose line
// breaks were dropped.
func glued(t string, i int) bool {
	if i+2 >= len(t) || !(t[i+1] >= 'A' && t[i+1] <= 'Z') || !(t[i+2] >= 'a' && t[i+2] <= 'z' || t[i+2] == ' ') {
		return false
	}
	n := 0
	for k := i - 1; k >= 0 && t[k] >= 'a' && t[k] <= 'z'; k-- {
		n++
	}
	return n >= 3 && (i-n == 0 || t[i-n-1] == ' ')
}

// asciiLower lower-cases ASCII letters only, so byte offsets still match.
func asciiLower(s string) string {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c >= 'A' && c <= 'Z' {
			b := []byte(s)
			for j := i; j < len(b); j++ {
				if b[j] >= 'A' && b[j] <= 'Z' {
					b[j] += 'a' - 'A'
				}
			}
			return string(b)
		}
	}
	return s
}
