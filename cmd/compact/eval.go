package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/compactor"
	"github.com/compactkit/compact/eval"
	"github.com/compactkit/compact/fallback"
	"github.com/compactkit/compact/redact"
)

const evalUsage = "compact eval [flags] FILE|DIR|-..."

const evalExamples = `  compact eval ~/.claude/projects/myrepo
      what a compaction keeps: of the names the agent used after each cut
      that only the dropped middle held, the share the compacted output
      still has, beside recency, a longer tail and prune at the same size
  compact eval --summarizer llm --summary-model gpt-4o-mini sessions/
      the same for an LLM's handoffs (OPENAI_API_KEY or OPENAI_BASE_URL)
  compact eval --json --cuts 0.3,0.6,0.9 run.traj | jq .summary
      one JSON object for scripts
  compact eval --labels ../corpus/handoff
      labelled transcripts: the share of must-keep facts, the latest ask
      verbatim, secrets leaked
`

// evalOptions are compact eval's flags: the compaction flags and its own.
type evalOptions struct {
	compactOptions
	cuts        string
	asJSON      bool
	labels      string
	transcripts string
	decay       int
	decayWindow int
	jobs        int
	missing     bool
	quiet       bool
	handoffs    string
}

func evalFlags(e *env, o *evalOptions) *flag.FlagSet {
	fs := newFlags(e, "eval", evalUsage, evalExamples)
	compactionFlags(fs, &o.compactOptions)
	// An evaluation makes hundreds of compactions: an LLM is used only
	// when asked for by name.
	o.summarizer = "fallback"
	fs.Lookup("summarizer").DefValue = "fallback"
	fs.Lookup("summarizer").Usage = "auto, llm, fallback or prune: what writes the handoffs measured"
	fs.Lookup("window").Usage = "context window of every compaction (default: 90% of each prefix's tokens, at least 4000, as future_use.py)"
	fs.StringVar(&o.cuts, "cuts", "0.5,0.7,0.85", "cut points, shares of each session's messages")
	fs.BoolVar(&o.asJSON, "json", false, "print one JSON object (files, rows, summary) instead of a table")
	fs.StringVar(&o.labels, "labels", "", "score labelled transcripts: a `DIR` of NAME.labels.json files (the corpus's handoff/ layout)")
	fs.StringVar(&o.transcripts, "transcripts", "", "where the labelled transcripts are (default: DIR/../transcripts)")
	fs.IntVar(&o.decay, "decay", 4, "replay each session as it grew, compacting at the window, up to `N` compactions (0: off)")
	fs.IntVar(&o.decayWindow, "decay-window", 0, "window of the decay replay in tokens (default: a quarter of each session, at least 32000)")
	fs.IntVar(&o.jobs, "j", runtime.NumCPU(), "files measured at once")
	fs.BoolVar(&o.missing, "missing", false, "list the facts each cut lost, with their kind and source")
	fs.BoolVar(&o.quiet, "quiet", false, "no progress bar")
	fs.StringVar(&o.handoffs, "handoffs", "", "write each cut's handoff to `DIR` (FILE.CUT.handoff.md)")
	return fs
}

