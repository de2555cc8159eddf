// Package fallback builds a compact.Handoff deterministically from the
// dropped turns of a transcript, with no network and no model. It is what
// compaction uses when no LLM is configured, or when the LLM fails.
//
// # What it extracts
//
// Build first passes the whole window through a redact.Redactor, then
// reads it for the sections below. Long outputs and messages are read at
// their start and end (where tools report what went wrong and agents say
// what they found), so the cost stays linear in the window. Redaction
// reads every byte and is most of Build's cost; callers that redact
// anyway (the compactor) say so with Config.Redacted.
//
//   - Task snapshot: the latest real ask of the person, verbatim. Tool
//     results, harness notes riding in the user role (reminders, slash
//     command echoes, interruptions) and summaries are not asks. Codex's IDE
//     context around an ask is cut off at "## My request for Codex:".
//     Earlier asks follow, newest first.
//   - Goal: an earlier handoff's goal, or else the first ask of the window
//     when the person asked more than once. Nothing is invented.
//   - Constraints and preferences: asks that state a rule ("don't", "must",
//     "always", "only", "instead", …) or open as a correction ("no, …",
//     "actually …"), verbatim: the whole ask when short, else the sentences
//     holding the rule.
//   - Completed actions: the tool calls in order, as "name key-argument →
//     outcome": the key argument is the command, path, URL or query; the
//     outcome is the exit status and the error line that says most, a
//     search's hit count and its best hit (a definition before a mere
//     use), or the first meaningful line and the output's length. Edits
//     list the lines they added (changed lines and declarations first;
//     tests they add by name). The newest 8 actions are shown in full;
//     older ones shortly, and older reads and listings are only counted
//     (what they showed is under Relevant files). Agents that act through
//     a fenced command in their text (SWE-agent, including its line
//     editor's "edit N:M … end_of_edit") have those commands read as
//     calls, the next harness message as their output. Interruptions and
//     harness error notes appear where they happened.
//   - Active state and Blocked: the agent's last todo list or plan
//     (Claude Code TodoWrite, Codex update_plan, any list of items with a
//     status), and a failure that ends the window.
//   - Decisions: plans the agent proposed, and the sentences of its
//     messages and reasoning that state a finding or a choice, scored by cue
//     words, specificity and the window's recurring names: a conclusion
//     ("So …", "This means …") above an intention ("Now we need to …",
//     "Let's …"), the agent's answer to an ask weighing more, reasoning
//     below what the agent said unless it said nothing else (at most two
//     per message; a sentence whose words mostly repeat a better one ranks
//     below every new one).
//   - Errors and fixes: lines reporting an error, exception, traceback,
//     failure or timeout, with the call that produced them and whether a
//     later call on the same target succeeded, or failed otherwise (then
//     this error is history). A warning counts when it points at a place
//     in the code ("12:5  Warning: …"); one that does not ("WARNING:
//     Running pip as root") is a tool's notice, and the line a traceback
//     quotes is code, not an error.
//   - Relevant files: paths from tool arguments and from text (POSIX, ~/,
//     Windows, relative, with :line suffixes), each once, relative paths
//     folded into the absolute path they end, with what calls did to them
//     (read, edited, created, deleted; a call that failed did nothing);
//     changed files first, then read, then named, the more often named and
//     the more recent first. A file that was read carries a digest of what
//     the reads showed: its own description (first doc comment or
//     paragraph), what it declares (exported first), the environment
//     variables it reads, the comments that explain (NB, why, must, does
//     not), and what it imports from other packages (imports most files
//     share left out). Under a long project root (a workdir, or the
//     directory relative mentions stand for) paths are shown relative to
//     it, and the root is listed under Critical context.
//   - Critical context: the working directory, how the project's tests were
//     run and what was installed (commands a resuming agent needs again),
//     URLs, commit ids, issue numbers, and the names (functions, types,
//     tables, env vars) that recur or that the agent wrote as code.
//   - Last dropped turns: the window's final asks and agent messages,
//     shortened (its final calls are the newest completed actions).
//
// A handoff found in the window (a compact handoff message, or an LLM
// summary under the same headings) is parsed and its items carried into
// the new sections as older items: handoffs never nest. Another agent's
// own summary (Claude Code's compact summary, Codex's compacted history) is
// kept as one bounded "Earlier summary" item at the head of the completed
// actions.
//
// # Bounds and trimming priority
//
// Every item is capped (Config.ItemTokens, or a per-section default), then
// every section (Config.SectionTokens, or a share of the total), then the
// whole rendered handoff (Config.MaxTokens, default 2,000 tokens as
// counted by Config.Count). Room is shared among sections in fixed
// proportions, findings (decisions, errors) weighing more than actions,
// and what one section does not need goes to the others, past a default
// section cap if no other section can use it (never past a cap set in
// Config.SectionTokens).
// Within a section, items are kept by rank: newest first for completed
// actions, constraints, asks and last turns; unresolved before resolved
// (then newest) for errors; changed before read before mentioned for
// files; by score for decisions and critical context. A section that
// loses items says how many.
//
// The total cap is applied last, on the rendered text. When the handoff is
// still too long it removes items, lowest rank first, from one section
// after another in this order: Last dropped turns, Critical context,
// Relevant files, Completed actions, Decisions, Errors and fixes, earlier
// asks, Goal, Constraints, Blocked, Active state. The task snapshot is
// never removed; when nothing else is left it is shortened in its middle.
//
// # Guarantees
//
// The same window and Config give the same bytes: nothing depends on map
// order, time or the environment. A secret the Redactor finds anywhere in
// the window (text, tool arguments, tool results) never reaches the
// handoff: the window is redacted before anything is read (unless the
// caller says it already was, Config.Redacted), and every item is redacted
// again before it is cut to size. Text that quotes compact's
// handoff markers has them broken up ("<<< compact:"), so no item can open
// or close a handoff.
package fallback

