package fallback

import (
	"sort"
	"strings"
	"sync"

	"github.com/compactkit/compact/internal/keyword"
)

// briefLines is how many lines at each end of a successful call's output
// are read for errors.
const briefLines = 60

// lineEnds returns the first and the last n lines of s (all of s, and "",
// when it has no more than 2n lines).
func lineEnds(s string, n int) (string, string) {
	head := 0
	for i := 0; i < n; i++ {
		k := strings.IndexByte(s[head:], '\n')
		if k < 0 {
			return s, ""
		}
		head += k + 1
	}
	tail := len(s)
	for i := 0; i < n && tail > head; i++ {
		k := strings.LastIndexByte(s[head:tail-1], '\n')
		if k < 0 {
			tail = head
			break
		}
		tail = head + k + 1
	}
	if tail <= head {
		return s, ""
	}
	return s[:head], s[tail:]
}

// scanLimit bounds how much of one tool output is read line by line: its
// head and its tail, where commands report what went wrong.
const scanLimit = 16 << 10

// headTail returns the first and last scanLimit bytes of s (all of s when
// it is short), cut at line boundaries.
func headTail(s string) (string, string) {
	return ends(s, scanLimit, scanLimit)
}

// errLine is a line of output that reports a failure, with how clearly it
// does (errorScore, raised for the line a failure header announces).
type errLine struct {
	text  string
	score int
}

// errorLines picks up to two lines of out that say what went wrong, best
// first by kind and then by what they tell, then in order: an exception
// or compiler error line ("KeyError: 'x'", "error TS2769: …") beats a line
// that merely mentions an error, which beats a warning; among equals, a
// line that names a value, a location or a cause beats one that names
// none. A line that names none (a bare "ERROR:" header, "--- FAIL:
// TestParse (0.01s)") is joined with the line after it when that one
// tells more, so a failing test keeps its name beside its message. With
// brief set only the first and last lines are read (the output of a call
// that did not fail); otherwise the first and last scanLimit bytes. With
// failed set (the output of a call that failed) and no line using a
// failure word, the most telling lines are the error: tools say "No
// match for `x` in y.go" without saying "error".
func errorLines(out string, brief, failed bool) []errLine {
	type cand struct {
		line  string
		score int
		info  int
		pos   int
	}
	var best, telling []cand
	consider := func(text string, base int, maxLines int) {
		n, prev := 0, 0
		quoteIndent := -1 // after a traceback frame: the indent of its "File" line
		for text != "" && (maxLines <= 0 || n < maxLines) {
			line, rest, _ := strings.Cut(text, "\n")
			text = rest
			n++
			t := strings.TrimSpace(line)
			if quoteIndent >= 0 {
				// '  File "x.py", line 3, in f' is followed, further
				// indented, by the line of code it points at, which names
				// errors without reporting one. (A frame of frozen or
				// built-in code has no such line.)
				in := quoteIndent
				quoteIndent = -1
				if t == "" || len(line)-len(strings.TrimLeft(line, " \t")) > in {
					prev = 0
					continue
				}
			}
			if t == "" || len(t) > 2000 {
				prev = 0
				continue
			}
			if strings.HasPrefix(t, `File "`) && strings.Contains(t, `", line `) {
				quoteIndent = len(line) - len(strings.TrimLeft(line, " \t"))
				prev = 0
				continue
			}
			s := errorScore(t)
			if s == 0 && prev >= 3 && t != line && locationLine(t) {
				s = 3 // "    x_test.go:9: want 4": where the failure above happened
			}
			prev = s
			if s == 0 {
				if failed && len(telling) < maxTelling && !ruleLine(t) {
					if info := informative(t); info >= 1 {
						telling = append(telling, cand{t, 3, info, base + n})
					}
				}
				continue
			}
			info := informative(t)
			switch {
			case ruleLine(t) && !header(t):
				continue // "==== 2 failed in 0.3s ====": a summary between rules, the lines after it say what
			case header(t):
				// A bare header ("ERROR:", "FAILURES") announces the
				// message after it, which may run over several lines:
				// the one of them that tells most stands for it.
				if next, nextInfo := mostTelling(text, headerSpan); next != "" {
					t, info = next, nextInfo
					s = max(s, errorScore(next), 3)
				}
			case info == 0 && s >= 3:
				// A test's name, a command's: the line after it says what.
				next, _, _ := strings.Cut(strings.TrimLeft(text, "\n"), "\n")
				if next = strings.TrimSpace(next); next != "" && informative(next) > 0 && !strings.HasPrefix(next, `File "`) {
					t = t + " | " + next
					s, info = max(s, errorScore(next), 3), informative(next)
				}
			}
			best = append(best, cand{t, s, info, base + n})
		}
	}
	if brief {
		head, tail := lineEnds(out, briefLines)
		consider(head, 0, 0)
		consider(tail, 1<<30, 0)
	} else {
		head, tail := headTail(out)
		consider(head, 0, 0)
		consider(tail, 1<<30, 0)
	}
	if len(best) == 0 {
		best = telling
	}
	if len(best) == 0 {
		return nil
	}
	// Keep the two best, first seen winning ties; report them in order.
	sort.SliceStable(best, func(i, j int) bool {
		if best[i].score != best[j].score {
			return best[i].score > best[j].score
		}
		return best[i].info > best[j].info
	})
	var pick []cand
	for _, c := range best {
		if len(pick) == 2 {
			break
		}
		if len(pick) == 1 && pick[0].line == c.line {
			continue
		}
		pick = append(pick, c)
	}
	if len(pick) == 2 && pick[0].pos > pick[1].pos {
		pick[0], pick[1] = pick[1], pick[0]
	}
	lines := make([]errLine, 0, len(pick))
	for _, p := range pick {
		lines = append(lines, errLine{p.line, p.score})
	}
	return lines
}