func runEval(ctx context.Context, e *env, args []string) error {
	var o evalOptions
	fs := evalFlags(e, &o)
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	opts, err := o.evalOptions(e)
	if err != nil {
		return err
	}
	if o.labels != "" {
		return runEvalLabels(ctx, e, &o, opts, pos)
	}
	if len(pos) == 0 {
		return usageErrorf("eval: name transcripts or directories to measure (see compact eval --help)")
	}
	ev, err := eval.New(opts)
	if err != nil {
		return usageErrorf("eval: %w", err)
	}
	// "-" is one session read from stdin, as every command reads it.
	fromStdin := slices.Contains(pos, "-")
	pos = slices.DeleteFunc(pos, func(p string) bool { return p == "-" })
	var files []*batchFile
	if len(pos) > 0 {
		if _, files, err = discover("eval", pos, nil); err != nil {
			return err
		}
	}
	explicit := map[string]bool{}
	for _, p := range pos {
		explicit[p] = true
	}
	results := evalFiles(ctx, e, &o, ev, files)
	if fromStdin {
		r := ev.File(ctx, "-", e.stdin)
		r.File = "-"
		results = append(results, r)
		files = append(files, &batchFile{path: "-", rel: "-"})
		explicit["-"] = true
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	var measured []eval.FileResult
	var skipped []string
	for i, r := range results {
		// What batch skips (a link to a directory, a special file) and
		// what no format recognises under a directory are skipped, not
		// failed.
		if files[i].skip != "" || r.Unrecognised && !explicit[files[i].path] {
			skipped = append(skipped, files[i].rel)
			continue
		}
		measured = append(measured, r)
	}
	sum := eval.Summarize(measured)
	if o.handoffs != "" {
		if err := writeHandoffs(o.handoffs, measured); err != nil {
			return err
		}
	}
	if o.asJSON {
		err = writeOutput(e, "", func(w io.Writer) error {
			enc := json.NewEncoder(w)
			enc.SetIndent("", "  ")
			return enc.Encode(struct {
				Files   []eval.FileResult `json:"files"`
				Skipped []string          `json:"skipped,omitempty"`
				Summary eval.Summary      `json:"summary"`
			}{measured, skipped, sum})
		})
	} else {
		err = writeOutput(e, "", func(w io.Writer) error {
			writeEvalTable(w, measured, sum, o.missing)
			if len(skipped) > 0 {
				fmt.Fprintf(w, "\nskipped %s (no known format recognises them, or not regular files): %s\n", plural(len(skipped), "file"), strings.Join(skipped, ", "))
			}
			return nil
		})
	}
	if err != nil {
		return err
	}
	return measurementsFailed(sum.Errors, sum.Errors+sum.Rows)
}

// measurementsFailed is the error of a run in which failed of total
// measurements failed, nil when none did: a gate on compact eval must not
// pass on a run that measured nothing, nor on one that skipped some
// sessions (exit 1, as compact batch does).
func measurementsFailed(failed, total int) error {
	if failed == 0 {
		return nil
	}
	return fmt.Errorf("eval: %d of %s failed", failed, plural(total, "measurement"))
}

// writeHandoffs writes each measured cut's handoff under dir.
func writeHandoffs(dir string, files []eval.FileResult) error {
	for _, f := range files {
		for _, r := range f.Rows {
			if r.Error != "" {
				continue
			}
			name := filepath.Join(dir, filepath.FromSlash(f.File)+fmt.Sprintf(".%g.handoff.md", r.Cut))
			if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
				return err
			}
			if err := writeFileAtomic(name, func(w io.Writer) error {
				_, err := io.WriteString(w, r.Handoff)
				return err
			}); err != nil {
				return err
			}
		}
	}
	return nil
}

// evalOptions turns the flags into eval.Options.
func (o *evalOptions) evalOptions(e *env) (eval.Options, error) {
	if err := o.compactOptions.check(); err != nil {
		return eval.Options{}, err
	}
	var cuts []float64
	for _, s := range strings.Split(o.cuts, ",") {
		c, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
		if err != nil || !(c > 0 && c < 1) {
			return eval.Options{}, usageErrorf("--cuts %q: want shares in (0, 1) separated by commas", o.cuts)
		}
		if slices.Contains(cuts, c) {
			return eval.Options{}, usageErrorf("--cuts %q: %g is given twice (each cut is measured once)", o.cuts, c)
		}
		cuts = append(cuts, c)
	}
	switch {
	case o.decay < 0:
		return eval.Options{}, usageErrorf("--decay %d: want 0 (off) or more compactions", o.decay)
	case o.decayWindow < 0:
		return eval.Options{}, usageErrorf("--decay-window %d: want a positive token count", o.decayWindow)
	case o.jobs < 1:
		return eval.Options{}, usageErrorf("-j %d: want 1 or more", o.jobs)
	}
	cfg, err := o.config(e)
	if err != nil {
		return eval.Options{}, err
	}
	opts := eval.Options{Cuts: cuts, Config: cfg, Decay: o.decay, DecayWindow: o.decayWindow, CountModel: o.model,
		Read: readOptions(e, o.read, nil)}
	if opts.Decay == 0 {
		opts.Decay = -1
	}
	return opts, nil
}

