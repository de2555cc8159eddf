package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/compactor"
	"github.com/compactkit/compact/format"
	"github.com/compactkit/compact/redact"
)

const compactUsage = "compact [flags] [FILE|-]"

const compactExamples = `  compact session.jsonl -o compacted.jsonl
      compact when over 80% of the model's usable window (an LLM writes the
      handoff when OPENAI_API_KEY or OPENAI_BASE_URL is set, else the
      deterministic fallback)
  compact --force --summarizer fallback --report report.json run.traj > out.traj
      compact now, offline, and write a JSON report
  OPENAI_BASE_URL=http://localhost:11434/v1 compact --summary-model llama3.1 --force rollout.jsonl
      have a local Ollama model write the handoff
  compact --summarizer prune --force trajectory.json
      mask old tool outputs instead of summarizing (observation masking)
`

// compactOptions are the main command's flags.
type compactOptions struct {
	model          string
	window         int
	threshold      float64
	target         string
	keepHead       int
	keepTailTokens int
	summarizer     string
	baseURL        string
	summaryModel   string
	timeout        time.Duration
	retries        int
	abort          bool
	focus          string
	force          bool
	output         string
	inPlace        bool
	report         string
	handoff        string
	// checkpointing the result (--checkpoint STORE --session ID)
	checkpointStore string
	session         string
	checkpointPlain bool
	redactKept      bool
	// how the input is read (--format, --skip-bad-lines, --strict-utf8)
	as   string
	read *readFlags
}

func compactFlags(e *env, o *compactOptions) *flag.FlagSet {
	fs := newFlags(e, "compact", compactUsage, compactExamples)
	compactionFlags(fs, o)
	fs.StringVar(&o.as, "format", "", "read as format `NAME` instead of detecting it ("+formatNames(true)+")")
	fs.StringVar(&o.output, "o", "", "write the compacted transcript to `FILE` (atomically) instead of stdout")
	fs.BoolVar(&o.inPlace, "in-place", false, inPlaceUsage)
	fs.StringVar(&o.report, "report", "", "write a JSON report to `FILE`")
	fs.StringVar(&o.handoff, "handoff", "", "also write the rendered handoff to `FILE` (empty when none was written)")
	fs.StringVar(&o.checkpointStore, "checkpoint", "", "save the result as a checkpoint of --session in `STORE` (DIR or redis://HOST:PORT/DB; default $COMPACT_CHECKPOINT_STORE, else "+defaultCheckpointDir+")")
	fs.StringVar(&o.session, "session", "", "session `ID` the checkpoint belongs to (required with --checkpoint)")
	fs.BoolVar(&o.checkpointPlain, "checkpoint-plain", false, "store the checkpoint without redacting secrets (default: redacted)")
	fs.BoolVar(&o.redactKept, "redact-kept", false, redactKeptUsage)
	return fs
}

// runCompact is the main command: compact one transcript.
func runCompact(ctx context.Context, e *env, args []string) error {
	var o compactOptions
	fs := compactFlags(e, &o)
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if err := o.check(); err != nil {
		return err
	}
	if err := o.checkInPlace(pos); err != nil {
		return err
	}
	in, err := openInput(e, pos)
	if err != nil {
		return err
	}
	defer in.Close()
	if o.session != "" {
		e.guardStore(checkpointStoreSpec(e, o.checkpointStore))
	}
	// Every output is checked before any work, and written all or none;
	// none may replace the input (but -o with --in-place) or lie in the
	// checkpoint store.
	var res compactor.Result
	var rep *compactReport
	outs, reportOnly := o.outputs(e, &res, &rep)
	if err := outs.check(); err != nil {
		return err
	}
	transcriptOut := outs.files[0]
	if n := in.size(); n > 0 && e.budget != nil {
		e.budget(n)
	}
	// From a file, the messages keep where their records lie, not their
	// bytes: only the kept ones are read back, for writing.
	var at io.ReaderAt
	if f := in.file(); f != nil {
		at = f
	}
	t, _, err := readInputAt(e, in, in.name, format.Name(o.as), o.read, at)
	if err != nil {
		return badInput(err)
	}
	if f, ok := format.Lookup(format.Name(t.Format)); !ok || f.Write == nil {
		return usageErrorf("%s: compact cannot write %s transcripts yet (see \"compact convert\")", in.name, t.Format)
	}
	cfg, err := o.config(e)
	if err != nil {
		return err
	}
	progress := newProgress(e)
	cfg.Observer = progress.observe
	c, err := compactor.New(cfg)
	if err != nil {
		return usageErrorf("%w", err)
	}
	res, cerr := c.Compact(ctx, t)
	progress.clear()
	if cerr == nil && at != nil {
		if err := format.LoadSources(at, in.name, &res.Transcript); err != nil {
			return badInput(err)
		}
	}
	if cerr == nil && o.redactKept {
		res.Transcript = redactKept(cfg.Redactor, res.Transcript)
		res.Record.TokensAfter, _, _ = c.NeedsCompaction(res.Transcript)
	}
	rep = newCompactReport(in.name, &o, c.Config(), &res, cerr)
	if cerr == nil && o.session != "" {
		// The checkpoint comes first: an output on disk whose session state
		// was never saved would be resumed from an older checkpoint.
		id, err := o.saveCheckpoint(ctx, e, res)
		if err != nil {
			return err
		}
		rep.Checkpoint = id
	}
	if cerr != nil {
		// The report says what failed; nothing else is written.
		if err := reportOnly.check(); err != nil {
			return err
		}
		if err := reportOnly.commit(); err != nil {
			return err
		}
		return cerr
	}
	// In place, a transcript left as it was is not rewritten: an agent
	// appending to it keeps its file.
	transcriptOut.skip = o.inPlace && !res.Changed() && !o.redactKept
	if err := outs.commit(); err != nil {
		return err
	}
	fmt.Fprintln(e.stderr, rep.line())
	if !res.Fits {
		// Written, and said on the line; the status tells a script or an
		// agent loop that the model would still overflow.
		return &exitErr{code: exitOverWindow, err: res.Overflow(), told: true}
	}
	return nil
}