// headerSpan is how many lines after a bare header are read for its
// message.
const headerSpan = 6

// mostTelling returns the line among the first n non-blank lines of text,
// up to a blank line, that tells most (see informative), the first on
// ties, with its count.
func mostTelling(text string, n int) (string, int) {
	best, bestInfo := "", -1
	for text != "" && n > 0 {
		line, rest, _ := strings.Cut(text, "\n")
		text = rest
		t := strings.TrimSpace(line)
		if t == "" {
			if best != "" {
				break
			}
			continue
		}
		n--
		if info := informative(t); info > bestInfo {
			best, bestInfo = t, info
		}
	}
	return best, max(bestInfo, 0)
}

// maxTelling bounds the lines kept as the error of a failed call whose
// output uses no failure word.
const maxTelling = 4

// informative counts what a line of output tells beyond "something went
// wrong": a value (a quoted name, "key=value", "got X, want Y"), a
// location (a path, "line 12") and a cause ("because", "due to"). A
// banner, a rule or a progress meter tells nothing.
func informative(t string) int {
	if ruleLine(t) {
		return 0
	}
	n := 0
	if namesValue(t) {
		n++
	}
	if namesLocation(t) {
		n++
	}
	if causeMatcher.Contains(t) {
		n++
	}
	return n
}

// causeWords say why something failed, in any tool's words.
var causeMatcher = keyword.New(keyword.Words([]string{"because", "due to", "caused by", "reason:", "since ", "expected ", "instead of", " got ", "want "}), true)

// namesValue reports a quoted value ('x', "x", `x`, «x») or an assignment
// (key=value) in a line.
func namesValue(t string) bool {
	for _, q := range []string{"'", "\"", "`"} {
		if i := strings.Index(t, q); i >= 0 {
			if j := strings.Index(t[i+1:], q); j > 0 {
				return true
			}
		}
	}
	if i := strings.IndexByte(t, '='); i > 0 && i < len(t)-1 && t[i-1] != ' ' && t[i+1] != ' ' && t[i+1] != '=' {
		return true
	}
	return false
}

// namesLocation reports a path (with or without a line) or a "line N" in a
// line.
func namesLocation(t string) bool {
	if strings.Contains(t, "line ") {
		if i := strings.Index(t, "line "); i+5 < len(t) && t[i+5] >= '0' && t[i+5] <= '9' {
			return true
		}
	}
	found := false
	scanRefs(t, func(r ref) {
		if r.kind == refPath {
			found = true
		}
	})
	return found
}