// evalFiles measures files with o.jobs workers, showing progress on a
// terminal, and returns the results in the files' order.
func evalFiles(ctx context.Context, e *env, o *evalOptions, ev *eval.Evaluator, files []*batchFile) []eval.FileResult {
	results := make([]eval.FileResult, len(files))
	bar := newEvalBar(e, len(files), !o.quiet && !o.asJSON && e.stderrTTY)
	defer bar.end()
	jobs := make(chan int)
	var wg sync.WaitGroup
	for range min(o.jobs, len(files)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range jobs {
				results[i] = measureFile(ctx, ev, files[i])
				bar.done(files[i].rel)
			}
		}()
	}
	for i := range files {
		if ctx.Err() != nil {
			break
		}
		jobs <- i
	}
	close(jobs)
	wg.Wait()
	return results
}

func measureFile(ctx context.Context, ev *eval.Evaluator, f *batchFile) eval.FileResult {
	if f.fail != "" || f.skip != "" {
		return eval.FileResult{File: f.rel, Error: f.fail + f.skip}
	}
	in, err := os.Open(f.path)
	if err != nil {
		return eval.FileResult{File: f.rel, Error: err.Error()}
	}
	defer in.Close()
	r := ev.File(ctx, f.rel, in)
	r.File = f.rel
	return r
}