// outputs returns the command's outputs (the transcript, --report,
// --handoff) as one set, and the report alone, written when the
// compaction failed. The writers read *res and *rep when they run.
func (o *compactOptions) outputs(e *env, res *compactor.Result, rep **compactReport) (all, reportOnly *outputSet) {
	all, reportOnly = &outputSet{}, &outputSet{}
	out := all.add(e, "-o", o.output, func(w io.Writer) error {
		return format.Write(w, res.Transcript, format.Name(res.Transcript.Format))
	})
	out.replacesInput, out.inPlaceFlag = o.inPlace, "--in-place"
	if o.report != "" {
		write := func(w io.Writer) error { return (*rep).write(w) }
		all.add(e, "--report", o.report, write)
		reportOnly.add(e, "--report", o.report, write)
	}
	if o.handoff != "" {
		all.add(e, "--handoff", o.handoff, func(w io.Writer) error {
			if res.Handoff == nil {
				return nil
			}
			_, err := io.WriteString(w, res.Handoff.Render())
			return err
		})
	}
	return all, reportOnly
}

func (o *compactOptions) check() error {
	switch {
	case o.threshold <= 0 || o.threshold > 1:
		return usageErrorf("--threshold %g: want a share of the window in (0, 1]", o.threshold)
	case o.window < 0:
		return usageErrorf("--window %d: want a positive token count", o.window)
	case o.keepHead < 0:
		return usageErrorf("--keep-head %d: want 0 or more exchanges", o.keepHead)
	case o.keepTailTokens < 0:
		return usageErrorf("--keep-tail-tokens %d: want 0 or more tokens", o.keepTailTokens)
	case o.retries < 0:
		return usageErrorf("--retries %d: want 0 or more", o.retries)
	case o.timeout <= 0:
		return usageErrorf("--timeout %s: want a positive duration", o.timeout)
	case o.output == "-" && (o.report == "-" || o.handoff == "-"), o.output == "" && (o.report == "-" || o.handoff == "-"):
		return usageErrorf("--report and --handoff need a file: the transcript goes to stdout")
	case o.checkpointStore != "" && o.session == "":
		return usageErrorf("--checkpoint needs --session ID: the session the checkpoint belongs to")
	case o.checkpointPlain && o.session == "":
		return usageErrorf("--checkpoint-plain goes with --session ID (and --checkpoint STORE): without them no checkpoint is saved")
	}
	if _, err := compactor.ParseStrategy(o.summarizer); err != nil {
		return usageErrorf("--summarizer: %w", err)
	}
	return nil
}

const inPlaceUsage = "write the compacted transcript over the input FILE (atomically; same as -o FILE, which is refused without this flag). An agent still appending to FILE loses what it writes after the read"

// checkInPlace checks --in-place against the input and -o, and makes the
// input the output: -o naming the input is refused without it.
func (o *compactOptions) checkInPlace(pos []string) error {
	if !o.inPlace {
		return nil
	}
	if len(pos) != 1 || pos[0] == "-" {
		return usageErrorf("--in-place needs a FILE to replace, not stdin")
	}
	switch {
	case o.output == "":
		o.output = pos[0]
	case o.output == "-":
		return usageErrorf("--in-place writes over the input FILE; -o - writes to stdout: drop one")
	default:
		a, errA := os.Stat(o.output)
		b, errB := os.Stat(pos[0])
		if errA != nil || errB != nil || !os.SameFile(a, b) {
			return usageErrorf("--in-place writes over the input %s; -o names another file (%s): drop one", pos[0], o.output)
		}
	}
	return nil
}