// ruleLine reports a line that frames output rather than saying something:
// a rule of dashes or equals signs, a title between them ("==== FAILURES
// ===="), a progress meter ("[####   ] 45%", "12/40").
func ruleLine(t string) bool {
	letters, punct := 0, 0
	for i := 0; i < len(t); i++ {
		switch c := t[i]; {
		case isLetter(c):
			letters++
		case c == '=' || c == '-' || c == '*' || c == '#' || c == '_' || c == '~' || c == '[' || c == ']' || c == '|':
			punct++
		}
	}
	if punct >= 6 && punct > letters {
		return true
	}
	return strings.Contains(t, "%") && letters < 8 && strings.ContainsAny(t, "0123456789")
}

// errorScore rates how clearly a line reports a failure: 0 not at all, 1 a
// traceback header, 2 a warning, 3 a line naming an error, 5 an exception
// or compiler diagnostic.
func errorScore(t string) int {
	tags := failMatcher().Tags(t)
	failEnd := len(t) >= 4 && strings.EqualFold(t[len(t)-4:], "fail")
	panicked := hasPrefixFold(t, "panic:")
	// "error" and "traceback" are failure words, so a line that opens with
	// them has tags; an exception name without one ("SystemExit: 1") is
	// looked for only in untagged lines.
	exc := tags != 0 && exceptionLine(t) || tags == 0 && !failEnd && !panicked && exceptionLine(t)
	if tags == 0 && !exc && !panicked && !failEnd {
		return 0 // most lines: one pass over the bytes decides
	}
	strong := hasPrefixFold(t, "error") || hasPrefixFold(t, "fatal") || panicked
	traceback := hasPrefixFold(t, "traceback (most recent call last)")
	if noError(asciiLower(t)) {
		return 0
	}
	switch {
	case exc || strong || tags&failStrong != 0:
		return 5
	case traceback:
		return 1
	case tags&failWord != 0 || failEnd:
		return 3
	case tags&failWarn != 0:
		return 2
	}
	return 0
}

// Tags of the failure phrases.
const (
	failStrong uint32 = 1 << iota // compiler and make diagnostics
	failWord                      // words that name a failure
	failWarn                      // a warning
)

var failureWords = []string{
	"error", "exception", "failed", "failure", "fatal", "timeout", "timed out", "no such file",
	"not found", "permission denied", "cannot ", "can't ", "could not", "couldn't", "unable to",
	"invalid", "must be", "rejected", "denied", "refused", "segmentation fault", "aborted",
	"does not exist", "unrecognized", "unknown option", "command not found", "syntax error",
	"malformed", "undefined", "not defined", "traceback", "fail ", "fail:",
}

// failMatcher finds every failure phrase of a line in one pass.
var failMatcher = sync.OnceValue(func() *keyword.Matcher {
	// "warning:" and "warning " label a warning; a bare "warning" is more
	// often code (Perl's "use warnings;", Python's warnings module, a
	// RemovedInDjango41Warning import).
	phrases := map[string]uint32{": error": failStrong, " error ts": failStrong, "error[": failStrong, "*** [": failStrong,
		"warning:": failWarn, "warning ": failWarn}
	for _, w := range failureWords {
		phrases[w] |= failWord
	}
	return keyword.New(keyword.Tagged(phrases), true)
})

// exceptionLine recognises "SomethingError: message" and
// "pkg.mod.SomeException: message" lines.
func exceptionLine(t string) bool {
	k := strings.Index(t, ": ")
	if k <= 0 || k > 80 {
		k = strings.IndexByte(t, ':')
		if k <= 0 || k > 80 || k != len(t)-1 {
			return false
		}
	}
	name := t[:k]
	if strings.ContainsAny(name, " \t") {
		return false
	}
	if j := strings.LastIndexByte(name, '.'); j >= 0 {
		name = name[j+1:]
	}
	return (strings.HasSuffix(name, "Error") || strings.HasSuffix(name, "Exception") || strings.HasSuffix(name, "Exit") ||
		strings.HasSuffix(name, "Interrupt") || name == "Warning" || strings.HasSuffix(name, "Warning")) && len(name) > 5 && isLetter(name[0])
}

