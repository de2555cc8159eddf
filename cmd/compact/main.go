// Command compact counts, redacts, inspects, converts, compacts and
// checkpoints LLM agent transcripts.
//
// Run "compact help" for the list of commands and "compact COMMAND --help"
// for one command's flags and examples.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/debug"
	"syscall"
)

// Exit codes, documented in the README.
const (
	exitOK      = 0
	exitFailure = 1 // the command ran and failed (I/O, a summarizer, a store)
	exitUsage   = 2 // bad flags, bad arguments or unreadable input
	// exitOverWindow: the compacted transcript was written, but it does
	// not fit the model's usable window (compactor.ErrOverWindow).
	exitOverWindow = 3
)

// env is what a command may touch of the outside world. Tests build their
// own; only main reads the real process state.
type env struct {
	stdin  io.Reader
	stdout io.Writer
	stderr io.Writer
	getenv func(string) string
	// stderrTTY is true when stderr is a terminal (progress bars).
	stderrTTY bool
	// budget sets the memory budget of a compaction of a file of that
	// many bytes (setMemoryBudget): the process's collector is global, so
	// only main sets one; nil in tests.
	budget func(inputBytes int64)
	// guards are what the run reads that its outputs may not replace:
	// the input file (openInput), a checkpoint store (openStore).
	guards []guard
}

type command struct {
	name    string
	summary string
	run     func(ctx context.Context, e *env, args []string) error
}

// commands lists the subcommands. The main job (compacting a transcript) runs
// when the first argument names none of them.
func commands() []command {
	return []command{
		{"inspect", "summarise a transcript: format, roles, tool pairs, orphans, handoffs", runInspect},
		{"check", "say whether the agent will resume a transcript whole (exit 1 if not)", runCheck},
		{"convert", "convert a transcript to another format", runConvert},
		{"count", "count a transcript's tokens", runCount},
		{"redact", "mask secrets in a transcript or any text", runRedact},
		{"checkpoint", "list, show, verify, resume and prune checkpoints", runCheckpoint},
		{"batch", "compact every transcript under a directory, resumably", runBatch},
		{"eval", "measure what a compaction keeps: future-use recall, baselines, decay, labels", runEval},
		{"serve", "compact in flight: a proxy for agents speaking the OpenAI or Anthropic API", runServe},
		{"version", "print the version", runVersion},
	}
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	e := &env{stdin: os.Stdin, stdout: os.Stdout, stderr: os.Stderr, getenv: os.Getenv, stderrTTY: isTerminal(os.Stderr),
		budget: func(n int64) { setMemoryBudget(os.Getenv, n) }}
	setGCPercent(os.Getenv("GOGC"), os.Args[1:])
	os.Exit(run(ctx, e, os.Args[1:]))
}

// oneShotGCPercent is the garbage collector's heap growth for the one-shot
// commands. They hold a whole transcript in memory, and most of what they
// allocate around it dies young: with Go's default 100 the heap grows to
// twice what is live before a collection. At 50 the peak RSS of a 10M-token
// compaction is ~15% lower for ~5% more CPU (scripts/perf-compact.sh).
const oneShotGCPercent = 50

// setGCPercent sets oneShotGCPercent for every command but serve (a
// long-running server of small requests, where CPU per request counts),
// unless the user chose with $GOGC.
func setGCPercent(gogc string, args []string) {
	if gogc != "" || len(args) > 0 && args[0] == "serve" {
		return
	}
	debug.SetGCPercent(oneShotGCPercent)
}

// run executes one command line and returns the process exit code.
func run(ctx context.Context, e *env, args []string) int {
	err := dispatch(ctx, e, args)
	if err == nil || errors.Is(err, flag.ErrHelp) {
		return exitOK
	}
	var x *exitErr
	if !errors.As(err, &x) || !x.told {
		fmt.Fprintln(e.stderr, "compact:", err)
	}
	return exitCode(err)
}