import (
	"errors"
	"fmt"
	"strings"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/redact"
	"github.com/compactkit/compact/tokens"
)

// Config bounds and equips a Build. The zero value works: default budget,
// built-in redaction, gpt-4o token counts.
type Config struct {
	// MaxTokens caps the rendered handoff (default 2000).
	MaxTokens int
	// Redactor masks secrets in the window before anything is extracted;
	// nil means a new Redactor with the built-in rules for each Build.
	// Masks are numbered by the window's content, so a shared Redactor
	// gives the same handoff as a fresh one.
	Redactor *redact.Redactor
	// Count counts the tokens of a string; nil means gpt-4o's encoding.
	Count func(string) int
	// ItemTokens, when positive, caps every list item at this many tokens
	// instead of the per-section defaults (30 to 150).
	ItemTokens int
	// SectionTokens caps sections, in tokens, by heading (a name in
	// compact.HandoffSections; "Task snapshot" covers the earlier asks
	// too). A section not named keeps its default, a share of MaxTokens.
	SectionTokens map[string]int
	// Previous is an earlier handoff to carry forward, for callers that
	// keep it outside the window. It counts as older than the window and
	// than any handoff found in it.
	Previous *compact.Handoff
	// LastTurns is how many of the window's final asks and agent messages
	// "Last dropped turns" shows: 0 means 3, a negative value none.
	LastTurns int
	// Kept are the messages a compaction keeps verbatim around the window
	// (its head and tail): names they hold need no place in the handoff's
	// index.
	Kept []compact.Message
	// Redacted tells Build the caller has already passed the window through
	// Redactor (as the compactor does before pruning), so Build skips its
	// own pass over the whole window. Every item Build extracts is still
	// redacted before it is cut to size.
	Redacted bool
}

// ErrBudget is returned (wrapped) when MaxTokens cannot hold even the
// handoff's headings.
var ErrBudget = errors.New("handoff budget too small")

// ErrConfig is returned (wrapped) for a Config that cannot be used.
var ErrConfig = errors.New("invalid fallback config")

func errBudget(got, need int) error {
	return fmt.Errorf("%w: MaxTokens %d, the headings alone need %d", ErrBudget, got, need)
}

// Build turns window, the dropped middle of a transcript, into a handoff.
// The same window and config always give the same handoff.
func Build(window []compact.Message, cfg Config) (compact.Handoff, error) {
	lim, err := cfg.limits()
	if err != nil {
		return compact.Handoff{}, err
	}
	r := cfg.Redactor
	if r == nil {
		if r, err = redact.New(redact.Config{}); err != nil {
			return compact.Handoff{}, fmt.Errorf("fallback: redactor: %w", err)
		}
	}
	if !cfg.Redacted {
		red, _ := r.Transcript(compact.Transcript{Messages: withoutSources(window)})
		window = red.Messages
	}
	return extract(window, r.String, cfg, lim)
}

