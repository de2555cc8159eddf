package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/signal"
	"path"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/checkpoint"
	"github.com/compactkit/compact/compactor"
	"github.com/compactkit/compact/format"
	"github.com/compactkit/compact/internal/safeurl"
)

const batchUsage = "compact batch [flags] DIR|GLOB|FILE... --out DIR"

const batchExamples = `  compact batch ~/.claude/projects --out compacted
      compact every transcript under the directory (recursively) into
      compacted/, mirroring the paths; other files are skipped
  compact batch 'runs/**/*.traj' --out out -j 8 --llm-concurrency 2 --report report.json
      8 workers, at most 2 LLM calls at a time, a JSON report per file
  compact batch sessions --out out --summarizer fallback --force
      compact everything now, offline
  Interrupted (Ctrl-C, SIGTERM, a crash)? Run the same command again: files
  already done are skipped, the rest are compacted.

Exit codes: 0 every file compacted, unchanged or skipped as not a transcript;
1 a file failed (the others are done); 2 bad usage, or another batch is
writing to --out (--wait waits for it instead); 130 (SIGINT) or 143
(SIGTERM) interrupted, progress saved.
`

// Batch settings, documented in the README.
const (
	// batchStoreDir is the default checkpoint store, under --out; it is the
	// default of "compact checkpoint" too, so "cd OUT && compact checkpoint
	// list" shows the batch.
	batchStoreDir = defaultCheckpointDir
	// batchSaveTries bounds the compare-and-set retries of one save when
	// another process saves the same batch in between.
	batchSaveTries = 10
	// batchPruneEvery is how many saves pass between two prunings of the
	// default store, which keeps only the latest checkpoints of the batch.
	batchPruneEvery = 32
	// batchListMax is how many skipped or failed files the summary names.
	batchListMax = 20
)

// batchOptions are compact batch's flags: the main command's compaction
// flags and the batch's own.
type batchOptions struct {
	compactOptions
	out            string
	store          string
	reportFile     string
	jobs           int
	llmConcurrency int
	quiet          bool
	fresh          bool
	wait           bool
	progressEvery  time.Duration
}

func batchFlags(e *env, o *batchOptions) *flag.FlagSet {
	fs := newFlags(e, "batch", batchUsage, batchExamples)
	compactionFlags(fs, &o.compactOptions)
	fs.StringVar(&o.out, "out", "", "write the compacted transcripts under `DIR`, mirroring the input paths (required)")
	fs.StringVar(&o.store, "store", "", "checkpoint store of the batch's progress: `DIR` or redis://HOST:PORT/DB (default OUT/"+batchStoreDir+")")
	fs.BoolVar(&o.redactKept, "redact-kept", false, redactKeptUsage)
	fs.StringVar(&o.reportFile, "report", "", "write a JSON report, one entry per file, to `FILE`")
	fs.StringVar(&o.as, "format", "", "read every file as format `NAME` instead of detecting it ("+formatNames(true)+")")
	fs.IntVar(&o.jobs, "j", 0, "files compacted at once (default: the number of CPUs)")
	fs.IntVar(&o.llmConcurrency, "llm-concurrency", 0, "most LLM calls at once across workers (default: one per worker)")
	fs.BoolVar(&o.quiet, "quiet", false, "no progress and no summary; failures and interruptions are still reported")
	fs.BoolVar(&o.fresh, "fresh", false, "forget the batch's saved progress and compact every file again")
	fs.BoolVar(&o.wait, "wait", false, "when another batch is writing to --out, wait for it to end (default: exit 2)")
	fs.DurationVar(&o.progressEvery, "progress-interval", 10*time.Second, "time between progress lines when stderr is not a terminal")
	return fs
}

// runBatch is "compact batch": compact many transcripts, resumably.
func runBatch(ctx context.Context, e *env, args []string) error {
	var o batchOptions
	pos, err := parseFlags(batchFlags(e, &o), args)
	if err != nil {
		return err
	}
	if err := o.check(pos); err != nil {
		return err
	}
	if o.jobs == 0 {
		o.jobs = runtime.NumCPU()
	}
	b, err := newBatch(ctx, e, &o, pos, args)
	if err != nil {
		return err
	}
	defer b.unlock()
	defer b.store.Close()
	return b.run(ctx)
}

func (o *batchOptions) check(pos []string) error {
	switch {
	case len(pos) == 0:
		return usageErrorf("batch: name a directory, a glob or files to compact (%s)", batchUsage)
	case o.out == "":
		return usageErrorf("batch: --out DIR is required: outputs never replace their inputs")
	case o.as != "" && !writable(format.Name(o.as)):
		return usageErrorf("batch: --format %q: compact reads and writes %s", o.as, formatNames(true))
	case o.jobs < 0:
		return usageErrorf("-j %d: want 1 or more workers", o.jobs)
	case o.llmConcurrency < 0:
		return usageErrorf("--llm-concurrency %d: want 0 (one per worker) or more", o.llmConcurrency)
	case o.progressEvery <= 0:
		return usageErrorf("--progress-interval %s: want a positive duration", o.progressEvery)
	}
	return o.compactOptions.check()
}

// fileStatus is what became of one file of a batch.
type fileStatus string

const (
	statusCompacted fileStatus = "compacted" // written, smaller
	statusUnchanged fileStatus = "unchanged" // written as read: nothing to compact
	statusSkipped   fileStatus = "skipped"   // not a transcript compact can write
	statusFailed    fileStatus = "failed"
	statusPending   fileStatus = "pending" // not reached: the batch was interrupted
)

// fileResult is one file's entry in the report, and, with the options
// hash, the step result saved in the batch's checkpoint.
type fileResult struct {
	Path         string         `json:"path"`
	Output       string         `json:"output,omitempty"`
	Format       string         `json:"format,omitempty"`
	Status       fileStatus     `json:"status"`
	Resumed      bool           `json:"resumed,omitempty"`
	TokensBefore int            `json:"tokens_before"`
	TokensAfter  int            `json:"tokens_after"`
	Saved        float64        `json:"saved"`
	Method       compact.Method `json:"method,omitempty"`
	Reason       string         `json:"reason,omitempty"`
	LLMAttempts  int            `json:"llm_attempts,omitempty"`
	// OverWindow is true when the output was written but does not fit
	// the model's usable window (compact's exit 3).
	OverWindow    bool     `json:"over_window,omitempty"`
	Warnings      []string `json:"warnings"`
	Error         string   `json:"error,omitempty"`
	SkippedReason string   `json:"skipped_reason,omitempty"`
	InputSHA256   string   `json:"input_sha256,omitempty"`
	OutputSHA256  string   `json:"output_sha256,omitempty"`
	DurationMS    float64  `json:"duration_ms"`

	rel  string // the step ID: the path under --out, slash-separated
	size int64
}

