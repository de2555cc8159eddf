package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/format"
	"github.com/compactkit/compact/tokens"
)

const countUsage = "compact count [--model NAME] [--encoding NAME] [--per-message] [--text] [--json] [FILE|-]"

const countExamples = `  compact count session.jsonl
      tokens by role and the share of gpt-4o's window the transcript takes
  compact count --model claude-sonnet-4-5 --per-message rollout.jsonl
      estimated for a model without an offline tokenizer, message by message
  compact count --text --encoding cl100k_base notes.md
      a plain text file's tokens, exactly as tiktoken counts them
  cat chat.json | compact count --json - | jq .total
      one JSON object: total, encoding, model, window, by_role, ...
  compact count --models models.toml --model my-finetune run.traj
      with model table overrides (also $COMPACT_MODELS)
`

// countReport is what "compact count" prints; its JSON form is the --json
// output, with stable keys.
type countReport struct {
	File     string `json:"file"`
	Format   string `json:"format,omitempty"` // "" in --text mode
	Mode     string `json:"mode"`             // "transcript" or "text"
	Model    string `json:"model"`
	Encoding string `json:"encoding"` // an encoding name, or "estimate"
	Exact    bool   `json:"exact"`
	// UnknownModel is true when the model table does not know the model:
	// the window is a default and counts are estimates.
	UnknownModel  bool           `json:"unknown_model"`
	Window        int            `json:"window"`
	OutputReserve int            `json:"output_reserve"`
	Total         int            `json:"total"`
	Percent       float64        `json:"percent_of_window"`
	Messages      int            `json:"messages"`
	ByRole        map[string]int `json:"by_role"`
	MessagesBy    map[string]int `json:"messages_by_role"`
	// ToolDefinitions is the count of the tool definitions offered with
	// the prompt; ReplyPriming the tokens priming the reply.
	ToolDefinitions int `json:"tool_definitions"`
	Tools           int `json:"tools"`
	ReplyPriming    int `json:"reply_priming"`
	// Thinking counts the thinking parts. They are part of Total only with
	// --thinking: providers drop earlier turns' reasoning from the prompt.
	Thinking        int  `json:"thinking"`
	ThinkingCounted bool `json:"thinking_counted"`
	// OpaqueEstimated is the part of Total that is a provider's own
	// compaction (encrypted): estimated whatever the tokenizer.
	OpaqueEstimated int        `json:"opaque_estimated,omitempty"`
	PerMessage      []countRow `json:"per_message,omitempty"`
}

type countRow struct {
	Index  int    `json:"index"`
	ID     string `json:"id,omitempty"`
	Role   string `json:"role"`
	Tokens int    `json:"tokens"`
}

type countOptions struct {
	model, encoding, models, as string
	perMessage, text, asJSON    bool
	thinking                    bool
}

func runCount(_ context.Context, e *env, args []string) error {
	var o countOptions
	fs := newFlags(e, "count", countUsage, countExamples)
	fs.StringVar(&o.model, "model", "gpt-4o", "model `NAME`: sets the tokenizer and the window (prefixes match: gpt-4o-2024-08-06)")
	fs.StringVar(&o.encoding, "encoding", "", "count exactly with this encoding whatever the model: o200k_base or cl100k_base")
	fs.StringVar(&o.models, "models", "", "model table overrides, a JSON or TOML `FILE` (default $COMPACT_MODELS)")
	fs.StringVar(&o.as, "format", "", "read as format `NAME` instead of detecting it ("+countFormatNames()+")")
	fs.BoolVar(&o.perMessage, "per-message", false, "list every message's tokens")
	fs.BoolVar(&o.text, "text", false, "count the input as plain text, with no chat overhead")
	fs.BoolVar(&o.thinking, "thinking", false, "count thinking parts as prompt tokens")
	fs.BoolVar(&o.asJSON, "json", false, "print one JSON object instead of text")
	rf := addReadFlags(fs)
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	counter, err := o.counter(e)
	if err != nil {
		return err
	}
	in, err := openInput(e, pos)
	if err != nil {
		return err
	}
	defer in.Close()
	var rep countReport
	if o.text {
		data, err := io.ReadAll(in)
		if err != nil {
			return badInput(fmt.Errorf("%s: %w", in.name, err))
		}
		rep = countText(counter, string(data))
	} else {
		var err error
		rep, err = countStream(e, counter, in, in.name, o, rf)
		if errors.Is(err, format.ErrUnknownFormat) && o.as == "" {
			return badInput(fmt.Errorf("%w; --text counts it as plain text", err))
		}
		if err != nil {
			return badInput(err)
		}
	}
	rep.File = in.name
	return writeOutput(e, "", func(w io.Writer) error {
		if o.asJSON {
			enc := json.NewEncoder(w)
			enc.SetIndent("", "  ")
			return enc.Encode(rep)
		}
		return rep.writeText(w)
	})
}