// writeEvalTable prints a row per file, the total and the decay replay.
func writeEvalTable(w io.Writer, files []eval.FileResult, sum eval.Summary, missing bool) {
	rows := [][]string{{"file", "cuts", "method", "need", "kept", "recall", "recency", "head+tail", "prune", "handoff chars"}}
	var failed []string
	filesFailed := 0 // no cut measured
	for _, f := range files {
		if f.Error != "" {
			failed = append(failed, failure(f.File, "", f.Error))
			filesFailed++
			continue
		}
		if f.Decay != nil && f.Decay.Error != "" {
			failed = append(failed, failure(f.File, " decay replay", f.Decay.Error))
		}
		var need, kept, rec, ht, pr, chars, n int
		var methods []string
		for _, r := range f.Rows {
			if r.Error != "" {
				failed = append(failed, failure(f.File, fmt.Sprintf(" cut %.2f", r.Cut), r.Error))
				continue
			}
			n++
			if m := string(r.Method); !slices.Contains(methods, m) {
				methods = append(methods, m)
			}
			need, kept, rec, ht, pr, chars = need+r.Need, kept+r.Kept, rec+r.Recency, ht+r.HeadTail, pr+r.Prune, chars+r.HandoffChars
		}
		if n == 0 {
			rows = append(rows, []string{f.File, "0", "-", "-", "-", "-", "-", "-", "-", "-"})
			if len(f.Rows) > 0 {
				filesFailed++
			}
			continue
		}
		slices.Sort(methods)
		rows = append(rows, []string{f.File, strconv.Itoa(n), strings.Join(methods, "+"), strconv.Itoa(need), strconv.Itoa(kept),
			ratio(kept, need), ratio(rec, need), ratio(ht, need), ratio(pr, need), strconv.Itoa(chars / n)})
	}
	total := "total (" + plural(sum.Files-filesFailed, "file") + " measured"
	if filesFailed > 0 {
		total += fmt.Sprintf(", %d failed", filesFailed)
	}
	total += ", micro-averaged)"
	rows = append(rows, []string{total, strconv.Itoa(sum.Rows), "",
		strconv.Itoa(sum.Need), strconv.Itoa(sum.Kept), share4(sum.Recall, sum.Need), share4(sum.RecencyRecall, sum.Need),
		share4(sum.HeadTailRecall, sum.Need), share4(sum.PruneRecall, sum.Need), share0(sum.MeanHandoffChars, sum.Rows)})
	writeTable(w, rows)
	switch {
	case sum.Rows == 0:
		// 0/0 is no recall, not a recall of 0.
		fmt.Fprintf(w, "\nfuture-use recall: no measurement succeeded\n")
	case sum.Need == 0:
		fmt.Fprintf(w, "\nfuture-use recall: nothing to measure (no name used after a cut was held only by the dropped middle, over %s)\n",
			plural(sum.Rows, "cut"))
	default:
		fmt.Fprintf(w, "\nfuture-use recall %d/%d = %.4f; at the handoff's size recency keeps %.4f, a longer tail %.4f",
			sum.Kept, sum.Need, sum.Recall, sum.RecencyRecall, sum.HeadTailRecall)
		if sum.TokensAfter > 0 {
			fmt.Fprintf(w, "; prune keeps %.4f at %.1f× the compacted size", sum.PruneRecall, float64(sum.PruneTokens)/float64(sum.TokensAfter))
		}
		fmt.Fprintln(w)
	}
	if sum.OverWindow > 0 {
		fmt.Fprintf(w, "%s of %d compacted over the usable window (compact warns \"over the window\"); measured and totalled all the same, as future_use.py counts them\n",
			plural(sum.OverWindow, "cut"), sum.Rows)
	}
	for _, d := range sum.Decay {
		if d.Compaction != 1 && d.Compaction != 2 && d.Compaction != 4 && d.Compaction != len(sum.Decay) {
			continue
		}
		fmt.Fprintf(w, "decay: after compaction %d, recall %d/%d = %.4f over %s (the same sessions after their first: %.4f)\n",
			d.Compaction, d.Kept, d.Need, d.Recall, plural(d.Files, "session"), d.FirstRecall)
	}
	if missing {
		for _, f := range files {
			for _, r := range f.Rows {
				for _, m := range r.Missing {
					fmt.Fprintf(w, "missing %s cut %.2f: %-7s %-11s %s\n", f.File, r.Cut, m.Kind, m.Source, m.Fact)
				}
			}
		}
	}
	if len(failed) > 0 {
		fmt.Fprintf(w, "\n%s failed:\n", plural(len(failed), "measurement"))
		for _, s := range failed {
			fmt.Fprintln(w, "  "+s)
		}
	}
}

// failure is the line naming a failed measurement of file (what: "" for
// the file, " cut 0.50"): the file is named once, whether or not the
// error names it already.
func failure(file, what, err string) string {
	err = strings.TrimPrefix(err, file+": ")
	if base := filepath.Base(file); base != file {
		err = strings.TrimPrefix(err, base+": ")
	}
	return file + what + ": " + err
}

// share4 prints a share of n items to 4 places, "-" when there are none.
func share4(f float64, n int) string {
	if n == 0 {
		return "-"
	}
	return fmt.Sprintf("%.4f", f)
}

// share0 prints a mean over n rows to the unit, "-" when there are none.
func share0(f float64, n int) string {
	if n == 0 {
		return "-"
	}
	return fmt.Sprintf("%.0f", f)
}

func ratio(n, d int) string {
	if d == 0 {
		return "-"
	}
	return fmt.Sprintf("%.3f", float64(n)/float64(d))
}

// evalBar is the progress bar of compact eval on a terminal's stderr.
type evalBar struct {
	w          io.Writer
	on         bool
	width      func() int
	mu         sync.Mutex
	start      time.Time
	total, n   int
	shown      bool
	lastDrawAt time.Time
}