// failure is the line that reports a failed file: its error, which names
// the file (and where in it) when reading it failed, or the path and the
// error.
func (r *fileResult) failure() string {
	if strings.HasPrefix(r.Error, r.Path+":") {
		return r.Error
	}
	return r.Path + ": " + r.Error
}

// stepResult is what a checkpoint step keeps of a finished file.
type stepResult struct {
	// Options is the hash of the options that shape the output: a file
	// finished under other options is compacted again.
	Options string `json:"options"`
	fileResult
}

// batch is one run of compact batch.
type batch struct {
	e       *env
	o       *batchOptions
	args    []string // the command line after "batch", for the resume hint
	comp    *compactor.Compactor
	options string // optionsHash
	out     string
	files   []*batchFile
	// turnedDown are inputs skipped before reading (directories not
	// followed, special files) or that could not be walked, reported with
	// the rest.
	turnedDown []*fileResult

	unlock     func() // releases --out for the next batch
	store      checkpoint.Store
	storeSpec  string
	storeShown string // storeSpec as printed and reported: its password masked
	ownedStore bool   // the default store under --out: the batch may prune it
	session    string
	prior      map[string]checkpoint.Step // steps of the latest checkpoint
	saver      *batchSaver
	progress   *batchProgress
	warnings   []string
	started    time.Time
}

func newBatch(ctx context.Context, e *env, o *batchOptions, pos, args []string) (*batch, error) {
	b := &batch{e: e, o: o, args: args, started: time.Now()}
	if err := b.configure(); err != nil {
		return nil, err
	}
	out, err := filepath.Abs(o.out)
	if err != nil {
		return nil, usageErrorf("--out: %v", err)
	}
	b.out = out
	b.storeSpec = o.store
	if b.storeSpec == "" {
		b.storeSpec, b.ownedStore = filepath.Join(out, batchStoreDir), true
	}
	b.storeShown = shownURL(b.storeSpec)
	exclude := []string{out}
	if !strings.Contains(b.storeSpec, "://") {
		if abs, err := filepath.Abs(b.storeSpec); err == nil {
			exclude = append(exclude, abs)
		}
	}
	if o.reportFile != "" {
		if err := reportNotAnInput(o.reportFile, pos); err != nil {
			return nil, err
		}
		if abs, err := filepath.Abs(o.reportFile); err == nil {
			exclude = append(exclude, abs)
		}
	}
	base, found, err := discover("batch", pos, exclude)
	if err != nil {
		return nil, err
	}
	if base == out {
		return nil, usageErrorf("--out %s is the input directory: the outputs would replace the inputs", o.out)
	}
	for _, f := range found {
		switch {
		case f.fail != "":
			b.turnedDown = append(b.turnedDown, &fileResult{Path: f.path, Status: statusFailed, Error: f.fail, rel: f.rel, Warnings: []string{}})
		case f.skip != "":
			b.turnedDown = append(b.turnedDown, &fileResult{Path: f.path, Status: statusSkipped, SkippedReason: f.skip, rel: f.rel, Warnings: []string{}})
		default:
			b.files = append(b.files, f)
		}
	}
	b.session = batchSession(out)
	// One batch at a time writes an output directory: a second one would
	// take the first's temporary files for a killed run's and remove them.
	if b.unlock, err = lockBatchOutput(ctx, out, o.wait, func(s string) { fmt.Fprintln(e.stderr, s) }); err != nil {
		return nil, err
	}
	if b.store, err = openStore(ctx, e, b.storeSpec, nil, false); err != nil {
		b.unlock()
		return nil, err
	}
	if err := b.loadProgress(ctx); err != nil {
		b.store.Close()
		b.unlock()
		return nil, err
	}
	return b, nil
}

// configure builds the compactor from the compaction flags, with the LLM
// behind a semaphore when --llm-concurrency caps it, and hashes the
// options that shape an output.
func (b *batch) configure() error {
	cfg, err := b.o.config(b.e)
	if err != nil {
		return err
	}
	usesLLM := cfg.Summarizer != nil
	if usesLLM && b.o.llmConcurrency > 0 {
		cfg.Summarizer = newLimitedSummarizer(cfg.Summarizer, b.o.llmConcurrency)
	}
	if b.comp, err = compactor.New(cfg); err != nil {
		return usageErrorf("%w", err)
	}
	lc, _ := b.o.llmConfig(b.e)
	// An unknown model is warned about by the compactor, in every file's
	// record.
	b.options = optionsHash(b.comp.Config(), usesLLM, lc.BaseURL, lc.Model, b.o.redactKept, b.o.as)
	return nil
}

// optionsHash identifies the options that shape an output, so changing
// one of them (or upgrading compact) redoes the files a run finished under
// the old ones. Timeouts, retries, workers and the API key do not count.
func optionsHash(cfg compactor.Config, usesLLM bool, baseURL, summaryModel string, redactKept bool, as string) string {
	v := struct {
		Version                                      string
		Model                                        string
		Window, OutputReserve, Trigger, Target       int
		Threshold                                    float64
		Force, Abort, SummarizeSystemNotes           bool
		KeepHead, KeepTailTokens, MinTail, Handoff   int
		Strategy                                     compactor.Strategy
		LLM                                          bool
		BaseURL, SummaryModel, Focus                 string
		PruneMin, PruneHead, PruneTail, PruneDupSize int
		RedactKept                                   bool
		// Format is the format forced with --format: omitted when
		// detected, so that hashes of earlier batches stay valid.
		Format string `json:",omitempty"`
	}{
		version, cfg.Model, cfg.Window, cfg.OutputReserve, cfg.TriggerTokens, cfg.TargetTokens,
		cfg.Threshold, cfg.Force, cfg.AbortOnSummaryFailure, cfg.SummarizeSystemNotes,
		cfg.KeepHead, cfg.KeepTailTokens, cfg.MinTailMessages, cfg.HandoffTokens,
		cfg.Strategy, usesLLM, "", "", cfg.Focus,
		cfg.Prune.MinTokens, cfg.Prune.HeadLines, cfg.Prune.TailLines, cfg.Prune.MinDuplicateBytes,
		redactKept, as,
	}
	if usesLLM {
		v.BaseURL, v.SummaryModel = baseURL, summaryModel
	}
	j, _ := json.Marshal(v)
	sum := sha256.Sum256(j)
	return hex.EncodeToString(sum[:8])
}