// counter builds the token counter the flags ask for.
func (o *countOptions) counter(e *env) (*tokens.Counter, error) {
	opts := []tokens.Option{}
	models, err := modelTable(e, o.models)
	if err != nil {
		return nil, err
	}
	if models != nil {
		opts = append(opts, tokens.WithModels(models))
	}
	if o.encoding != "" {
		opts = append(opts, tokens.WithEncoding(o.encoding))
	}
	if o.thinking {
		opts = append(opts, tokens.WithThinking())
	}
	c, err := tokens.ForModel(o.model, opts...)
	if err != nil {
		return nil, usageErrorf("%w", err)
	}
	return c, nil
}

func newCountReport(c *tokens.Counter, mode string) countReport {
	m := c.Model()
	encoding := "estimate"
	if enc := c.Encoding(); enc != nil {
		encoding = enc.Name()
	}
	return countReport{Mode: mode, Model: m.Name, Encoding: encoding, Exact: c.Exact(), UnknownModel: m.Unknown,
		Window: m.Window, OutputReserve: m.OutputReserve, ByRole: map[string]int{}, MessagesBy: map[string]int{}}
}

func countText(c *tokens.Counter, text string) countReport {
	rep := newCountReport(c, "text")
	rep.Total = c.Text(text)
	rep.finish()
	return rep
}

// countEntry is what counting keeps of one message: its figures, not its
// content, so that a transcript is counted as it streams by.
type countEntry struct {
	id                       string
	role                     compact.Role
	summary                  bool
	tokens, thinking, opaque int
}

