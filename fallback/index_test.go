package fallback_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/fallback"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// contextGroup returns the names of one Critical context group.
func contextGroup(h compact.Handoff, group string) []string {
	for _, it := range h.CriticalContext {
		if rest, ok := strings.CutPrefix(it, group+": "); ok {
			return strings.Split(rest, ", ")
		}
	}
	return nil
}

// TestIndexListsNamesAndCalls: names a tool printed and the agent used
// are indexed; a name written as a call renders as one, with "()";
// versions and long numbers have their groups.
func TestIndexListsNamesAndCalls(t *testing.T) {
	window := []compact.Message{
		user("make the cache expire"),
		assistant("", toolCall("1", "Read", args{"file_path": "/srv/app/cache.go"})),
		results(result("1", "package cache\n\nfunc (c *lruCache) evictOldest() {\n\tc.store.RemoveEntry(key)\n}\n", false)),
		assistant("", toolCall("2", "bash", args{"command": "./cachectl status"})),
		results(result("2", "status: healthy\nbuild 1.22.3\nport 48213\nwarm entries: hotKeyCount", false)),
		assistant("", toolCall("3", "bash", args{"command": "./cachectl peers"})),
		results(result("3", "peers: 2\nport 48213\nport 51177", false)),
	}
	h := build(t, window)
	assert.Contains(t, contextGroup(h, "Calls"), "c.store.RemoveEntry()", joined(h.CriticalContext))
	assert.Contains(t, contextGroup(h, "Names"), "hotKeyCount")
	assert.Contains(t, contextGroup(h, "Versions"), "1.22.3")
	assert.Contains(t, contextGroup(h, "Ids"), "48213", "a number two outputs print is an id")
	assert.NotContains(t, joined(h.CriticalContext), "51177", "a number one output printed once is not")
	// A name a read file declares is in its digest, so not indexed again.
	assert.Contains(t, joined(h.RelevantFiles), "evictOldest")
	assert.NotContains(t, joined(h.CriticalContext), "evictOldest")
}

// TestIndexRanksBySalience: with room for few names, those the agent
// produced (its edits and commands), acted on or saw again come before a
// name one tool output printed once.
func TestIndexRanksBySalience(t *testing.T) {
	var printed []string
	for i := range 80 {
		printed = append(printed, fmt.Sprintf("onceSeenHelper%02d", i))
	}
	window := []compact.Message{
		user("fix the flaky retry"),
		assistant("", toolCall("1", "Read", args{"file_path": "/srv/retry.go"})),
		results(result("1", "func backoffDelay() {}\n"+strings.Join(printed, "\n"), false)),
		assistant("", toolCall("2", "bash", args{"command": "grep -rn retryBudgetExceeded ."})),
		results(result("2", "x.go:3: retryBudgetExceeded", false)),
		assistant("", toolCall("3", "Edit", args{"file_path": "/srv/retry.go", "old_string": "a", "new_string": "backoffDelay(jitterFactor)"})),
		results(result("3", "ok", false)),
	}
	h, err := fallback.Build(window, fallback.Config{SectionTokens: map[string]int{"Critical context": 40}})
	require.NoError(t, err)
	ctx := joined(h.CriticalContext)
	for _, want := range []string{"retryBudgetExceeded", "backoffDelay", "jitterFactor"} {
		assert.Contains(t, h.Render(), want, "the agent's own names come first")
	}
	assert.Less(t, strings.Count(ctx, "onceSeenHelper"), 20, "names one output printed once fill only what is left:\n%s", ctx)
}

// TestIndexLeavesOutWhatIsSaid: a name the handoff spells out elsewhere,
// or that a longer listed name holds, is not listed again.
func TestIndexLeavesOutWhatIsSaid(t *testing.T) {
	window := []compact.Message{
		user("wire the exporter"),
		assistant("", toolCall("1", "Read", args{"file_path": "/srv/export.go"})),
		results(result("1", "func run() {\n\tmetrics.NewExporter(cfg)\n\tNewExporter(cfg)\n}\n", false)),
		assistant("", toolCall("2", "bash", args{"command": "go test ./export -run TestExporterFlushes"})),
		results(result("2", "ok", false)),
	}
	h := build(t, window)
	calls := contextGroup(h, "Calls")
	assert.Contains(t, calls, "metrics.NewExporter()")
	assert.NotContains(t, calls, "NewExporter()", "metrics.NewExporter() holds it")
	assert.Contains(t, joined(h.CompletedActions), "TestExporterFlushes")
	assert.NotContains(t, contextGroup(h, "Names"), "TestExporterFlushes", "the action spells it out")
}

// TestIndexSkipsKeptNames: names the messages kept around the window hold
// (Config.Kept) need no place in the index.
func TestIndexSkipsKeptNames(t *testing.T) {
	window := []compact.Message{
		user("rename the loader"),
		assistant("", toolCall("1", "Read", args{"file_path": "/srv/load.go"})),
		results(result("1", "loadManifest(path)\nparseManifestHeader(raw)\n", false)),
	}
	kept := []compact.Message{assistant("Next I will rename loadManifest.")}
	h, err := fallback.Build(window, fallback.Config{Kept: kept})
	require.NoError(t, err)
	calls := contextGroup(h, "Calls")
	assert.NotContains(t, calls, "loadManifest()", "a kept message says it")
	assert.Contains(t, calls, "parseManifestHeader()")
}