// firstMeaningfulLine returns the first line of out that says something:
// not blank, not a progress meter or a rule of dashes, not only numbers.
// An HTML page is summed up by its title.
func firstMeaningfulLine(out string) string {
	if k := strings.Index(out, "<title>"); k >= 0 {
		if end := strings.Index(out[k:], "</title>"); end > 0 && end < 300 {
			if title := strings.TrimSpace(out[k+len("<title>") : k+end]); title != "" {
				return "page title: " + title
			}
		}
	}
	text := out
	for n := 0; text != "" && n < 200; n++ {
		line, rest, _ := strings.Cut(text, "\n")
		text = rest
		t := strings.TrimSpace(line)
		if k := strings.LastIndexByte(t, '\r'); k >= 0 {
			t = strings.TrimSpace(t[k+1:])
		}
		if letters(t) < 3 || strings.Contains(t, "% Total") || strings.Contains(t, "Dload") {
			continue
		}
		return t
	}
	return ""
}

func letters(s string) int {
	n := 0
	for i := 0; i < len(s); i++ {
		if isLetter(s[i]) {
			n++
		}
	}
	return n
}

// countLines counts the lines of s (a trailing newline does not start one).
func countLines(s string) int {
	s = strings.TrimRight(s, "\n")
	if s == "" {
		return 0
	}
	return strings.Count(s, "\n") + 1
}

// header reports a line that announces failures listed after it: "ERROR:",
// "== [test.sql] FAIL", "FAILURES".
func header(t string) bool {
	if len(t) > 60 {
		return false
	}
	if strings.HasSuffix(t, ":") && errorScore(t) > 0 && !strings.Contains(strings.TrimSuffix(t, ":"), ": ") {
		return len(strings.Fields(t)) <= 2
	}
	for _, w := range []string{"FAIL", "FAILED", "ERROR", "ERRORS", "FAILURES"} {
		if strings.HasSuffix(strings.Trim(t, "= -*"), w) {
			return true
		}
	}
	return false
}

// locationLine reports a line that starts with a file:line reference
// ("sum_test.go:9: Sum(2, 2) = 5", "src/a.rs:3:5").
func locationLine(t string) bool {
	k := strings.IndexByte(t, ' ')
	if k < 0 {
		k = len(t)
	}
	_, line, ok := pathRef(strings.TrimSuffix(t[:k], ":"))
	return ok && line != ""
}

// noError recognises lines that report the absence of errors: "Error:
// (none)", "errors: 0", "0 failed", "no errors".
func noError(l string) bool {
	// "✔ No ESLint warnings or errors", "no problems found"
	if t := strings.TrimLeft(l, "✔✓√*-=[]() \t"); strings.HasPrefix(t, "no ") && len(t) < 80 &&
		!strings.Contains(t, "such file") && !strings.Contains(t, "module named") && !strings.Contains(t, "found:") &&
		(strings.Contains(t, "error") || strings.Contains(t, "warning") || strings.Contains(t, "problem") || strings.Contains(t, "issue")) {
		return true
	}
	for _, p := range []string{"error:", "errors:", "stderr:", "failed:", "failures:"} {
		if rest, ok := strings.CutPrefix(l, p); ok {
			switch strings.TrimSpace(rest) {
			case "":
				// "stderr:" with nothing after it is an empty stream;
				// "ERROR:" alone is a header over its message.
				return p == "stderr:"
			case "(none)", "none", "null", "nil", "0", "[]", "{}", "false", "no":
				return true
			}
		}
	}
	for _, p := range []string{"0 errors", "0 error", "no errors", "0 failed", "0 failures", "without errors", "no error", "0 warnings"} {
		if strings.HasPrefix(l, p) || strings.Contains(l, " "+p) && !strings.Contains(l, "fail ") && !strings.Contains(l, "error:") {
			return !strings.Contains(l, " 1 error") && !strings.Contains(l, "exception")
		}
	}
	return false
}
