// Agentloop is a small coding agent built on compact's packages: the loop
// a Go program needs to keep an LLM agent working past its context window
// and through crashes, written to be copied.
//
// It starts an in-process fake of an OpenAI-compatible provider (real HTTP
// on loopback: /v1/chat/completions with tool calls) whose scripted model
// fixes a bug in a small Go package, runs its tests, deploys the fix to
// staging, smoke-tests it, deploys to production, writes a changelog entry
// and emails the team.
// The loop around it
//
//   - counts the transcript's tokens every turn (package tokens);
//   - compacts the transcript when it reaches the threshold of a small
//     window (package compactor): head and recent tail kept verbatim, the
//     middle replaced by a handoff the model writes (the fake answers the
//     compactor's LLM summarizer too) or, with --strategy fallback, one
//     built offline;
//   - masks secrets in tool output before the model, the summarizer or a
//     checkpoint can see them (package redact);
//   - checkpoints every step with compare-and-set saves (package
//     checkpoint): the compacted transcript, the steps, each tool result
//     under its idempotency key, and the side effects performed.
//
// Kill it at any instant and run it again with the same flags: it resumes
// from the latest checkpoint (checkpoint.Resume) and ends with the same
// answer, files and transcript as a run never interrupted. A call that
// already ran is answered from the idempotency cache (checkpoint.Cache.Do)
// and not run again. A kill that lands after a deploy happened but before
// its checkpoint was saved is covered by the other half of the pattern:
// the deploy and mail services take the call's idempotency key and answer
// a key they have seen with the first receipt, as payment and mail APIs
// do. Each side effect happens exactly once.
//
// Usage:
//
//	go run ./examples/agentloop [flags]
//
// The flags are:
//
//	--dir DIR          the agent's work dir (default $TMPDIR/compact-agentloop)
//	--store SPEC       checkpoint store: a directory, or redis://HOST:PORT/DB
//	                   (default DIR/.agentloop)
//	--session ID       the session to run or resume (default agentloop)
//	--strategy S       how compactions write the handoff: auto (the model),
//	                   fallback (offline, deterministic) or prune
//	--window N         the model's context window in tokens (default 2800,
//	                   small so a short run compacts a few times)
//	--step-delay D     wait D at every pause point, to watch the loop or kill it
//	--crash-at P       SIGKILL itself at a pause point: POINT[:TOOL][@N], e.g.
//	                   effect:deploy (see pause.go for the points)
//	--reset            delete the session and the files the example wrote
//
// See README.md for a walk through a kill and a resume.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/compactkit/compact/checkpoint"
	_ "github.com/compactkit/compact/checkpoint/redis" // redis:// stores
	"github.com/compactkit/compact/compactor"
	"github.com/compactkit/compact/llm"
	"github.com/compactkit/compact/redact"
	"github.com/compactkit/compact/tokens"
)

// The models the agent and the compactor's summarizer talk to. Names the
// tokens package knows get exact counts (o200k_base here). The fake
// provider holds the agent's model to --window; the summarizer's is not
// limited, as a real summarizer's window dwarfs a handoff's input.
const (
	model           = "gpt-4o-mini"
	summarizerModel = "gpt-4.1-mini"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	switch {
	case err == nil:
	case errors.Is(err, flag.ErrHelp):
	case errors.Is(err, errUsage):
		os.Exit(2)
	case ctx.Err() != nil:
		fmt.Fprintln(os.Stderr, "agentloop: interrupted; run again with the same flags to resume from the last checkpoint")
		os.Exit(130)
	default:
		fmt.Fprintln(os.Stderr, "agentloop:", err)
		os.Exit(1)
	}
}

var errUsage = errors.New("usage")

type options struct {
	dir, store, session string
	strategy            compactor.Strategy
	window              int
	stepDelay           time.Duration
	crash               *crashSpec
	reset               bool
}