// withoutSources returns window's messages without their source records.
// Extraction reads only the parts, and the records repeat them: redacting
// both would double the cost of Build for nothing.
func withoutSources(window []compact.Message) []compact.Message {
	out := make([]compact.Message, len(window))
	for i, m := range window {
		m.Source = compact.Source{}
		out[i] = m
	}
	return out
}

// extract builds the handoff of an already redacted window; mask redacts
// once more what extraction decodes or cuts.
func extract(window []compact.Message, mask func(string) string, cfg Config, lim *limits) (compact.Handoff, error) {
	w := analyze(window, mask)
	lastTurns := cfg.LastTurns
	if lastTurns == 0 {
		lastTurns = defaultLastTurns
	}
	w.kept = keptNames(cfg.Kept)
	d := w.build(lastTurns, cfg.Previous)
	d.prune()
	d.sanitize(mask)
	return fit(d, lim)
}

// limits resolves the config's bounds.
func (cfg Config) limits() (*limits, error) {
	lim := &limits{max: cfg.MaxTokens, count: cfg.Count}
	if cfg.MaxTokens < 0 || cfg.ItemTokens < 0 {
		return nil, fmt.Errorf("%w: MaxTokens %d and ItemTokens %d must not be negative", ErrConfig, cfg.MaxTokens, cfg.ItemTokens)
	}
	if lim.max == 0 {
		lim.max = DefaultMaxTokens
	}
	if lim.count == nil {
		c, err := tokens.ForModel("gpt-4o")
		if err != nil {
			return nil, fmt.Errorf("fallback: token counter: %w", err)
		}
		lim.count = c.Text
	}
	for s := sec(0); s < nSecs; s++ {
		lim.item[s] = defaultItemTokens[s]
		if cfg.ItemTokens > 0 {
			lim.item[s] = cfg.ItemTokens
		}
		lim.secCap[s] = lim.max * defaultSectionShare[s] / 100
		if narration[s] {
			// Narration does not grow past what the default budget gives
			// it: a larger budget goes to the index of names.
			lim.secCap[s] = min(lim.max, narrationBudget) * defaultSectionShare[s] / 100
			lim.noOverflow[s] = true
		}
	}
	lim.snapshotCap = lim.max * snapshotShare / 100
	lim.goalCap = min(lim.max*goalShare/100, goalMaxTokens)
	for name, n := range cfg.SectionTokens {
		if n < 0 {
			return nil, fmt.Errorf("%w: SectionTokens[%q] = %d must not be negative", ErrConfig, name, n)
		}
		found := false
		for s := sec(0); s < nSecs; s++ {
			if secHeading[s] == name {
				lim.secCap[s], lim.setCap[s], found = n, true, true
			}
		}
		switch name {
		case "Task snapshot":
			lim.snapshotCap = min(lim.snapshotCap, n)
		case "Goal":
			lim.goalCap, found = n, true
		}
		if !found {
			return nil, fmt.Errorf("%w: SectionTokens names %q, not a handoff section (want one of %v)", ErrConfig, name, compact.HandoffSections)
		}
	}
	return lim, nil
}

// sanitize masks secrets in the snapshot, goal and every entry once more,
// before they are cut to size (a cut could otherwise leave half a secret
// the redactor no longer recognises), and defuses the handoff markers, so
// that quoted text can never open or close a handoff.
func (d *draft) sanitize(mask func(string) string) {
	clean := func(s string) string { return defuse(mask(s)) }
	d.snapshot = clean(d.snapshot)
	d.goal = clean(d.goal)
	for s := range d.secs {
		for i := range d.secs[s] {
			d.secs[s][i].text = clean(d.secs[s][i].text)
		}
	}
}

// defuse breaks up compact's handoff markers inside text.
func defuse(s string) string {
	if !strings.Contains(s, "<<<compact:") {
		return s
	}
	return strings.ReplaceAll(s, "<<<compact:", "<<< compact:")
}