// batchSession names the checkpoint session of the batch writing to out:
// one per output directory, readable in "compact checkpoint list".
func batchSession(out string) string {
	name := strings.Map(func(r rune) rune {
		if r < 0x80 && (r == '.' || r == '_' || r == '-' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
			return r
		}
		return '-'
	}, filepath.Base(out))
	if len(name) > 40 {
		name = name[:40]
	}
	sum := sha256.Sum256([]byte(out))
	return "batch-" + strings.Trim(name, "-.") + "-" + hex.EncodeToString(sum[:4])
}

// loadProgress reads the batch's latest checkpoint (or, with --fresh,
// deletes it) and saves one listing every file, so the store is known to
// work before any file is compacted.
func (b *batch) loadProgress(ctx context.Context) error {
	b.saver = &batchSaver{store: b.store, session: b.session, task: "compact batch " + shellJoin(b.args),
		prune: b.ownedStore, updates: make(chan checkpoint.Step, len(b.files)+len(b.turnedDown)), done: make(chan struct{}),
		warn: func(err error) { b.progress.println("compact batch: warning: " + err.Error()) }}
	if b.o.fresh {
		if err := b.store.Delete(ctx, b.session); err != nil {
			return fmt.Errorf("batch: forget saved progress: %w", err)
		}
	}
	latest, err := b.store.Latest(ctx, b.session)
	switch {
	case errors.Is(err, checkpoint.ErrNotFound):
	case errors.Is(err, checkpoint.ErrCorrupt):
		return fmt.Errorf("batch: the saved progress in %s is unreadable (%w); run again with --fresh to start over", b.storeShown, err)
	case err != nil:
		return fmt.Errorf("batch: read saved progress: %w", err)
	default:
		b.saver.cp = latest
	}
	b.prior = map[string]checkpoint.Step{}
	if latest != nil {
		for _, s := range latest.Steps {
			b.prior[s.ID] = s
		}
	}
	var fresh []checkpoint.Step
	for _, f := range b.files {
		if _, ok := b.prior[f.rel]; !ok {
			fresh = append(fresh, checkpoint.Step{ID: f.rel, Status: checkpoint.StepPending, Tool: "compact"})
		}
	}
	if err := b.saver.save(ctx, fresh, checkpoint.StatusRunning, ""); err != nil {
		return fmt.Errorf("batch: save progress to %s: %w", b.storeShown, err)
	}
	return nil
}

// run compacts the files with -j workers until they are done or the batch
// is interrupted, then reports.
func (b *batch) run(ctx context.Context) error {
	b.progress = newBatchProgress(b.e.stderr, b.progressMode(), columns(b.e), b.o.progressEvery)
	for _, w := range b.warnings {
		b.progress.println("compact batch: warning: " + w)
	}
	for _, r := range b.turnedDown {
		if r.Status == statusFailed {
			b.progress.println("compact batch: failed: " + r.failure())
		}
	}
	stop, interrupted, unsubscribe := b.watchSignals(ctx)
	defer unsubscribe()
	var totalBytes int64
	for _, f := range b.files {
		totalBytes += f.size
	}
	// Files turned down when found (unreadable, not regular) count in the
	// progress as in the summary: done at once.
	total := len(b.files) + len(b.turnedDown)
	if !b.o.quiet {
		b.progress.println(fmt.Sprintf("compact batch: %s (%s) → %s, %s; progress saved in %s",
			plural(total, "file"), byteSize(totalBytes), b.o.out, plural(b.o.jobs, "worker"), b.storeShown))
	}
	b.progress.begin(total, totalBytes)
	for _, r := range b.turnedDown {
		b.progress.fileDone(r)
	}
	go b.saver.loop(context.WithoutCancel(ctx))

	results := b.compactAll(stop)
	b.progress.end()
	b.saver.close()

	left := 0
	for _, r := range results {
		if r.Status == statusPending {
			left++
		}
	}
	sig := interrupted()
	status, lastErr := checkpoint.StatusCompleted, ""
	switch {
	case left > 0:
		status = checkpoint.StatusPaused
	case countStatus(results, statusFailed) > 0:
		status = checkpoint.StatusFailed
		lastErr = firstFailure(results)
	}
	saveErr := b.saver.finish(context.WithoutCancel(ctx), status, lastErr)
	if saveErr != nil {
		fmt.Fprintf(b.e.stderr, "compact batch: save progress: %v\n", saveErr)
	}
	all := append(results, b.turnedDown...)
	slices.SortFunc(all, func(x, y *fileResult) int { return strings.Compare(x.rel, y.rel) })
	if b.o.reportFile != "" {
		if err := writeFileAtomic(b.o.reportFile, func(w io.Writer) error { return b.writeReport(w, all, left > 0) }); err != nil {
			return err
		}
	}
	if !b.o.quiet {
		b.printSummary(all)
	}
	if left > 0 {
		fmt.Fprintf(b.e.stderr, "compact batch: interrupted with %d of %d files not done; progress saved in %s\n",
			left, len(all), b.storeShown)
		fmt.Fprint(b.e.stderr, b.resumeHint())
		return &exitErr{code: interruptCode(sig), err: errors.New("batch interrupted")}
	}
	if saveErr != nil {
		return fmt.Errorf("batch: save progress: %w", saveErr)
	}
	if n := countStatus(all, statusFailed); n > 0 {
		return fmt.Errorf("batch: %d of %d files failed", n, len(all))
	}
	if n := countFunc(all, func(r *fileResult) bool { return r.OverWindow }); n > 0 {
		return &exitErr{code: exitOverWindow, err: fmt.Errorf("batch: %d of %d files written over the window (over_window in the report)", n, len(all))}
	}
	return nil
}