// countStream counts a transcript as format.Stream reads it: memory holds
// the message being read and, per role, the sums so far; never the file
// (--per-message keeps one small row per message).
func countStream(e *env, c *tokens.Counter, r io.Reader, name string, o countOptions, rf *readFlags) (countReport, error) {
	type key struct {
		role    compact.Role
		summary bool
	}
	var entries []countEntry      // with --per-message
	sums := map[key]*countEntry{} // otherwise: one sum per role and summary flag
	messages := map[key]int{}
	// Without --per-message, a few bytes per message since the last reset,
	// so that a rewind can take the messages it drops back out of the sums.
	type step struct {
		k                        uint8
		tokens, thinking, opaque int32
	}
	var steps []step
	var keys []key
	keyIndex := map[key]uint8{}
	add := func(k key, ce countEntry, sign int) {
		if sums[k] == nil {
			sums[k] = &countEntry{role: k.role, summary: k.summary}
		}
		s := sums[k]
		s.tokens, s.thinking, s.opaque = s.tokens+sign*ce.tokens, s.thinking+sign*ce.thinking, s.opaque+sign*ce.opaque
		messages[k] += sign
		if messages[k] == 0 {
			delete(sums, k)
			delete(messages, k)
		}
	}
	opts := readOptions(e, rf, nil)
	t, err := format.Stream(r, name, format.Name(o.as), opts, format.Sink{
		Message: func(m compact.Message) error {
			ce := countOf(c, &m)
			if o.perMessage {
				entries = append(entries, ce)
				return nil
			}
			k := key{m.Role, m.Summary}
			i, ok := keyIndex[k]
			if !ok {
				i = uint8(len(keys))
				keyIndex[k] = i
				keys = append(keys, k)
			}
			steps = append(steps, step{i, int32(ce.tokens), int32(ce.thinking), int32(ce.opaque)})
			add(k, ce, 1)
			return nil
		},
		Rewind: func(n int) {
			if o.perMessage {
				entries = entries[:min(n, len(entries))]
				return
			}
			for _, st := range steps[min(n, len(steps)):] {
				add(keys[st.k], countEntry{tokens: int(st.tokens), thinking: int(st.thinking), opaque: int(st.opaque)}, -1)
			}
			steps = steps[:min(n, len(steps))]
		},
		Reset: func(keep func(compact.Role, bool) bool) {
			kept := steps[:0]
			for _, st := range steps {
				if k := keys[st.k]; keep != nil && keep(k.role, k.summary) {
					kept = append(kept, st)
				}
			}
			steps = kept
			keptEntries := entries[:0]
			for _, ce := range entries {
				if keep != nil && keep(ce.role, ce.summary) {
					keptEntries = append(keptEntries, ce)
				}
			}
			entries = keptEntries
			for k := range sums {
				if keep == nil || !keep(k.role, k.summary) {
					delete(sums, k)
					delete(messages, k)
				}
			}
		},
	})
	if err != nil {
		return countReport{}, err
	}
	rep := countEntries(c, t, entries, o)
	for k, s := range sums {
		role := string(k.role)
		rep.Messages += messages[k]
		rep.MessagesBy[role] += messages[k]
		rep.ByRole[role] += s.tokens
		rep.Total += s.tokens
		rep.Thinking += s.thinking
		rep.OpaqueEstimated += s.opaque
	}
	rep.finish()
	return rep, nil
}

// countOf counts one message.
func countOf(c *tokens.Counter, m *compact.Message) countEntry {
	ce := countEntry{id: m.ID, role: m.Role, summary: m.Summary, tokens: c.Message(*m)}
	for _, p := range m.Parts {
		switch p.Type {
		case compact.PartThinking:
			ce.thinking += c.Text(p.Text)
		case compact.PartOpaque:
			ce.opaque += tokens.OpaqueTokens(p.Text)
		}
	}
	return ce
}

func countEntries(c *tokens.Counter, t compact.Transcript, entries []countEntry, o countOptions) countReport {
	rep := newCountReport(c, "transcript")
	rep.Format = t.Format
	rep.Messages = len(entries)
	rep.ThinkingCounted = o.thinking
	rep.ReplyPriming = c.CountMessages(nil, nil)
	rep.Total = rep.ReplyPriming
	for i, ce := range entries {
		role := string(ce.role)
		rep.ByRole[role] += ce.tokens
		rep.MessagesBy[role]++
		rep.Total += ce.tokens
		rep.Thinking += ce.thinking
		rep.OpaqueEstimated += ce.opaque
		if o.perMessage {
			rep.PerMessage = append(rep.PerMessage, countRow{Index: i, ID: ce.id, Role: role, Tokens: ce.tokens})
		}
	}
	rep.Tools = len(t.Tools)
	rep.ToolDefinitions = c.Tools(t.Tools)
	rep.Total += rep.ToolDefinitions
	rep.finish()
	return rep
}

func (r *countReport) finish() {
	// A provider's own compaction is estimated whatever the tokenizer.
	r.Exact = r.Exact && r.OpaqueEstimated == 0
	if r.Window > 0 {
		r.Percent = float64(int(10000*float64(r.Total)/float64(r.Window)+0.5)) / 100
	}
}

// countRoleOrder lists roles in conversation order; others follow by name.
var countRoleOrder = []string{"system", "developer", "user", "assistant", "tool"}

func (r *countReport) roles() []string {
	var out []string
	for _, role := range countRoleOrder {
		if _, ok := r.MessagesBy[role]; ok {
			out = append(out, role)
		}
	}
	var rest []string
	for role := range r.MessagesBy {
		if !slices.Contains(countRoleOrder, role) {
			rest = append(rest, role)
		}
	}
	slices.Sort(rest)
	return append(out, rest...)
}