// TestWeakNamesBounded: names a single output printed and nobody used take
// at most a bounded share of the budget, however much room is left.
func TestWeakNamesBounded(t *testing.T) {
	var printed []string
	for i := range 400 {
		printed = append(printed, fmt.Sprintf("generatedSymbol%03d", i))
	}
	window := []compact.Message{
		user("look around"),
		assistant("", toolCall("1", "Read", args{"file_path": "/srv/gen.go"})),
		results(result("1", strings.Join(printed, "\n"), false)),
	}
	h, err := fallback.Build(window, fallback.Config{MaxTokens: 8000})
	require.NoError(t, err)
	n := strings.Count(joined(h.CriticalContext), "generatedSymbol")
	assert.Greater(t, n, 20, "some are listed")
	assert.Less(t, n, 400, "not all: they are the weakest names")
}

// TestNarrationStopsGrowing: past the default budget, a larger budget goes
// to the index, not to more actions.
func TestNarrationStopsGrowing(t *testing.T) {
	var window []compact.Message
	window = append(window, user("port the module"))
	for i := range 200 {
		id := fmt.Sprint("b", i)
		window = append(window,
			assistant("", toolCall(id, "bash", args{"command": fmt.Sprintf("make target%03d && ./check step%03d", i, i)})),
			toolMessage(id, fmt.Sprintf("built target%03d in %d ms", i, 100+i)))
	}
	count := func(max int) int {
		h, err := fallback.Build(window, fallback.Config{MaxTokens: max})
		require.NoError(t, err)
		return len(h.CompletedActions)
	}
	assert.Equal(t, count(fallback.DefaultMaxTokens), count(4*fallback.DefaultMaxTokens))
}

// TestAcknowledgementsAreNoNews: an output a tool gives word for word to
// several calls (a todo tool's "updated") says nothing about each call.
func TestAcknowledgementsAreNoNews(t *testing.T) {
	ack := "List updated. Keep using the list to track progress."
	window := []compact.Message{
		user("do the three steps"),
		assistant("", toolCall("1", "plan_update", args{"items": "a"})),
		results(result("1", ack, false)),
		assistant("", toolCall("2", "plan_update", args{"items": "b"})),
		results(result("2", ack, false)),
	}
	h := build(t, window)
	acts := joined(h.CompletedActions)
	assert.NotContains(t, acts, "Keep using", acts)
	assert.Contains(t, acts, "→ ok")
}

// TestSentenceJoinIsNoName: text that lost its line breaks runs sentences
// together ("the call.We"); such a join is no name, while a member or type
// after a dot (obj.Method, http.Client) is one.
func TestSentenceJoinIsNoName(t *testing.T) {
	out := "Checked the retry call.We then looked at the queue page.Upon review the limiter uses http.Client and calls pool.Drain on exit"
	window := []compact.Message{
		user("find why the worker stalls"),
		assistant("", toolCall("1", "bash", args{"command": "cat notes.txt"})),
		results(result("1", out, false)),
		assistant("", toolCall("2", "bash", args{"command": "cat notes2.txt"})),
		results(result("2", out, false)),
	}
	h := build(t, window)
	ctx := joined(h.CriticalContext)
	assert.Contains(t, ctx, "http.Client", ctx)
	assert.Contains(t, ctx, "pool.Drain")
	assert.NotContains(t, ctx, "call.We")
	assert.NotContains(t, ctx, "page.Upon")
}

// A URL in a markdown link ("[#7](https://…)") is indexed whole, like a
// bare one: agents write their reports with links, and the next turn
// reaches for the URL, not the link text.
func TestMarkdownLinkURLIsIndexed(t *testing.T) {
	window := []compact.Message{
		user("draft the release notes for 2.4"),
		assistant("Here are the notes:\n\n- Retries back off exponentially ([#41](https://git.example.org/acme/relay/pull/41))\n- Docs: [the upgrade guide](https://docs.example.org/relay/upgrade-2.4).\n\nShall I commit them?"),
		user("yes, commit them"),
	}
	h := build(t, window)
	c := joined(h.CriticalContext)
	assert.Contains(t, c, "https://git.example.org/acme/relay/pull/41", c)
	assert.Contains(t, c, "https://docs.example.org/relay/upgrade-2.4", c)
	assert.NotContains(t, c, "pull/41)", "the link's closing parenthesis is not the URL's")
}

// Files that calls touched but Relevant files has no room for are named
// in its note by their last two path segments, best-ranked first: a name
// costs a few tokens, a count of them is no help to a reader.
func TestLeftOutFilesAreNamed(t *testing.T) {
	window := []compact.Message{user("map out the billing service before we port it")}
	for i := range 30 {
		id := fmt.Sprintf("r%d", i)
		path := fmt.Sprintf("/srv/billing/internal/ledger%02d/posting%02d.go", i, i)
		body := fmt.Sprintf("// Package ledger%02d posts entries of kind %d to the ledger and keeps their totals.\npackage ledger%02d\n\nfunc Post%02d(amount int64) error { return nil }\n", i, i, i, i)
		window = append(window, assistant("", toolCall(id, "Read", args{"file_path": path})), results(result(id, body, false)))
	}
	window = append(window, user("go on"))
	h, err := fallback.Build(window, fallback.Config{MaxTokens: 900})
	require.NoError(t, err)
	files := h.RelevantFiles
	require.NotEmpty(t, files)
	note := files[len(files)-1]
	assert.Regexp(t, `^\(\d+ more not listed, touched: ledger\d\d/posting\d\d\.go(, ledger\d\d/posting\d\d\.go)*\)$`, note, joined(files))
	for _, f := range files[:len(files)-1] {
		name := f[strings.Index(f, "ledger"):][:len("ledger00/posting00.go")]
		assert.NotContains(t, note, name, "a listed file is not named again")
	}
}