func parseOptions(args []string, stderr io.Writer) (options, error) {
	fs := flag.NewFlagSet("agentloop", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var o options
	var strategy, crashAt string
	fs.StringVar(&o.dir, "dir", filepath.Join(os.TempDir(), "compact-agentloop"), "the agent's work `dir`")
	fs.StringVar(&o.store, "store", "", "checkpoint store: a directory or redis://HOST:PORT/DB (default DIR/.agentloop)")
	fs.StringVar(&o.session, "session", "agentloop", "the session `id` to run or resume")
	fs.StringVar(&strategy, "strategy", "auto", "how compactions write the handoff: auto (the model), fallback or prune")
	fs.IntVar(&o.window, "window", 2800, "the model's context window in `tokens`")
	fs.DurationVar(&o.stepDelay, "step-delay", 0, "wait this long at every pause point")
	fs.StringVar(&crashAt, "crash-at", "", "SIGKILL the process at a pause point: `POINT[:TOOL][@N]`")
	fs.BoolVar(&o.reset, "reset", false, "delete the session and the files the example wrote, then start over")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return o, err
		}
		return o, fmt.Errorf("%w: %v", errUsage, err)
	}
	bad := func(err error) (options, error) {
		fmt.Fprintln(stderr, "agentloop:", err)
		return o, fmt.Errorf("%w: %v", errUsage, err)
	}
	if fs.NArg() > 0 {
		return bad(fmt.Errorf("unexpected argument %q", fs.Arg(0)))
	}
	var err error
	if o.strategy, err = compactor.ParseStrategy(strategy); err != nil {
		return bad(err)
	}
	if o.crash, err = parseCrashSpec(crashAt); err != nil {
		return bad(err)
	}
	if o.window < 1000 {
		return bad(fmt.Errorf("--window %d: want at least 1000 tokens", o.window))
	}
	if !checkpoint.ValidSessionID(o.session) {
		return bad(fmt.Errorf("--session %q: use letters, digits, '.', '_' and '-'", o.session))
	}
	if o.store == "" {
		o.store = filepath.Join(o.dir, ".agentloop")
	}
	return o, nil
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	o, err := parseOptions(args, stderr)
	if err != nil {
		return err
	}
	a, closeAll, err := newAgent(ctx, o, stdout)
	if err != nil {
		return err
	}
	defer closeAll()
	final, err := a.run(ctx)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "final: %s\n", final)
	return nil
}

// newAgent wires the packages together: the checkpoint store, the token
// counter, the redactor, the compactor and the model client, with the fake
// provider and services started on loopback. closeAll stops and closes
// them.
func newAgent(ctx context.Context, o options, stdout io.Writer) (a *agent, closeAll func(), err error) {
	store, err := checkpoint.Open(ctx, o.store, checkpoint.Options{})
	if err != nil {
		return nil, nil, err
	}
	defer func() {
		if err != nil {
			store.Close()
		}
	}()
	if o.reset {
		if err := store.Delete(ctx, o.session); err != nil {
			return nil, nil, err
		}
		if err := resetWorkspace(o.dir); err != nil {
			return nil, nil, err
		}
	}
	if err := os.MkdirAll(o.dir, 0o755); err != nil {
		return nil, nil, err
	}
	fmt.Fprintf(stdout, "work dir %s, checkpoints in %s\n", o.dir, o.store)

	// One redactor for the whole run, so a secret gets the same mask
	// wherever it shows up: in tool output and in the compactor's checks.
	redactor, err := redact.New(redact.Config{})
	if err != nil {
		return nil, nil, err
	}
	// One counter, shared with the compactor, so each message is
	// tokenized once however often the transcript is counted.
	counter, err := tokens.ForModel(model)
	if err != nil {
		return nil, nil, err
	}
	pause := &pauses{delay: o.stepDelay, crash: o.crash, out: stdout}

	// The fake provider and the services it deploys and mails with, on a
	// loopback port. A real agent would point BaseURL at its provider.
	svc := &services{path: filepath.Join(o.dir, receiptsFile), log: stdout,
		pause: func(tool string) { _ = pause.at(context.Background(), "effect", tool) }}
	fake := &fakeModel{windows: map[string]int{model: o.window}, counter: counter}
	base, stopServer, err := serve(fake, svc)
	if err != nil {
		return nil, nil, err
	}
	closeAll = func() {
		stopServer()
		store.Close()
	}

	cfg := openai.DefaultConfig("sk-fake")
	cfg.BaseURL = base + "/v1"
	lc := llm.DefaultConfig("sk-fake")
	lc.BaseURL, lc.Model = cfg.BaseURL, summarizerModel
	summarizer, err := llm.New(lc)
	if err != nil {
		stopServer()
		return nil, nil, err
	}
	cc := compactor.DefaultConfig()
	cc.Model = model
	cc.Window = o.window
	cc.OutputReserve = o.window / 5
	cc.KeepHead = 0        // only the system prompt; the task is pinned as the latest ask
	cc.MinTailMessages = 2 // the latest call and its result, at least
	cc.Strategy = o.strategy
	// With a Summarizer, StrategyAuto has the LLM write handoffs; if it
	// fails, the compactor falls back to the offline handoff.
	cc.Summarizer = summarizer
	cc.Counter = counter
	cc.Redactor = redactor
	comp, err := compactor.New(cc)
	if err != nil {
		stopServer()
		return nil, nil, err
	}
	return &agent{
		session:   o.session,
		model:     model,
		llm:       openai.NewClientWithConfig(cfg),
		tools:     newToolbox(o.dir, o.session, base, redactor),
		counter:   counter,
		compactor: comp,
		store:     store,
		pause:     pause,
		out:       stdout,
	}, closeAll, nil
}

// serve starts the fake provider and the services on a loopback port and
// returns their base URL.
func serve(fake *fakeModel, svc *services) (base string, stop func(), err error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	mux := http.NewServeMux()
	fake.register(mux)
	svc.register(mux)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }() // returns ErrServerClosed when stopped
	return "http://" + ln.Addr().String(), func() { srv.Close() }, nil
}