const redactKeptUsage = "also mask secrets in the messages kept verbatim (head and tail); bytes change only inside the masks"

// redactKept masks the secrets left in t (the head and tail a compaction
// keeps verbatim, the records and the envelope) so that the bytes written
// change only inside the masks: a message whose source records were masked
// as a whole is still written from them, its fingerprint renewed.
func redactKept(r *redact.Redactor, t compact.Transcript) compact.Transcript {
	out, found := r.Transcript(t)
	if len(found) == 0 {
		return t
	}
	for i := range out.Messages {
		m, was := &out.Messages[i], &t.Messages[i]
		if was.Unchanged() && len(m.Source.Records) == len(was.Source.Records) {
			m.Source.Fingerprint = m.Fingerprint()
		}
	}
	return out
}

// saveCheckpoint stores the compacted transcript and its record as the new
// latest checkpoint of o.session, redacted unless --checkpoint-plain, and
// returns the checkpoint's ID.
func (o *compactOptions) saveCheckpoint(ctx context.Context, e *env, res compactor.Result) (string, error) {
	var r *redact.Redactor
	if !o.checkpointPlain {
		var err error
		if r, err = newRedactor(e); err != nil {
			return "", err
		}
	}
	c, err := saveCompactionCheckpoint(ctx, e, o.checkpointStore, o.session, res.Transcript, res.Record, r)
	if err != nil {
		return "", err
	}
	return c.ID, nil
}

// compactReport is the JSON written by --report.
type compactReport struct {
	Input           string         `json:"input"`
	Output          string         `json:"output"`
	Format          string         `json:"format"`
	Model           string         `json:"model"`
	Window          int            `json:"window"`
	TokensBefore    int            `json:"tokens_before"`
	TokensAfter     int            `json:"tokens_after"`
	Saved           float64        `json:"saved"`
	Method          compact.Method `json:"method"`
	Reason          string         `json:"reason,omitempty"`
	LLMConfigured   bool           `json:"llm_configured"`
	SummaryModel    string         `json:"summary_model,omitempty"`
	DroppedMessages int            `json:"dropped_messages"`
	PinnedMessages  int            `json:"pinned_messages"`
	LLMAttempts     int            `json:"llm_attempts"`
	Ineffective     bool           `json:"ineffective"`
	// Fits is false when the output still overflows the usable window
	// (window − output reserve).
	Fits         bool               `json:"fits"`
	UsableWindow int                `json:"usable_window"`
	Warnings     []string           `json:"warnings"`
	DurationMS   float64            `json:"duration_ms"`
	Checkpoint   string             `json:"checkpoint,omitempty"` // ID of the checkpoint saved with --session
	Error        string             `json:"error,omitempty"`
	Compaction   compact.Compaction `json:"compaction"`
	Plan         compactor.Plan     `json:"plan"`
	// summaryErr is the LLM's failure when the fallback replaced it.
	summaryErr error
}

func newCompactReport(input string, o *compactOptions, cfg compactor.Config, res *compactor.Result, err error) *compactReport {
	r := &compactReport{
		Input: input, Output: o.output, Format: res.Transcript.Format, Model: cfg.Model, Window: cfg.Window,
		TokensBefore: res.Record.TokensBefore, TokensAfter: res.Record.TokensAfter, Saved: res.Record.Saved(),
		Method: res.Record.Method, Reason: res.Record.Reason,
		LLMConfigured: cfg.Summarizer != nil,
		LLMAttempts:   res.Record.LLMAttempts, Ineffective: res.Ineffective, Fits: res.Fits, UsableWindow: res.Usable,
		Warnings:   append([]string{}, res.Record.Warnings...),
		DurationMS: float64(res.Record.Duration.Microseconds()) / 1000,
		Compaction: res.Record, Plan: res.Plan, summaryErr: res.SummaryErr,
	}
	if r.Output == "" {
		r.Output = "-"
	}
	if res.Record.Method == compact.MethodLLM {
		r.SummaryModel = res.Record.Model
	}
	if res.Changed() && res.Record.Method != compact.MethodPrune {
		r.DroppedMessages = len(res.Record.DroppedIDs)
		r.PinnedMessages = len(res.Plan.Pinned)
	}
	if err != nil {
		r.Error = err.Error()
	}
	return r
}