func dispatch(ctx context.Context, e *env, args []string) error {
	if len(args) > 0 {
		switch args[0] {
		case "help", "-h", "-help", "--help":
			printUsage(e.stdout)
			return nil
		case "-version", "--version":
			return runVersion(ctx, e, args[1:])
		}
		for _, c := range commands() {
			if c.name == args[0] {
				return c.run(ctx, e, args[1:])
			}
		}
	}
	return runCompact(ctx, e, args)
}

func printUsage(w io.Writer) {
	fmt.Fprint(w, `compact keeps long-running LLM agents working past their context window.

Usage:
  compact [flags] [FILE|-]        compact a transcript (see "compact --help")
  compact COMMAND [flags] [args]

Commands:
`)
	for _, c := range commands() {
		fmt.Fprintf(w, "  %-11s %s\n", c.name, c.summary)
	}
	printCompactFlags(w)
	fmt.Fprint(w, `
Run "compact COMMAND --help" for a command's flags and examples.

Exit codes: 0 ok, 1 failure, 2 bad usage or bad input, 3 compacted
transcript written but still over the model's window.
`)
}

// version may be set at build time with -ldflags "-X main.version=...";
// otherwise versionString reads it from the build info.
var version = "dev"

func runVersion(_ context.Context, e *env, args []string) error {
	if len(args) > 0 {
		return usageErrorf("version takes no arguments, got %q", args[0])
	}
	_, err := fmt.Fprintln(e.stdout, "compact", versionString(version, readBuildInfo))
	return err
}

// readBuildInfo is debug.ReadBuildInfo, replaced in tests.
var readBuildInfo = debug.ReadBuildInfo

// versionString is the version to print: the one set with -ldflags, else
// the module version "go install ...@v1.2.3" recorded, else the VCS
// revision a build from a checkout recorded ("devel 1a2b3c4d5e6f, modified"),
// else "dev".
func versionString(set string, info func() (*debug.BuildInfo, bool)) string {
	if set != "" && set != "dev" {
		return set
	}
	bi, ok := info()
	if !ok {
		return "dev"
	}
	if v := bi.Main.Version; v != "" && v != "(devel)" {
		return v
	}
	var rev, at string
	modified := false
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.time":
			at = s.Value
		case "vcs.modified":
			modified = s.Value == "true"
		}
	}
	if rev == "" {
		return "dev"
	}
	out := "devel " + rev[:min(len(rev), 12)]
	if at != "" {
		out += " " + at
	}
	if modified {
		out += ", modified"
	}
	return out
}

// exitErr carries an exit code with an error.
type exitErr struct {
	code int
	err  error
	// told is true when the command has already said it on stderr.
	told bool
}

func (x *exitErr) Error() string { return x.err.Error() }
func (x *exitErr) Unwrap() error { return x.err }

// usageErrorf reports bad usage or bad input: exit code 2.
func usageErrorf(format string, a ...any) error {
	return &exitErr{code: exitUsage, err: fmt.Errorf(format, a...)}
}

// badInput marks err, a failure to understand the input, as exit code 2.
func badInput(err error) error {
	if err == nil {
		return nil
	}
	return &exitErr{code: exitUsage, err: err}
}

func exitCode(err error) int {
	var x *exitErr
	if errors.As(err, &x) {
		return x.code
	}
	return exitFailure
}

// newFlags returns a flag set that reports errors instead of exiting, and
// prints usage followed by examples on --help.
func newFlags(e *env, name, usage, examples string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(e.stderr)
	fs.Usage = func() {
		fmt.Fprintf(e.stderr, "Usage: %s\n\nFlags:\n", usage)
		fs.PrintDefaults()
		if examples != "" {
			fmt.Fprintf(e.stderr, "\nExamples:\n%s", examples)
		}
	}
	return fs
}

// parseFlags parses args, turning flag errors into usage errors. Flags may
// follow positional arguments ("compact count FILE --json").
func parseFlags(fs *flag.FlagSet, args []string) ([]string, error) {
	var positional []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil, err
			}
			return nil, &exitErr{code: exitUsage, err: err}
		}
		args = fs.Args()
		if len(args) == 0 {
			return positional, nil
		}
		positional = append(positional, args[0])
		args = args[1:]
	}
}