func newEvalBar(e *env, total int, on bool) *evalBar {
	return &evalBar{w: e.stderr, on: on, width: columns(e), start: time.Now(), total: total}
}

func (b *evalBar) done(name string) {
	if !b.on {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.n++
	if time.Since(b.lastDrawAt) < barRedraw && b.n < b.total {
		return
	}
	b.lastDrawAt = time.Now()
	width := b.width()
	if width <= 0 {
		width = 80
	}
	eta := "--"
	if b.n > 0 {
		left := time.Duration(float64(time.Since(b.start)) / float64(b.n) * float64(b.total-b.n))
		eta = shortDuration(left)
	}
	rest := fmt.Sprintf(" %d/%d files  ETA %s  %s", b.n, b.total, eta, name)
	barWidth := maxBar
	fill := barWidth * b.n / max(b.total, 1)
	line := "compact eval [" + strings.Repeat("=", fill) + strings.Repeat(" ", barWidth-fill) + "]" + rest
	if r := []rune(line); len(r) > width-1 {
		line = string(r[:width-1])
	}
	fmt.Fprint(b.w, "\r\033[K"+line)
	b.shown = true
}

func (b *evalBar) end() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.shown {
		fmt.Fprint(b.w, "\r\033[K")
		b.shown = false
	}
}

// errNoLabels is returned when --labels names a directory without labels.
var errNoLabels = errors.New("no NAME.labels.json files")

// runEvalLabels scores the labelled transcripts of --labels DIR.
func runEvalLabels(ctx context.Context, e *env, o *evalOptions, opts eval.Options, pos []string) error {
	if len(pos) > 0 {
		return usageErrorf("eval: --labels takes no files: the labels name their transcripts")
	}
	names, err := filepath.Glob(filepath.Join(o.labels, "*.labels.json"))
	if err != nil || len(names) == 0 {
		return badInput(fmt.Errorf("eval: %s: %w", o.labels, errNoLabels))
	}
	slices.Sort(names)
	dir := o.transcripts
	if dir == "" {
		dir = filepath.Join(o.labels, "..", "transcripts")
	}
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return badInput(fmt.Errorf("eval: the labelled transcripts are not at %s (say where with --transcripts DIR)", dir))
	}
	ev, err := eval.New(opts)
	if err != nil {
		return usageErrorf("eval: %w", err)
	}
	summarize, err := windowSummarizer(opts)
	if err != nil {
		return usageErrorf("eval: %w", err)
	}
	bar := newEvalBar(e, len(names), !o.quiet && !o.asJSON && e.stderrTTY)
	results := make([]eval.LabelResult, len(names))
	transcripts := os.DirFS(dir)
	for i, name := range names {
		if err := ctx.Err(); err != nil {
			bar.end()
			return err
		}
		data, err := os.ReadFile(name)
		if err != nil {
			results[i] = eval.LabelResult{Name: filepath.Base(name), Error: err.Error()}
		} else {
			results[i] = ev.Labelled(ctx, filepath.Base(name), data, transcripts, summarize)
		}
		bar.done(filepath.Base(name))
	}
	bar.end()
	if o.handoffs != "" {
		if err := os.MkdirAll(o.handoffs, 0o755); err != nil {
			return err
		}
		for _, r := range results {
			for suffix, text := range map[string]string{".window.handoff.md": r.WindowText, ".compacted.handoff.md": r.CompactedText} {
				if err := writeFileAtomic(filepath.Join(o.handoffs, r.Name+suffix), func(w io.Writer) error {
					_, err := io.WriteString(w, text)
					return err
				}); err != nil {
					return err
				}
			}
		}
	}
	sum := eval.SummarizeLabels(results)
	err = writeOutput(e, "", func(w io.Writer) error {
		if o.asJSON {
			enc := json.NewEncoder(w)
			enc.SetIndent("", "  ")
			return enc.Encode(struct {
				Labels  []eval.LabelResult `json:"labels"`
				Summary eval.LabelSummary  `json:"summary"`
			}{results, sum})
		}
		writeLabelTable(w, results, sum, o.missing)
		return nil
	})
	if err != nil {
		return err
	}
	return measurementsFailed(sum.Errors, len(results))
}