func (r *compactReport) write(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// line is the one line the command prints on stderr.
func (r *compactReport) line() string {
	var b strings.Builder
	b.WriteString("compact: ")
	secs := r.Compaction.Duration.Round(time.Millisecond).String()
	if r.Method == compact.MethodNone {
		fmt.Fprintf(&b, "%d tokens, unchanged (%s)%s, %s", r.TokensBefore, shorten(r.Reason, 160), r.overWindow(), secs)
		return b.String()
	}
	fmt.Fprintf(&b, "%d → %d tokens (%+.0f%%), %s", r.TokensBefore, r.TokensAfter, -100*r.Saved, r.Method)
	switch {
	case r.Method == compact.MethodLLM:
		fmt.Fprintf(&b, " (%s, %d attempts)", r.SummaryModel, r.LLMAttempts)
	case r.Method == compact.MethodFallback && !r.LLMConfigured:
		b.WriteString(" (no LLM configured)")
	case r.Method == compact.MethodFallback && r.summaryErr != nil:
		b.WriteString(" (LLM failed: " + shorten(r.summaryErr.Error(), 120) + ")")
	}
	fmt.Fprintf(&b, "%s, %s", r.overWindow(), secs)
	// The last warning but the over-the-window one, which the line says.
	var warnings []string
	for _, w := range r.Warnings {
		if !strings.HasPrefix(w, overWindowWarning) {
			warnings = append(warnings, w)
		}
	}
	if n := len(warnings); n > 0 {
		fmt.Fprintf(&b, ", %d warning(s): %s", n, shorten(warnings[n-1], 100))
	}
	return b.String()
}

// overWindowWarning opens the compactor's warning for a result over the
// window (compactor's fit).
const overWindowWarning = "over the window:"

// overWindow is the line's note when the output overflows the usable
// window, "" when it fits.
func (r *compactReport) overWindow() string {
	if r.Fits {
		return ""
	}
	return fmt.Sprintf(", over the window: %d tokens, the usable window is %d", r.TokensAfter, r.UsableWindow)
}

func shorten(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n] + "…"
}

// progress shows what a compaction is doing on a terminal's stderr, on one
// line that the final line replaces. Off a terminal it says only each
// retry of the LLM, a line each: a provider that never answers would
// otherwise keep a run silent for minutes (the call timeout times the
// attempts) before it falls back.
type progress struct {
	w     io.Writer
	on    bool
	shown bool
}

func newProgress(e *env) *progress { return &progress{w: e.stderr, on: e.stderrTTY} }

func (p *progress) observe(ev compactor.Event) {
	if !p.on {
		if ev.Kind == compactor.EventRetry {
			fmt.Fprintf(p.w, "compact: %s\n", retryLine(ev))
		}
		return
	}
	var msg string
	switch ev.Kind {
	case compactor.EventPlanned:
		msg = fmt.Sprintf("planned: dropping %d messages (%d tokens)", ev.Plan.Dropped(), ev.Plan.DroppedTokens())
	case compactor.EventPruned:
		msg = fmt.Sprintf("pruned %d tool outputs and images", ev.Pruned)
	case compactor.EventSummarizing:
		msg = fmt.Sprintf("summarizing (attempt %d", ev.Attempt)
		if ev.Chunks > 1 {
			msg += fmt.Sprintf(", chunk %d of %d", ev.Chunk, ev.Chunks)
		}
		msg += ")"
	case compactor.EventRetry:
		msg = retryLine(ev)
	case compactor.EventFallback:
		msg = "the LLM failed; building the deterministic handoff"
	default:
		return
	}
	fmt.Fprintf(p.w, "\r\033[Kcompact: %s %s", msg, ev.Elapsed.Round(10*time.Millisecond))
	p.shown = true
}

// retryLine says which LLM call failed, why, and when the next one goes.
func retryLine(ev compactor.Event) string {
	msg := fmt.Sprintf("LLM call %d", ev.Attempt)
	if ev.Chunks > 1 {
		msg += fmt.Sprintf(" (chunk %d of %d)", ev.Chunk, ev.Chunks)
	}
	msg += " failed"
	if ev.Err != nil {
		msg += ": " + shorten(ev.Err.Error(), 120)
	}
	return msg + fmt.Sprintf("; retrying in %s", ev.Delay.Round(time.Millisecond))
}

func (p *progress) clear() {
	if p.shown {
		fmt.Fprint(p.w, "\r\033[K")
	}
}

// printCompactFlags lists the main command's flags, for "compact --help".
func printCompactFlags(w io.Writer) {
	var o compactOptions
	fs := compactFlags(&env{stderr: w}, &o)
	fs.SetOutput(w)
	fmt.Fprintf(w, "\nFlags of %q:\n", compactUsage)
	fs.PrintDefaults()
	fmt.Fprintf(w, "\nEnvironment: OPENAI_API_KEY, OPENAI_BASE_URL (the LLM summarizer).\n\nExamples:\n%s", compactExamples)
}