func (b *batch) progressMode() progressMode {
	switch {
	case b.o.quiet:
		return progressOff
	case b.e.stderrTTY:
		return progressBar
	}
	return progressLines
}

// columns returns the width of the terminal stderr writes to, else
// $COLUMNS, else 0 (unknown).
func columns(e *env) func() int {
	return func() int {
		if n := terminalWidth(e.stderr); n > 0 {
			return n
		}
		n, _ := strconv.Atoi(e.getenv("COLUMNS"))
		return n
	}
}

// compactAll feeds the files to the workers until stop is closed, and
// returns a result for every file, pending for those never started.
func (b *batch) compactAll(stop <-chan struct{}) []*fileResult {
	jobs := make(chan int)
	results := make([]*fileResult, len(b.files))
	var wg sync.WaitGroup
	// Files in flight finish even after an interrupt: their work is not
	// thrown away. A second interrupt exits at once (watchSignals).
	work := context.Background()
	for range min(b.o.jobs, max(len(b.files), 1)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range jobs {
				r := b.compactFile(work, b.files[i])
				results[i] = r
				if !r.Resumed {
					b.saver.record(r, b.options)
				}
				b.progress.fileDone(r)
				if r.Status == statusFailed {
					b.progress.println("compact batch: failed: " + r.failure())
				}
			}
		}()
	}
feed:
	for i := range b.files {
		select {
		case <-stop:
			break feed
		default:
		}
		select {
		case jobs <- i:
		case <-stop:
			break feed
		}
	}
	close(jobs)
	wg.Wait()
	for i, r := range results {
		if r == nil {
			f := b.files[i]
			results[i] = &fileResult{Path: f.path, Status: statusPending, Warnings: []string{}, rel: f.rel, size: f.size}
		}
	}
	return results
}

// compactFile compacts one file into its place under --out, unless an
// earlier run already did so with the same input and options.
func (b *batch) compactFile(ctx context.Context, f *batchFile) *fileResult {
	start := time.Now()
	r := &fileResult{Path: f.path, rel: f.rel, size: f.size, Warnings: []string{}}
	outPath := filepath.Join(b.out, filepath.FromSlash(f.rel))
	defer func() { r.DurationMS = float64(time.Since(start).Microseconds()) / 1000 }()
	data, err := os.ReadFile(f.path)
	if err != nil {
		r.Status, r.Error = statusFailed, err.Error()
		return r
	}
	r.size = int64(len(data))
	sum := sha256.Sum256(data)
	r.InputSHA256 = hex.EncodeToString(sum[:])
	if done := b.finishedEarlier(f.rel, r.InputSHA256, outPath); done != nil {
		done.Path, done.rel, done.size, done.Resumed = f.path, f.rel, r.size, true
		return done
	}
	if len(bytes.TrimSpace(data)) == 0 {
		r.Status, r.SkippedReason = statusSkipped, "empty file"
		return r
	}
	// The messages keep where their records lie in data, not copies of
	// them: only the kept ones are loaded back, for writing.
	t, _, err := readInputAt(b.e, bytes.NewReader(data), f.path, format.Name(b.o.as), b.o.read, bytes.NewReader(data))
	if errors.Is(err, format.ErrUnknownFormat) {
		r.Status, r.SkippedReason = statusSkipped, "not a transcript: no known format recognises it"
		return r
	}
	if err != nil {
		r.Status, r.Error = statusFailed, err.Error()
		return r
	}
	r.Format = t.Format
	if ft, ok := format.Lookup(format.Name(t.Format)); !ok || ft.Write == nil {
		r.Status, r.SkippedReason = statusSkipped, fmt.Sprintf("compact cannot write %s transcripts yet", t.Format)
		return r
	}
	if n := instances(t); n > 1 {
		r.Warnings = append(r.Warnings, fmt.Sprintf("OpenHands evaluation output with %d instances: only the first is compacted, the others are copied as they are (as compact FILE does)", n))
	}
	res, err := b.comp.Compact(ctx, t)
	if err == nil {
		err = format.LoadSources(bytes.NewReader(data), f.path, &res.Transcript)
	}
	if err == nil && b.o.redactKept {
		res.Transcript = redactKept(b.comp.Config().Redactor, res.Transcript)
		res.Record.TokensAfter, _, _ = b.comp.NeedsCompaction(res.Transcript)
	}
	r.TokensBefore, r.TokensAfter, r.Saved = res.Record.TokensBefore, res.Record.TokensAfter, res.Record.Saved()
	r.Method, r.Reason, r.LLMAttempts = res.Record.Method, res.Record.Reason, res.Record.LLMAttempts
	r.Warnings = append(r.Warnings, res.Record.Warnings...)
	if err != nil {
		r.Status, r.Error = statusFailed, err.Error()
		return r
	}
	r.Status = statusUnchanged
	if res.Changed() {
		r.Status = statusCompacted
	}
	if err := writeBatchOutput(outPath, res.Transcript, r); err != nil {
		r.Status, r.Error = statusFailed, err.Error()
		return r
	}
	r.Output, r.OverWindow = outPath, !res.Fits
	return r
}

// instances counts the instances of an OpenHands evaluation-output file:
// the one read as t, and the others it keeps as records.
func instances(t compact.Transcript) int {
	n := 1
	for _, r := range t.Records {
		if r.Type == "instance" {
			n++
		}
	}
	return n
}

// finishedEarlier returns the saved result of the file at rel when an
// earlier run finished it from the same input bytes under the same options
// and, for a written file, its output is still there as written.
func (b *batch) finishedEarlier(rel, inputSHA, outPath string) *fileResult {
	s, ok := b.prior[rel]
	if !ok || s.InputHash != inputSHA || (s.Status != checkpoint.StepCompleted && s.Status != checkpoint.StepSkipped) {
		return nil
	}
	var sr stepResult
	if err := json.Unmarshal(s.Args, &sr); err != nil || sr.Options != b.options {
		return nil
	}
	r := sr.fileResult
	if r.Warnings == nil {
		r.Warnings = []string{}
	}
	if r.Status == statusSkipped {
		return &r
	}
	out, err := os.ReadFile(outPath)
	if err != nil {
		return nil
	}
	sum := sha256.Sum256(out)
	if hex.EncodeToString(sum[:]) != r.OutputSHA256 {
		return nil
	}
	r.Output = outPath
	return &r
}

