// Package fallback builds a compact.Handoff deterministically from the
// dropped turns of a transcript (the window), with no network and no
// model: what a compaction uses when no LLM is configured or the LLM
// fails, and what completes an LLM's handoff (Complete).
//
// # How it chooses
//
// A handoff is small, and what a next turn reaches for is mostly exact
// names: paths, functions, types, commands, URLs, ids, versions. Build
// reads the window once (redacted first, unless Config.Redacted) into
// calls with their results, asks, and the agent's own words, and from
// them builds candidates for every section, each with a rank. The budget
// (Config.MaxTokens) is then spent on the top of each section's ranking.
//
// Names. Every name the window holds (scan.go: paths, identifiers, dotted
// and called names, URLs, a markdown link's too, hex ids, versions, long
// numbers) is indexed with
// its salience (salience.go), from signals that hold for any agent and
// project: who produced it (what the agent wrote into a file, passed to a
// call or said, over what a tool printed), whether the agent acted on it
// after a tool showed it, how many messages hold it (counted by its
// logarithm), how late it last came up, whether an error named it, and
// whether a file the agent read declares it. Critical context lists the
// names by salience, grouped (Names, Calls written as calls, Ids,
// Versions, URLs, Commits), leaving out what the handoff already spells
// out elsewhere, what a longer listed name holds (NewHash in
// plumbing.NewHash()) and what the messages kept around the window say
// (Config.Kept). Names a single tool output printed and nobody used are
// many and rarely needed one by one (about one in seventy, measured), yet
// a reader of code reaches for some: they get a bounded share of the
// budget. Relevant files lists the files touched, with what happened to
// them (created, edited, read, deleted; a call that failed did nothing),
// the telling line the last edit of a changed file wrote (a signature, a
// statement, a setting: what the file holds now, once the actions no
// longer show that edit), and what reads showed of them (a digest:
// description, declarations, explanatory comments, environment
// variables; a comment the agent's own words echoed first), with the
// lines of it the agent quoted back in fenced code of its own messages;
// files touched that the section has no room for are named in its note
// by their last two path segments.
//
// What happened. Completed actions are the calls in order, as "name key
// argument → outcome"; what a call does comes from the reader's tags
// (compact.ToolCall.Kind: read, write, search, shell, …), an untagged
// call's from its arguments' shapes; one-line actions that read word for
// word alike are kept once, the newest, with their count. An outcome is
// the exit status and the informative line of an error, chosen by general
// features (outcome.go): a line that reports a failure and names a value,
// a location or a cause, never a rule, a banner or a bare header (whose
// message is the most telling of the lines after it), a failing test
// keeping its name beside its message; an output a tool gave word for word
// to several calls is an acknowledgement, not news; an edit that worked
// reports no error for the code it echoes (the lines it wrote, a diff's
// context), though that code raises or logs one. Edits show the lines
// they wrote (changed lines and declarations first). Errors and fixes
// pairs each failure with the later call on the same target that
// succeeded, or says it is not resolved; a harness message its reader
// tagged Failed (an action the harness could not run) is an error whatever
// its words. Decisions are the agent's sentences that state a finding or a
// choice, scored by cue words and the window's names, restatements below
// every new sentence; its first words after an ask, and its first
// statement after a tool's output (its reading of what the output showed,
// before it plans the next call), weigh more. The task snapshot is the latest ask verbatim;
// earlier asks, the goal and the rules the person stated follow it.
//
// Budget. Sections are capped by shares of the budget and share what one
// does not need. Narration (actions, decisions, errors, asks, the last
// dropped turn) stops growing past the default budget (2,000 tokens): a
// larger budget, given for a longer window, goes to the index of names and
// files, which holds the most of what a next turn reaches for per byte
// (measured with package eval: about ten times as much as narration).
// Ranks are typed (a class, weights, a place), compared field by field.
//
// Folding. A handoff found in the window, or given as Config.Previous, is
// parsed and its items carried below the window's own: handoffs never
// nest. What the window resolved is resolved in what is carried (a Blocked
// item whose call passed since is dropped, an error says it was fixed
// later), and an item that restates one already there is not carried.
//
// Heuristics. What remains of knowledge about tools and agents is a table
// of general patterns, each row with a comment naming the pattern: failure
// words, cause words, exit-status notes, test runners and package
// installers by their command words, file operations of shell commands,
// argument names of commands, paths and queries. Agent conventions (tool
// names, output envelopes, harness text) are read from package format's
// tags and format.UnwrapOutput.
//
// # Guarantees
//
// The same window and Config give the same bytes: nothing depends on map
// order, time or the environment. A secret the Redactor finds anywhere in
// the window never reaches the handoff: the window is redacted before
// anything is read, and every item is redacted again before it is cut to
// size. Text that quotes compact's handoff markers has them broken up
// ("<<< compact:"), so no item can open or close a handoff. Build reads
// tool outputs at their first 16 KB and last 4 KB for names, so its cost is
// linear in the window (BenchmarkBuild10MB).
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
	// Masked, read with Redacted, holds the masked copies of the window's
	// messages that held a secret, by index in the window, as
	// redact.Redactor.MaskedCopies returns them: Build reads each in place
	// of the message it masks, so a caller masks a window without copying
	// it whole.
	Masked map[int]compact.Message
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
//
// Build trusts the handoffs it finds in window: every Summary message and
// every user message whose whole text is a handoff is parsed and folded
// into the result (see Folding in the package doc), with no check of who
// wrote it. A caller that takes transcripts from someone else must verify
// or defang them first, as the compactor does (it clears or breaks up
// unverified handoffs before it calls Build); Config.Previous is trusted
// the same way.
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
	return extract(redacted(window, r, cfg), r.String, cfg, lim)
}

// redacted returns the window as extraction reads it: masked by r unless
// cfg says the caller did (Redacted, with Masked). Extraction reads only
// the parts, and the source records repeat them: they are neither masked
// nor read.
func redacted(window []compact.Message, r *redact.Redactor, cfg Config) *messages {
	masked := cfg.Masked
	if !cfg.Redacted {
		masked, _ = r.MaskedCopies(window)
	}
	return newMessages(window, masked)
}

// extract builds the handoff of an already redacted window; mask redacts
// once more what extraction decodes or cuts.
func extract(window *messages, mask func(string) string, cfg Config, lim *limits) (compact.Handoff, error) {
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
			e := &d.secs[s][i]
			e.text = clean(e.text)
			if e.name != "" {
				// A name is listed only as its entry's masked text
				// spells it: a mask the whole text needed holds for it.
				if e.name = clean(e.name); !strings.Contains(e.text, e.name) {
					e.name = ""
				}
			}
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