func (r *countReport) writeText(w io.Writer) error {
	var b strings.Builder
	how := "exact"
	switch {
	case r.UnknownModel:
		how = "unknown model: estimated, default window; --encoding counts exactly, --models adds the model"
	case !r.Exact && r.OpaqueEstimated > 0 && r.Encoding != "estimate":
		how = fmt.Sprintf("exact, except %s tokens of a provider's own compaction, estimated", countCommas(r.OpaqueEstimated))
	case !r.Exact:
		how = "estimated: no offline tokenizer for this model"
	}
	enc := r.Encoding
	if !r.Exact && r.Encoding == "estimate" {
		enc = "estimator"
	}
	if r.Mode == "text" {
		fmt.Fprintf(&b, "%s: %s tokens (%s, %s)\n", r.File, countCommas(r.Total), enc, how)
		fmt.Fprintf(&b, "%s%% of %s's %s-token window\n", strconv.FormatFloat(r.Percent, 'f', 2, 64), r.Model, countCommas(r.Window))
		_, err := io.WriteString(w, b.String())
		return err
	}
	fmt.Fprintf(&b, "%s: %s, %s\n", r.File, r.Format, countPlural(r.Messages, "message"))
	fmt.Fprintf(&b, "model %s: %s (%s)\n", r.Model, enc, how)
	fmt.Fprintf(&b, "\n  %-12s %12s %10s\n", "role", "tokens", "messages")
	for _, role := range r.roles() {
		fmt.Fprintf(&b, "  %-12s %12s %10d\n", role, countCommas(r.ByRole[role]), r.MessagesBy[role])
	}
	if r.Tools > 0 {
		fmt.Fprintf(&b, "  %-12s %12s %10s\n", "tool defs", countCommas(r.ToolDefinitions), countPlural(r.Tools, "tool"))
	}
	fmt.Fprintf(&b, "  %-12s %12s\n", "priming", countCommas(r.ReplyPriming))
	fmt.Fprintf(&b, "  %-12s %12s\n", "total", countCommas(r.Total))
	if r.OpaqueEstimated > 0 {
		fmt.Fprintf(&b, "  (of which %s tokens are estimated: a provider's own compaction, encrypted)\n", countCommas(r.OpaqueEstimated))
	}
	if r.Thinking > 0 {
		if r.ThinkingCounted {
			fmt.Fprintf(&b, "  (thinking: %s tokens, counted)\n", countCommas(r.Thinking))
		} else {
			fmt.Fprintf(&b, "  (thinking: %s tokens not counted: providers drop earlier reasoning; --thinking counts it)\n", countCommas(r.Thinking))
		}
	}
	usable := r.Window - r.OutputReserve
	fmt.Fprintf(&b, "\n%s%% of the %s-token window", strconv.FormatFloat(r.Percent, 'f', 2, 64), countCommas(r.Window))
	if usable > 0 && r.OutputReserve > 0 {
		fmt.Fprintf(&b, "; %s%% of the %s left after the %s-token output reserve",
			strconv.FormatFloat(100*float64(r.Total)/float64(usable), 'f', 2, 64), countCommas(usable), countCommas(r.OutputReserve))
	}
	b.WriteString("\n")
	if len(r.PerMessage) > 0 {
		fmt.Fprintf(&b, "\n  %6s  %-10s %10s  %s\n", "#", "role", "tokens", "id")
		for _, row := range r.PerMessage {
			fmt.Fprintf(&b, "  %6d  %-10s %10s  %s\n", row.Index, row.Role, countCommas(row.Tokens), countCleanID(row.ID))
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// countCommas writes n with thousands separators.
func countCommas(n int) string {
	s := strconv.Itoa(n)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

func countPlural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return strconv.Itoa(n) + " " + word + "s"
}

// countCleanID keeps control characters of an id out of the table.
func countCleanID(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return ' '
		}
		return r
	}, s)
}

func countFormatNames() string {
	var names []string
	for _, f := range format.Formats() {
		names = append(names, string(f.Name))
	}
	return strings.Join(names, ", ")
}