// writeBatchOutput writes t in its own format to path, atomically, and
// records the output's hash in r. Temporary files a killed run left beside
// path are removed first.
func writeBatchOutput(path string, t compact.Transcript, r *fileResult) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("create output directory: %w", err)
	}
	// The batch holds its output directory's lock: every temporary file
	// of path no process holds is debris, whatever its age.
	removeStaleTemps(dir, filepath.Base(path), 0)
	h := sha256.New()
	err := writeFileAtomic(path, func(w io.Writer) error {
		return format.Write(io.MultiWriter(w, h), t, format.Name(t.Format))
	})
	if err != nil {
		return err
	}
	r.OutputSHA256 = hex.EncodeToString(h.Sum(nil))
	return nil
}

// watchSignals returns a channel closed on the first SIGINT or SIGTERM (or
// when ctx ends): the batch then takes no new file. A second signal exits
// at once with the exit code of the first; the last saved checkpoint
// stands, and files in flight are redone by the next run.
func (b *batch) watchSignals(ctx context.Context) (stop <-chan struct{}, first func() os.Signal, unsubscribe func()) {
	sigs, unsub := batchSignals()
	stopc := make(chan struct{})
	quit := make(chan struct{})
	var mu sync.Mutex
	var got os.Signal
	stopOnce := sync.OnceFunc(func() {
		close(stopc)
		b.progress.setNote("stopping")
		b.progress.println("compact batch: stopping: no new files; the files in flight are finishing (Ctrl-C again to abandon them)")
	})
	go func() {
		for {
			select {
			case <-quit:
				return
			case <-ctx.Done():
				stopOnce()
				ctx = context.Background() // seen; wait for signals only
			case s := <-sigs:
				mu.Lock()
				again := got != nil
				if !again {
					got = s
				}
				mu.Unlock()
				if again {
					b.progress.end()
					fmt.Fprintf(b.e.stderr, "\ncompact batch: abandoned the files in flight; progress saved up to the last finished file\n%s",
						b.resumeHint())
					exitNow(interruptCode(s))
					return
				}
				stopOnce()
			}
		}
	}()
	return stopc, func() os.Signal {
			mu.Lock()
			defer mu.Unlock()
			return got
		}, func() {
			close(quit)
			unsub()
		}
}

// batchSignals subscribes to the signals that interrupt a batch.
var batchSignals = func() (<-chan os.Signal, func()) {
	c := make(chan os.Signal, 2)
	signal.Notify(c, os.Interrupt, syscall.SIGTERM)
	return c, func() { signal.Stop(c) }
}

// exitNow ends the process at a second interrupt.
var exitNow = os.Exit

// interruptCode is the exit code of a batch interrupted by s: 128 plus the
// signal's number, as shells report it (130 for SIGINT, 143 for SIGTERM).
func interruptCode(s os.Signal) int {
	if n, ok := s.(syscall.Signal); ok {
		return 128 + int(n)
	}
	return 130
}

// resumeHint is how to resume: the same command line.
func (b *batch) resumeHint() string {
	cmd := "compact batch " + shellJoin(b.args)
	if len(cmd) > 2000 {
		return "compact batch: resume by running the same command again\n"
	}
	return "compact batch: resume with:\n  " + cmd + "\n"
}