// windowSummarizer is what writes the handoff of a labelled middle window:
// the summarizer the flags chose (nil: the fallback), at the fallback's
// default budget, the window redacted first as a compaction does.
func windowSummarizer(opts eval.Options) (eval.WindowSummarizer, error) {
	cfg := opts.Config
	if cfg.Strategy == compactor.StrategyPrune {
		return nil, errors.New("--labels scores handoffs: the prune strategy writes none")
	}
	if cfg.Summarizer == nil || cfg.Strategy == compactor.StrategyFallback {
		return nil, nil
	}
	r, err := redact.New(redact.Config{})
	if err != nil {
		return nil, err
	}
	return func(ctx context.Context, w []compact.Message) (compact.Handoff, error) {
		red, _ := r.Transcript(compact.Transcript{Messages: w})
		sum, err := cfg.Summarizer.Summarize(ctx, compact.SummaryRequest{Window: red.Messages, Redacted: true,
			MaxTokens: fallback.DefaultMaxTokens, Focus: r.String(cfg.Focus)})
		return sum.Handoff, err
	}, nil
}

func writeLabelTable(w io.Writer, results []eval.LabelResult, s eval.LabelSummary, missing bool) {
	rows := [][]string{{"labels", "window handoff", "ask", "compacted output", "ask", "its handoff", "leaks"}}
	var failed []string
	for _, r := range results {
		if r.Error != "" {
			failed = append(failed, failure(r.Name, "", r.Error))
			continue
		}
		rows = append(rows, []string{r.Name, middle(r.Window), askText(r.Window.Ask), middle(r.Compacted), askText(r.Compacted.Ask),
			middle(r.CompactedHO), strconv.Itoa(r.Window.Leaks + r.Compacted.Leaks)})
	}
	scored := s.Transcripts - s.Errors
	if scored > 0 {
		rows = append(rows, []string{fmt.Sprintf("mean (%d)", scored), fmt.Sprintf("%.3f", s.WindowMiddle),
			fmt.Sprintf("%d/%d", s.WindowAsksKept, s.WindowAsks), fmt.Sprintf("%.3f", s.CompactedMiddle),
			fmt.Sprintf("%d/%d", s.CompactedAsksKept, s.CompactedAsks), fmt.Sprintf("%.3f", s.CompactedHOMiddle), strconv.Itoa(s.Leaks)})
	}
	writeTable(w, rows)
	if scored == 0 {
		fmt.Fprintf(w, "\nno transcript was scored\n")
	} else {
		fmt.Fprintf(w, "\nshares of the must-keep items first seen in the middle window; over every item: window handoff %.3f, compacted output %.3f, its handoff %.3f\n",
			s.WindowAll, s.CompactedAll, s.CompactedHOAll)
	}
	if missing {
		for _, r := range results {
			for _, m := range r.Window.Missing {
				fmt.Fprintf(w, "missing %s (window handoff): %q\n", r.Name, m)
			}
		}
	}
	if len(failed) > 0 {
		fmt.Fprintf(w, "\n%s failed:\n", plural(len(failed), "transcript"))
		for _, s := range failed {
			fmt.Fprintln(w, "  "+s)
		}
	}
}

func middle(s eval.LabelScore) string {
	return fmt.Sprintf("%d/%d %.3f", s.MiddlePresent, s.MiddleTotal, s.MiddleShare)
}

func askText(ask *bool) string {
	switch {
	case ask == nil:
		return "-"
	case *ask:
		return "verbatim"
	}
	return "MISSING"
}
