package fallback

import (
	"strings"
)

// sentences splits prose into sentences and list items, skipping fenced
// code blocks. A sentence ends at '.', '!' or '?' followed by a space and
// something that starts a sentence, at a colon that ends a line, or at a
// line break.
func sentences(s string, fn func(string)) {
	inFence := false
	for s != "" {
		line, rest, _ := strings.Cut(s, "\n")
		s = rest
		t := strings.TrimSpace(line)
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
		t = strings.TrimLeft(t, "-*+>• ")
		if n := numberedPrefix(t); n > 0 {
			t = t[n:]
		}
		splitLine(strings.TrimSpace(t), fn)
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

// splitLine splits one line of prose into sentences.
func splitLine(t string, fn func(string)) {
	start := 0
	inCode := false
	for i := 0; i < len(t); i++ {
		c := t[i]
		if c == '`' {
			inCode = !inCode
			continue
		}
		if inCode || c != '.' && c != '!' && c != '?' {
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
				if s := strings.TrimSpace(t[start : i+1]); s != "" {
					fn(s)
				}
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
		if s := strings.TrimSpace(t[start:j]); s != "" {
			fn(s)
		}
		start = j + 1
		i = j
	}
	if s := strings.TrimSpace(t[start:]); s != "" {
		fn(s)
	}
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
		"instead of", "we can ", "will now", "should be", "needs to", "need to", "is that", "is not", "are not",
		"i can't", "i can’t", "i cannot", "i'm unable", "i am unable", "i won't", "i won’t", "not able to",
		"duplicat", "incorrect", "wrong", "broken", "missing", "not correctly", "doesn't exist", "does not exist"}
	contrastCues = []string{"but ", "however", "unless", "only ", "not ", "n't", "n’t", "never", "no ", "instead",
		"rather than", "actually", "already", "still ", "without", "missing", "wrong", "incorrect", "duplicat", "also "}
	choiceCues = []string{"decid", "i'll use", "we'll use", "i will use", "going with", "approach", "chose", "choose",
		"prefer", "plan is", "the plan", "strategy", "option"}
	narrationStarts = []string{"let me ", "now let me ", "let's ", "now let's ", "i'll ", "i will ", "now i'll ",
		"next, ", "first, ", "then ", "great", "perfect", "excellent", "good", "ok", "okay", "now ", "done"}
)

// decisionScore rates a sentence of the agent's as a decision or finding:
// cue words, then specificity (code spans, quotes, stressed words), minus
// narration ("Let me check …"), questions and speculation.
func decisionScore(s string) int {
	if len(s) < 20 {
		return 0
	}
	l := strings.ToLower(s)
	score := 0
	finding := hasAny(l, findingCues) || strings.HasPrefix(l, "so ") || strings.HasPrefix(l, "this is because")
	if finding {
		score += 3
	}
	if hasAny(l, contrastCues) {
		score += 2
	}
	if hasAny(l, choiceCues) {
		score += 2
	}
	if strings.Count(s, "`") >= 2 {
		score += 2
	}
	if strings.ContainsAny(s, "\"“”") {
		score++
	}
	if shouting(s) {
		score++
	}
	if !finding {
		for _, c := range narrationStarts {
			if strings.HasPrefix(l, c) {
				score -= 2
				break
			}
		}
		if strings.HasSuffix(s, ":") {
			score-- // introduces a list or a command
		}
	}
	if strings.HasSuffix(s, "?") {
		score -= 2 // a question is not a decision
	}
	if hasAny(l, speculation) || strings.HasPrefix(l, "if ") || strings.HasPrefix(l, "wait") {
		score--
	}
	if len(s) > 400 {
		score--
	}
	return score
}

var speculation = []string{"maybe", "perhaps", "might ", "possibly", "i think", "probably", "let me think", "hmm", "i wonder", "not sure"}

func hasAny(l string, cues []string) bool {
	for _, c := range cues {
		if strings.Contains(l, c) {
			return true
		}
	}
	return false
}

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

// revisionStarts open a message that corrects an earlier ask.
var revisionStarts = []string{"no,", "no ", "not ", "actually", "instead", "wait", "rather", "never mind", "nevermind",
	"scratch that", "change ", "hmm", "that's not", "thats not", "that is not", "undo", "revert", "stop"}

// constraintSentences returns the parts of a user's ask that state a rule
// or revise an earlier ask, verbatim: the whole ask when it opens as a
// correction or is one sentence, otherwise each sentence holding a rule
// word.
func constraintSentences(ask string) []string {
	ask = strings.TrimSpace(ask)
	l := strings.ToLower(ask)
	for _, r := range revisionStarts {
		if strings.HasPrefix(l, r) {
			return []string{ask}
		}
	}
	if !hasAny(l, ruleCues) {
		return nil
	}
	var all, rules []string
	sentences(ask, func(s string) {
		all = append(all, s)
		if hasAny(strings.ToLower(s), ruleCues) {
			rules = append(rules, s)
		}
	})
	if len(all) == 1 && len(ask) <= 400 {
		return []string{ask}
	}
	return rules
}

// harnessTags open text that an agent's harness injects in the user role:
// slash-command echoes, local command output, reminders, environment
// blocks. Such text is never a person's ask.
var harnessTags = []string{"<command-name>", "<command-message>", "<command-args>", "<local-command-stdout>",
	"<local-command-stderr>", "<system-reminder>", "<user-prompt-submit-hook>", "<environment_context>",
	"<user_instructions>", "<turn_aborted>", "<bash-input>", "<bash-stdout>", "<bash-stderr>"}

// askText returns what the person asked in a user message's text, or ""
// when the text is harness output. Codex's IDE extension wraps each ask in
// context ("# Context from my IDE setup: … ## My request for Codex:"): the
// ask is what follows the last marker. ide gets the wrapper.
func askText(text string) (ask, ide string) {
	t := strings.TrimSpace(text)
	for _, tag := range harnessTags {
		if strings.HasPrefix(t, tag) {
			return "", ""
		}
	}
	const marker = "## My request for Codex:"
	if k := strings.LastIndex(t, marker); k >= 0 {
		return strings.TrimSpace(t[k+len(marker):]), t[:k]
	}
	return t, ""
}

// interruption reports a harness note that the person interrupted the
// agent ("[Request interrupted by user]", "[Request interrupted by user for
// tool use]").
func interruption(text string) bool {
	t := strings.TrimSpace(text)
	return strings.HasPrefix(t, "[Request interrupted by user") && strings.HasSuffix(t, "]") && len(t) < 80
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