// shellJoin quotes args for a POSIX shell.
func shellJoin(args []string) string {
	q := make([]string, len(args))
	for i, a := range args {
		if a != "" && strings.IndexFunc(a, func(r rune) bool {
			return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./=:,+@%", r))
		}) < 0 {
			q[i] = a
		} else {
			q[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
	}
	return strings.Join(q, " ")
}

// limitedSummarizer lets at most cap(sem) summaries run at once across the
// batch's workers, so many workers do not trip a provider's rate limits.
type limitedSummarizer struct {
	s   compact.Summarizer
	sem chan struct{}
}

func newLimitedSummarizer(s compact.Summarizer, n int) *limitedSummarizer {
	return &limitedSummarizer{s: s, sem: make(chan struct{}, n)}
}

func (l *limitedSummarizer) Summarize(ctx context.Context, req compact.SummaryRequest) (compact.Summary, error) {
	select {
	case l.sem <- struct{}{}:
	case <-ctx.Done():
		return compact.Summary{}, ctx.Err()
	}
	defer func() { <-l.sem }()
	return l.s.Summarize(ctx, req)
}

// batchSaver saves the batch's progress as checkpoints: one step per file,
// from one goroutine, so saves never race. Results that finish while a
// save is under way go into the next one together.
type batchSaver struct {
	store   checkpoint.Store
	session string
	task    string
	prune   bool
	warn    func(error)

	updates chan checkpoint.Step
	done    chan struct{}
	cp      *checkpoint.Checkpoint // the latest saved; owned by the saving goroutine
	pending []checkpoint.Step      // recorded, not yet saved
	saves   int
	lastErr string
}

// record queues r's step for the next save.
func (s *batchSaver) record(r *fileResult, options string) {
	st := checkpoint.Step{ID: r.rel, Tool: "compact", InputHash: r.InputSHA256,
		Duration: time.Duration(r.DurationMS * float64(time.Millisecond))}
	switch r.Status {
	case statusCompacted:
		st.Status = checkpoint.StepCompleted
		st.Output = fmt.Sprintf("compacted: %d → %d tokens (%s)", r.TokensBefore, r.TokensAfter, r.Method)
	case statusUnchanged:
		st.Status = checkpoint.StepCompleted
		st.Output = fmt.Sprintf("unchanged: %d tokens", r.TokensBefore)
	case statusSkipped:
		st.Status, st.Output = checkpoint.StepSkipped, r.SkippedReason
	default:
		st.Status, st.Error = checkpoint.StepFailed, r.Error
	}
	saved := *r
	saved.Output, saved.Resumed = "", false
	st.Args, _ = json.Marshal(stepResult{Options: options, fileResult: saved})
	s.updates <- st
}

// loop saves what record queues until close.
func (s *batchSaver) loop(ctx context.Context) {
	defer close(s.done)
	for st := range s.updates {
		s.pending = append(s.pending, st)
	drain:
		for {
			select {
			case st, ok := <-s.updates:
				if !ok {
					break drain
				}
				s.pending = append(s.pending, st)
			default:
				break drain
			}
		}
		if err := s.save(ctx, s.pending, checkpoint.StatusRunning, ""); err != nil {
			if msg := err.Error(); msg != s.lastErr { // say it once, keep trying
				s.lastErr = msg
				s.warn(fmt.Errorf("save progress: %w", err))
			}
			continue
		}
		s.pending = nil
	}
}

// close stops taking records and waits for the loop to finish its save.
func (s *batchSaver) close() {
	close(s.updates)
	<-s.done
}

// finish saves what is left with the batch's final status.
func (s *batchSaver) finish(ctx context.Context, status checkpoint.Status, lastErr string) error {
	err := s.save(ctx, s.pending, status, lastErr)
	if err == nil && s.prune {
		_, err = s.store.Prune(ctx, checkpoint.PruneOptions{KeepLast: 1})
	}
	return err
}

// save stores the latest checkpoint with steps upserted, compare-and-set:
// when another writer saved in between, it reloads and applies them again.
func (s *batchSaver) save(ctx context.Context, steps []checkpoint.Step, status checkpoint.Status, lastErr string) error {
	for try := 1; ; try++ {
		next := &checkpoint.Checkpoint{Session: s.session, Task: s.task}
		parent := ""
		if s.cp != nil {
			next, parent = s.cp.Clone(), s.cp.ID
			next.Task = s.task
		}
		upsertSteps(next, steps)
		next.Status, next.LastError, next.CurrentStep = status, lastErr, ""
		err := s.store.Save(ctx, next, parent)
		if err == nil {
			s.cp = next
			s.saves++
			if s.prune && s.saves%batchPruneEvery == 0 {
				s.store.Prune(ctx, checkpoint.PruneOptions{KeepLast: 2})
			}
			return nil
		}
		if !errors.Is(err, checkpoint.ErrConflict) || try == batchSaveTries {
			return err
		}
		// Another process saves this batch too: let it finish, then apply
		// these steps to what it saved.
		time.Sleep(time.Duration(rand.IntN(10*try)+1) * time.Millisecond)
		latest, lerr := s.store.Latest(ctx, s.session)
		switch {
		case errors.Is(lerr, checkpoint.ErrNotFound):
			s.cp = nil
		case lerr != nil:
			return lerr
		default:
			s.cp = latest
		}
	}
}

// upsertSteps sets c's steps with the IDs of steps to them, adding the new
// ones, and keeps the steps in path order.
func upsertSteps(c *checkpoint.Checkpoint, steps []checkpoint.Step) {
	if len(steps) == 0 {
		return
	}
	at := make(map[string]int, len(c.Steps))
	for i, st := range c.Steps {
		at[st.ID] = i
	}
	added := false
	for _, st := range steps {
		if i, ok := at[st.ID]; ok {
			c.Steps[i] = st
			continue
		}
		at[st.ID] = len(c.Steps)
		c.Steps = append(c.Steps, st)
		added = true
	}
	if added {
		slices.SortFunc(c.Steps, func(x, y checkpoint.Step) int { return strings.Compare(x.ID, y.ID) })
	}
}

// batchReport is the JSON --report writes.
type batchReport struct {
	Command     string        `json:"command"`
	Out         string        `json:"out"`
	Store       string        `json:"store"`
	Session     string        `json:"session"`
	Options     string        `json:"options_sha256"`
	Interrupted bool          `json:"interrupted"`
	StartedAt   time.Time     `json:"started_at"`
	DurationMS  float64       `json:"duration_ms"`
	Warnings    []string      `json:"warnings"`
	Totals      batchTotals   `json:"totals"`
	Files       []*fileResult `json:"files"`
}

// batchTotals counts the files by status, and the tokens of those written.
type batchTotals struct {
	Files        int `json:"files"`
	Compacted    int `json:"compacted"`
	Unchanged    int `json:"unchanged"`
	Skipped      int `json:"skipped"`
	Failed       int `json:"failed"`
	Pending      int `json:"pending"`
	Resumed      int `json:"resumed"`
	OverWindow   int `json:"over_window"` // written, but over the usable window
	TokensBefore int `json:"tokens_before"`
	TokensAfter  int `json:"tokens_after"`
}

func totals(all []*fileResult) batchTotals {
	t := batchTotals{Files: len(all)}
	for _, r := range all {
		switch r.Status {
		case statusCompacted:
			t.Compacted++
		case statusUnchanged:
			t.Unchanged++
		case statusSkipped:
			t.Skipped++
		case statusFailed:
			t.Failed++
		case statusPending:
			t.Pending++
		}
		if r.Resumed {
			t.Resumed++
		}
		if r.OverWindow {
			t.OverWindow++
		}
		if r.Status == statusCompacted || r.Status == statusUnchanged {
			t.TokensBefore += r.TokensBefore
			t.TokensAfter += r.TokensAfter
		}
	}
	return t
}

func (b *batch) writeReport(w io.Writer, all []*fileResult, interrupted bool) error {
	rep := batchReport{
		Command: safeurl.Text(shownCommand("compact batch", b.args), b.storeSpec), Out: b.out, Store: b.storeShown, Session: b.session,
		Options: b.options, Interrupted: interrupted, StartedAt: b.started.UTC(),
		DurationMS: float64(time.Since(b.started).Microseconds()) / 1000,
		Warnings:   append([]string{}, b.warnings...), Totals: totals(all), Files: all,
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(rep)
}

// printSummary prints the table of counts and tokens, then names the files
// skipped and failed.
func (b *batch) printSummary(all []*fileResult) {
	t := totals(all)
	var cb, ca, ub int
	for _, r := range all {
		switch r.Status {
		case statusCompacted:
			cb, ca = cb+r.TokensBefore, ca+r.TokensAfter
		case statusUnchanged:
			ub += r.TokensBefore
		}
	}
	rows := [][]string{
		{"", "files", "tokens before", "tokens after", "saved"},
		tokenRow("compacted", t.Compacted, cb, ca),
		tokenRow("unchanged", t.Unchanged, ub, ub),
		{"skipped", strconv.Itoa(t.Skipped)},
		{"failed", strconv.Itoa(t.Failed)},
	}
	if t.Pending > 0 {
		rows = append(rows, []string{"not done", strconv.Itoa(t.Pending)})
	}
	rows = append(rows, tokenRow("total", t.Files, t.TokensBefore, t.TokensAfter))
	w := b.e.stdout
	writeTable(w, rows)
	if t.Resumed > 0 {
		fmt.Fprintf(w, "\n%d of these were done by an earlier run and not redone.\n", t.Resumed)
	}
	if n := countFunc(all, func(r *fileResult) bool { return len(r.Warnings) > 0 }); n > 0 {
		where := "run with --report FILE to see them"
		if b.o.reportFile != "" {
			where = "see " + b.o.reportFile
		}
		fmt.Fprintf(w, "\n%s with warnings (%s).\n", plural(n, "file"), where)
	}
	if t.OverWindow > 0 {
		fmt.Fprintf(w, "\n%s written over the window (they still overflow the model's usable window):\n", plural(t.OverWindow, "file"))
		for _, r := range all {
			if r.OverWindow {
				fmt.Fprintf(w, "  %s: %d tokens\n", r.Path, r.TokensAfter)
			}
		}
	}
	b.listFiles(w, all, statusSkipped, "skipped", func(r *fileResult) string { return r.SkippedReason })
	b.listFiles(w, all, statusFailed, "failed", func(r *fileResult) string { return r.Error })
}

func tokenRow(name string, files, before, after int) []string {
	saved := "-"
	if before > 0 {
		saved = fmt.Sprintf("%.0f%%", 100*float64(before-after)/float64(before))
	}
	return []string{name, strconv.Itoa(files), thousands(int64(before)), thousands(int64(after)), saved}
}

// writeTable writes rows with the first column aligned left and the
// others, numbers, aligned right.
func writeTable(w io.Writer, rows [][]string) {
	var width []int
	for _, r := range rows {
		for i, c := range r {
			if i == len(width) {
				width = append(width, 0)
			}
			width[i] = max(width[i], len([]rune(c)))
		}
	}
	for _, r := range rows {
		var b strings.Builder
		for i, c := range r {
			pad := strings.Repeat(" ", width[i]-len([]rune(c)))
			if i == 0 {
				b.WriteString(c + pad)
			} else {
				b.WriteString("  " + pad + c)
			}
		}
		fmt.Fprintln(w, b.String())
	}
}

func (b *batch) listFiles(w io.Writer, all []*fileResult, status fileStatus, title string, why func(*fileResult) string) {
	n := 0
	for _, r := range all {
		if r.Status != status {
			continue
		}
		if n == 0 {
			fmt.Fprintf(w, "\n%s:\n", title)
		}
		if n++; n > batchListMax {
			continue
		}
		if line := why(r); strings.HasPrefix(line, r.Path+":") {
			fmt.Fprintf(w, "  %s\n", shorten(line, 200+len(r.Path))) // the reason names the file
		} else {
			fmt.Fprintf(w, "  %s: %s\n", r.Path, shorten(line, 200))
		}
	}
	if n > batchListMax {
		more := "see --report"
		if b.o.reportFile != "" {
			more = "see " + b.o.reportFile
		}
		fmt.Fprintf(w, "  ... and %d more (%s)\n", n-batchListMax, more)
	}
}

func countStatus(rs []*fileResult, s fileStatus) int {
	return countFunc(rs, func(r *fileResult) bool { return r.Status == s })
}

func countFunc(rs []*fileResult, f func(*fileResult) bool) int {
	n := 0
	for _, r := range rs {
		if f(r) {
			n++
		}
	}
	return n
}

func firstFailure(rs []*fileResult) string {
	for _, r := range rs {
		if r.Status == statusFailed {
			return r.Path + ": " + r.Error
		}
	}
	return ""
}

func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return strconv.Itoa(n) + " " + noun + "s"
}

func byteSize(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.0f kB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}

// batchFile is a file a batch was given.
type batchFile struct {
	path string // as found: the argument joined with the path below it
	rel  string // the path under --out, slash-separated
	size int64
	skip string // why it is skipped without reading, if it is
	fail string // why it could not be walked, if it could not
}

// discover expands the arguments (directories walked recursively, globs
// with ** matched, files as given) into files, each with its path relative
// to base, the deepest directory holding every argument, so outputs mirror
// the inputs. Paths under exclude (the output and the store) are left out.
func discover(cmd string, args []string, exclude []string) (base string, files []*batchFile, err error) {
	type found struct {
		path, abs  string
		skip, fail string
		size       int64
	}
	var all []found
	var bases []string
	add := func(p string, d os.DirEntry, walkErr error) {
		abs, _ := filepath.Abs(p)
		f := found{path: p, abs: abs}
		if walkErr != nil {
			f.fail = walkErr.Error()
		} else {
			f.size, f.skip = fileSize(p, d)
		}
		all = append(all, f)
	}
	for _, arg := range args {
		st, statErr := os.Stat(arg)
		switch {
		case statErr == nil && st.IsDir():
			bases = append(bases, arg)
			if err := walkFiles(arg, nil, exclude, add); err != nil {
				return "", nil, err
			}
		case statErr == nil:
			bases = append(bases, filepath.Dir(arg))
			add(arg, nil, nil)
		case hasMeta(arg):
			root, pat, err := splitGlob(arg)
			if err != nil {
				return "", nil, usageErrorf("%s: %w", cmd, err)
			}
			bases = append(bases, root)
			n := len(all)
			if err := walkFiles(root, pat, exclude, add); err != nil && !errors.Is(err, os.ErrNotExist) {
				return "", nil, err
			}
			if len(all) == n {
				return "", nil, usageErrorf("%s: %s matches no files", cmd, arg)
			}
		default:
			return "", nil, badInput(statErr)
		}
	}
	if base, err = commonDir(bases); err != nil {
		return "", nil, usageErrorf("%s: %v", cmd, err)
	}
	seen := map[string]bool{}
	for _, f := range all {
		if seen[f.abs] {
			continue
		}
		seen[f.abs] = true
		rel, err := filepath.Rel(base, f.abs)
		if err != nil {
			return "", nil, usageErrorf("%s: %v", cmd, err)
		}
		files = append(files, &batchFile{path: f.path, rel: filepath.ToSlash(rel), size: f.size, skip: f.skip, fail: f.fail})
	}
	if len(files) == 0 {
		return "", nil, usageErrorf("%s: no files under %s", cmd, strings.Join(args, ", "))
	}
	slices.SortFunc(files, func(x, y *batchFile) int { return strings.Compare(x.rel, y.rel) })
	return base, files, nil
}

// writable reports whether name is a format compact reads and writes.
func writable(name format.Name) bool {
	f, ok := format.Lookup(name)
	return ok && f.Write != nil
}

// reportNotAnInput refuses a --report path that names an existing file
// among the inputs (a FILE argument, or a file under a DIR or a glob's
// root) unless it is an earlier batch report: the walk leaves the report
// out, and the write would replace the transcript it is.
func reportNotAnInput(report string, args []string) error {
	st, err := os.Stat(report)
	if err != nil || !st.Mode().IsRegular() || isBatchReport(report) {
		return nil
	}
	at := realAbs(report)
	for _, arg := range args {
		root := arg
		if hasMeta(arg) {
			if root, _, err = splitGlob(arg); err != nil {
				continue
			}
		}
		ast, err := os.Stat(root)
		switch {
		case err != nil:
		case ast.IsDir() && within(at, realAbs(root)), !ast.IsDir() && os.SameFile(st, ast):
			return usageErrorf("--report %s is one of the inputs (under %s) and no batch report: writing it would replace it; name another file", report, arg)
		}
	}
	return nil
}

// isBatchReport reports whether the file at path starts as a batch report
// does (writeReport: an object whose first member is "command").
func isBatchReport(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	head := make([]byte, 64)
	n, _ := io.ReadFull(f, head)
	rest, ok := bytes.CutPrefix(bytes.TrimLeft(head[:n], " \t\r\n"), []byte("{"))
	return ok && bytes.HasPrefix(bytes.TrimLeft(rest, " \t\r\n"), []byte(`"command"`))
}

// fileSize returns a regular file's size, or why the entry is skipped.
func fileSize(p string, d os.DirEntry) (int64, string) {
	st, err := os.Stat(p) // follows symlinks
	switch {
	case err != nil && d != nil && d.Type()&os.ModeSymlink != 0:
		return 0, "broken symbolic link"
	case err != nil:
		return 0, err.Error()
	case st.IsDir():
		return 0, "symbolic link to a directory (not followed)"
	case !st.Mode().IsRegular():
		return 0, "not a regular file"
	}
	return st.Size(), ""
}

// vcsDirs are walked past: they hold no transcripts, only noise.
var vcsDirs = map[string]bool{".git": true, ".hg": true, ".svn": true}

// walkFiles calls add for every file under root whose path below root
// matches pat (every file when pat is nil), skipping the excluded paths.
func walkFiles(root string, pat []string, exclude []string, add func(string, os.DirEntry, error)) error {
	return filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		rel, _ := filepath.Rel(root, p)
		segs := strings.Split(filepath.ToSlash(rel), "/")
		if err != nil {
			if p == root {
				return err
			}
			if pat == nil || globCouldMatch(pat, segs) || globMatch(pat, segs) {
				add(p, d, err)
			}
			if d != nil && d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		abs, _ := filepath.Abs(p)
		if p != root && slices.Contains(exclude, abs) {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if d.IsDir() {
			if p != root && (vcsDirs[d.Name()] || pat != nil && !globCouldMatch(pat, segs)) {
				return filepath.SkipDir
			}
			return nil
		}
		if pat == nil || globMatch(pat, segs) {
			add(p, d, nil)
		}
		return nil
	})
}

func hasMeta(s string) bool { return strings.ContainsAny(s, `*?[`) }

// splitGlob splits a pattern into the directory before its first wildcard
// and the slash-separated segments after it, checking each segment.
func splitGlob(pattern string) (root string, pat []string, err error) {
	segs := strings.Split(filepath.ToSlash(pattern), "/")
	i := slices.IndexFunc(segs, hasMeta)
	pat = segs[i:]
	for _, s := range pat {
		if s == "**" {
			continue
		}
		if strings.Contains(s, "**") {
			return "", nil, fmt.Errorf("%s: ** must be a whole path segment (dir/**/*.jsonl)", pattern)
		}
		if _, err := path.Match(s, ""); err != nil {
			return "", nil, fmt.Errorf("%s: %v", pattern, err)
		}
	}
	root = strings.Join(segs[:i], "/")
	switch {
	case i == 1 && segs[0] == "":
		root = "/"
	case root == "":
		root = "."
	}
	return filepath.FromSlash(root), pat, nil
}

// globMatch reports whether the path segments name match the pattern
// segments pat, where ** matches any number of segments.
func globMatch(pat, name []string) bool {
	for len(pat) > 0 {
		if pat[0] == "**" {
			for i := 0; i <= len(name); i++ {
				if globMatch(pat[1:], name[i:]) {
					return true
				}
			}
			return false
		}
		if len(name) == 0 {
			return false
		}
		if ok, _ := path.Match(pat[0], name[0]); !ok {
			return false
		}
		pat, name = pat[1:], name[1:]
	}
	return len(name) == 0
}

// globCouldMatch reports whether a file below the directory dir could
// match pat, so the walk need not enter directories that cannot.
func globCouldMatch(pat, dir []string) bool {
	for ; len(dir) > 0; pat, dir = pat[1:], dir[1:] {
		if len(pat) == 0 {
			return false
		}
		if pat[0] == "**" {
			return true
		}
		if ok, _ := path.Match(pat[0], dir[0]); !ok {
			return false
		}
	}
	return len(pat) > 0
}

// commonDir returns the deepest directory holding every one of dirs, as
// an absolute path.
func commonDir(dirs []string) (string, error) {
	var common []string
	for i, d := range dirs {
		abs, err := filepath.Abs(d)
		if err != nil {
			return "", err
		}
		segs := strings.Split(abs, string(filepath.Separator))
		if i == 0 {
			common = segs
			continue
		}
		n := 0
		for n < len(common) && n < len(segs) && common[n] == segs[n] {
			n++
		}
		common = common[:n]
	}
	c := strings.Join(common, string(filepath.Separator))
	if c == "" || strings.HasSuffix(c, ":") {
		c += string(filepath.Separator)
	}
	return c, nil
}
