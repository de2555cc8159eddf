package main

import (
	"bufio"
	"context"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/checkpoint"
	_ "github.com/compactkit/compact/checkpoint/redis" // redis:// stores
	"github.com/compactkit/compact/format"
	"github.com/compactkit/compact/internal/safeurl"
	"github.com/compactkit/compact/redact"
	"github.com/redis/go-redis/v9"
)

// Checkpoint store settings, documented in the README.
const (
	// defaultCheckpointDir is where checkpoints live when neither --store nor
	// COMPACT_CHECKPOINT_STORE says otherwise: beside the project the
	// agent works on, like .git.
	defaultCheckpointDir = ".compact/checkpoints"
	checkpointStoreEnv   = "COMPACT_CHECKPOINT_STORE"
	// checkpointKeyEnv holds the AES key (hex or base64 of 16, 24 or 32 bytes) that
	// encrypts checkpoints at rest; unset stores plain checkpoints.
	checkpointKeyEnv = "COMPACT_CHECKPOINT_KEY"
	// resumeKeyEnv holds the HMAC key that signs resume tokens.
	resumeKeyEnv = "COMPACT_RESUME_KEY"
	// resumeTokenEnv holds the resume token of "checkpoint resume
	// --approve -" when stdin does not: kept off the command line, which
	// every local user can read in ps.
	resumeTokenEnv = "COMPACT_RESUME_TOKEN"
)

// checkpointStoreSpec returns the store to use: the flag's value, else the
// environment's, else the default directory.
func checkpointStoreSpec(e *env, flagValue string) string {
	if flagValue != "" {
		return flagValue
	}
	if v := e.getenv(checkpointStoreEnv); v != "" {
		return v
	}
	return defaultCheckpointDir
}

// openStore opens the checkpoint store named by spec ("DIR" or
// "redis://HOST:PORT/DB"), encrypting with the key in
// COMPACT_CHECKPOINT_KEY when it is set. What it writes is redacted, by r
// or by the default redactor when r is nil, unless plain is set (the
// user's explicit --checkpoint-plain). The compaction command's
// --checkpoint flag uses it through saveCompactionCheckpoint.
func openStore(ctx context.Context, e *env, spec string, r *redact.Redactor, plain bool) (checkpoint.Store, error) {
	key, err := cpKeyFromEnv(e, checkpointKeyEnv)
	if err != nil {
		return nil, usageErrorf("%v", err)
	}
	// go-redis logs every failed dial on its own; the store's error says it
	// once, with the address.
	redis.SetLogger(redisQuietLogger{})
	s, err := checkpoint.Open(ctx, spec, checkpoint.Options{Key: key, Redactor: r, Plain: plain && r == nil})
	err = safeurl.Error(err, spec) // whatever a store package left in
	if err == nil {
		e.guardStore(spec) // no output of this run goes inside it
	}
	if errors.Is(err, checkpoint.ErrInvalid) {
		return nil, usageErrorf("--store: %v", err)
	}
	if err != nil {
		return nil, fmt.Errorf("open checkpoint store %s: %w", shownURL(spec), err)
	}
	return s, nil
}

// saveCompactionCheckpoint saves a compacted transcript and its compaction
// record as the next checkpoint of session in the store named by spec
// ("" for the default), over the session's latest checkpoint,
// compare-and-set: the transcript comes from a file, not from the
// checkpoint, so when another writer gets in between it is saved over the
// new latest (a few tries). A session without checkpoints is started.
// With r set the store redacts with it; with r nil it stores plain text
// (the user asked for --checkpoint-plain).
func saveCompactionCheckpoint(ctx context.Context, e *env, spec, session string, t compact.Transcript, rec compact.Compaction, r *redact.Redactor) (*checkpoint.Checkpoint, error) {
	if !checkpoint.ValidSessionID(session) {
		return nil, usageErrorf("--session: %q is not a session ID (1-128 of A-Z a-z 0-9 . _ -)", session)
	}
	s, err := openStore(ctx, e, checkpointStoreSpec(e, spec), r, r == nil)
	if err != nil {
		return nil, err
	}
	defer s.Close()
	for try := 0; ; try++ {
		parent := ""
		latest, err := s.Latest(ctx, session)
		switch {
		case errors.Is(err, checkpoint.ErrNotFound):
		case err != nil:
			return nil, fmt.Errorf("checkpoint session %s: %w", session, err)
		default:
			parent = latest.ID
		}
		c, err := checkpoint.SaveCompaction(ctx, s, session, parent, t, rec)
		if errors.Is(err, checkpoint.ErrConflict) && try < 4 {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("checkpoint session %s: %w", session, err)
		}
		return c, nil
	}
}

type redisQuietLogger struct{}

func (redisQuietLogger) Printf(context.Context, string, ...any) {}

// cpKeyFromEnv decodes a key given as hex or base64.
func cpKeyFromEnv(e *env, name string) ([]byte, error) {
	v := strings.TrimSpace(e.getenv(name))
	if v == "" {
		return nil, nil
	}
	if k, err := hex.DecodeString(v); err == nil && (len(k) == 16 || len(k) == 24 || len(k) == 32) {
		return k, nil
	}
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		if k, err := enc.DecodeString(v); err == nil && (len(k) == 16 || len(k) == 24 || len(k) == 32) {
			return k, nil
		}
	}
	return nil, fmt.Errorf("%s: want 16, 24 or 32 bytes as hex or base64", name)
}

const checkpointUsage = `compact checkpoint list|show|history|resume|token|prune|verify|recover [flags] [args]`

const checkpointExamples = `  compact checkpoint list --status failed,paused --max-age 24h
  compact checkpoint list --like "fix the failing build"      # resumable sessions like this task
  compact checkpoint show SESSION [ID] [--json]
  compact checkpoint show SESSION --transcript -o resumed.jsonl  # the stored transcript, as its agent reads it
  compact checkpoint history SESSION
  compact checkpoint resume SESSION                           # what runs next
  compact checkpoint token SESSION --user alice --ttl 10m     # a resume token for its pending action
  compact checkpoint token SESSION --user alice | compact checkpoint resume SESSION --user alice --approve -
  compact checkpoint prune --keep 20 --max-age 720h
  compact checkpoint verify --store redis://127.0.0.1:6379/0
  compact checkpoint recover SESSION                          # after verify found no readable head
  compact checkpoint recover --start-over SESSION             # nothing readable: set the log aside, start over
`

func runCheckpoint(ctx context.Context, e *env, args []string) error {
	subs := map[string]func(context.Context, *env, []string) error{
		"list": cpList, "show": cpShow, "history": cpHistory,
		"resume": cpResume, "token": cpToken, "prune": cpPrune, "verify": cpVerify, "recover": cpRecover,
	}
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		fmt.Fprintf(e.stderr, "Usage: %s\n\nSubcommands:\n"+
			"  list     sessions, newest first (filter by status, age, or likeness to a task)\n"+
			"  show     one checkpoint (the latest by default)\n"+
			"  history  a session's checkpoints, newest first\n"+
			"  resume   reset interrupted steps and say what runs next; approve a pending action\n"+
			"  token    issue a resume token approving a session's pending action\n"+
			"  prune    drop old checkpoints and sessions\n"+
			"  verify   check every checkpoint's hash and parent chain\n"+
			"  recover  rebuild a damaged session's head from its newest checkpoint that verifies\n\n"+
			"Store: --store DIR or redis://HOST:PORT/DB (default $%s, else %s).\n"+
			"Encryption at rest: $%s (hex or base64 AES key).\n\nExamples:\n%s",
			checkpointUsage, checkpointStoreEnv, defaultCheckpointDir, checkpointKeyEnv, checkpointExamples)
		if len(args) == 0 {
			return usageErrorf("checkpoint: missing subcommand")
		}
		return nil
	}
	sub, ok := subs[args[0]]
	if !ok {
		return usageErrorf("checkpoint: unknown subcommand %q (want list, show, history, resume, token, prune, verify or recover)", args[0])
	}
	return sub(ctx, e, args[1:])
}

// cpFlags are the flags every checkpoint subcommand takes.
type cpFlags struct {
	*flag.FlagSet
	store  *string
	asJSON *bool
}

func newCPFlags(e *env, name, usage string) cpFlags {
	fs := newFlags(e, "checkpoint "+name, "compact checkpoint "+usage, checkpointExamples)
	return cpFlags{
		FlagSet: fs,
		store:   fs.String("store", "", "checkpoint store: DIR or redis://HOST:PORT/DB (default $"+checkpointStoreEnv+", else "+defaultCheckpointDir+")"),
		asJSON:  fs.Bool("json", false, "print JSON"),
	}
}

// cpStoreError maps store errors onto exit codes: a malformed session or
// checkpoint ID is bad usage; the rest are failures (an encrypted session
// read without a key says how to give one).
func cpStoreError(err error) error {
	if errors.Is(err, checkpoint.ErrInvalid) {
		return badInput(err)
	}
	if errors.Is(err, checkpoint.ErrKeyRequired) {
		return fmt.Errorf("%w: set $%s to the session's key", err, checkpointKeyEnv)
	}
	return err
}

func cpPrintJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

func cpList(ctx context.Context, e *env, args []string) error {
	fs := newCPFlags(e, "list", "list [--status S,S] [--max-age DUR] [--like TASK [--threshold X]] [--json]")
	status := fs.String("status", "", "comma-separated statuses to keep ("+cpStatusNames()+")")
	maxAge := fs.Duration("max-age", 0, "keep sessions updated within this long (e.g. 24h)")
	like := fs.String("like", "", "list failed or paused sessions resumable for this task, best match first")
	threshold := fs.Float64("threshold", 0.3, "with --like: least word similarity (Jaccard) to list")
	rest, err := parseFlags(fs.FlagSet, args)
	if err != nil {
		return err
	}
	if len(rest) > 0 {
		return usageErrorf("checkpoint list: unexpected argument %q", rest[0])
	}
	var f checkpoint.Filter
	for _, s := range cpSplitList(*status) {
		st := checkpoint.Status(s)
		if !st.Valid() {
			return usageErrorf("checkpoint list: --status: unknown status %q (want %s)", s, cpStatusNames())
		}
		f.Status = append(f.Status, st)
	}
	f.MaxAge = *maxAge
	if *threshold <= 0 || *threshold > 1 {
		return usageErrorf("checkpoint list: --threshold must be in (0, 1]")
	}
	s, err := openStore(ctx, e, checkpointStoreSpec(e, *fs.store), nil, false)
	if err != nil {
		return err
	}
	defer s.Close()
	if *like != "" {
		if *status != "" {
			return usageErrorf("checkpoint list: --like lists failed and paused sessions; drop --status")
		}
		matches, err := checkpoint.FindResumable(ctx, s, *like, checkpoint.FindOptions{Threshold: *threshold, Window: *maxAge})
		if err != nil {
			return err
		}
		if *fs.asJSON {
			return cpPrintJSON(e.stdout, cpNonNil(matches))
		}
		tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "SCORE\tSESSION\tSTATUS\tDONE\tUPDATED\tTASK")
		for _, m := range matches {
			fmt.Fprintf(tw, "%.2f\t%s\t%s\t%d/%d\t%s\t%s\n", m.Score, m.Session, m.Status, m.CompletedSteps, m.Steps,
				m.UpdatedAt.Local().Format(time.DateTime), cpOneLine(m.Task, 60))
		}
		return tw.Flush()
	}
	infos, lerr := s.List(ctx, f)
	if lerr != nil && len(infos) == 0 {
		return lerr
	}
	if *fs.asJSON {
		if err := cpPrintJSON(e.stdout, cpNonNil(infos)); err != nil {
			return err
		}
		return errors.Join(lerr, cpDamaged(infos))
	}
	tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "SESSION\tSTATUS\tSEQ\tDONE\tUPDATED\tTASK")
	for _, in := range infos {
		status, updated, task := string(in.Status), in.UpdatedAt.Local().Format(time.DateTime), cpOneLine(in.Task, 60)
		done := fmt.Sprintf("%d/%d", in.CompletedSteps, in.Steps)
		if in.Damaged != "" {
			// The newest readable checkpoint's figures, and where the log breaks.
			status, task = "DAMAGED", in.Damaged
			if in.Latest == "" {
				updated = "-"
			}
		}
		if in.Busy {
			status, done, updated, task = "BUSY", "?", "-", "(a writer holds its lock: a save in progress, or a writer stopped mid-save)"
		}
		if in.Encrypted != "" {
			done, task = "?", fmt.Sprintf("(encrypted with key %s; set $%s)", in.Encrypted, checkpointKeyEnv)
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\t%s\n", in.Session, status, in.Seq, done, updated, task)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	// Sessions that could not be read, after those that could.
	return errors.Join(lerr, cpDamaged(infos))
}

// cpDamaged is the error that makes a listing with damaged sessions exit
// non-zero, naming them.
func cpDamaged(infos []checkpoint.SessionInfo) error {
	var names []string
	for _, in := range infos {
		if in.Damaged != "" {
			names = append(names, in.Session)
		}
	}
	if len(names) == 0 {
		return nil
	}
	return fmt.Errorf("%d damaged session(s): %s (compact checkpoint verify says where; compact checkpoint recover SESSION keeps what is before the damage)",
		len(names), strings.Join(names, ", "))
}

func cpNonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

func cpStatusNames() string {
	var names []string
	for _, s := range checkpoint.Statuses {
		names = append(names, string(s))
	}
	return strings.Join(names, ", ")
}

func cpSplitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

func cpOneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

func cpShow(ctx context.Context, e *env, args []string) error {
	fs := newCPFlags(e, "show", "show SESSION [ID] [--json | --transcript [-o FILE] [--to FORMAT]]")
	asTranscript := fs.Bool("transcript", false, "write the checkpoint's transcript as a file its agent reads (redacted as stored), instead of a summary")
	out := fs.String("o", "", "with --transcript: write to `FILE` (atomically) instead of stdout")
	to := fs.String("to", "", "with --transcript: write in this `FORMAT` (default: the transcript's own)")
	rest, err := parseFlags(fs.FlagSet, args)
	if err != nil {
		return err
	}
	if len(rest) < 1 || len(rest) > 2 {
		return usageErrorf("checkpoint show: want SESSION [ID]")
	}
	if !*asTranscript && (*out != "" || *to != "") {
		return usageErrorf("checkpoint show: -o and --to go with --transcript")
	}
	if *asTranscript && *fs.asJSON {
		return usageErrorf("checkpoint show: --transcript writes the transcript itself; drop --json")
	}
	var toFormat format.Format
	if *to != "" {
		f, ok := format.Lookup(format.Name(*to))
		if !ok || f.Write == nil {
			return usageErrorf("checkpoint show: --to: cannot write %q (compact writes %s)", *to, formatNames(true))
		}
		toFormat = f
	}
	s, err := openStore(ctx, e, checkpointStoreSpec(e, *fs.store), nil, false)
	if err != nil {
		return err
	}
	defer s.Close()
	var c *checkpoint.Checkpoint
	if len(rest) == 2 {
		c, err = s.Load(ctx, rest[0], rest[1])
	} else {
		c, err = s.Latest(ctx, rest[0])
	}
	if err != nil {
		return cpStoreError(err)
	}
	if *asTranscript {
		return cpWriteTranscript(e, c, toFormat, *out)
	}
	if *fs.asJSON {
		return cpPrintJSON(e.stdout, c)
	}
	return cpWriteSummary(e.stdout, c)
}

// cpWriteTranscript writes the transcript a checkpoint holds, in its own
// format or in to, to path (atomically) or stdout: the file an agent
// resumes from, as compact -o wrote it (redacted as stored).
func cpWriteTranscript(e *env, c *checkpoint.Checkpoint, to format.Format, path string) error {
	if c.Transcript == nil || len(c.Transcript.Messages) == 0 && len(c.Transcript.Records) == 0 {
		return fmt.Errorf("checkpoint show --transcript: session %s, checkpoint %s holds no transcript", c.Session, c.ID)
	}
	t := *c.Transcript
	name := format.Name(t.Format)
	if to.Name != "" {
		name = to.Name
	} else if f, ok := format.Lookup(name); !ok || f.Write == nil {
		return usageErrorf("checkpoint show --transcript: compact cannot write %s transcripts; pick one with --to (%s)", t.Format, formatNames(true))
	}
	if n := len(t.Records); n > 0 && !sameFamily(format.Name(t.Format), name) {
		fmt.Fprintf(e.stderr, "compact: note: %d %s records (metadata: %s) have no place in %s and are not written\n",
			n, t.Format, recordTypes(t.Records), name)
	}
	return writeOutput(e, path, func(w io.Writer) error { return format.Write(w, t, name) })
}

func cpWriteSummary(w io.Writer, c *checkpoint.Checkpoint) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	row := func(k, v string) {
		if v != "" {
			fmt.Fprintf(tw, "%s\t%s\n", k, v)
		}
	}
	row("session", c.Session)
	row("checkpoint", fmt.Sprintf("%s (seq %d)", c.ID, c.Seq))
	row("parent", c.ParentID)
	row("status", string(c.Status))
	row("task", cpOneLine(c.Task, 100))
	if c.PlanVersion > 0 {
		row("plan version", strconv.Itoa(c.PlanVersion))
	}
	row("current step", c.CurrentStep)
	row("created", c.CreatedAt.Local().Format(time.RFC3339))
	row("updated", c.UpdatedAt.Local().Format(time.RFC3339))
	if c.RetryCount > 0 {
		row("retries", strconv.Itoa(c.RetryCount))
	}
	row("last error", cpOneLine(c.LastError, 100))
	if t := c.Transcript; t != nil {
		row("transcript", fmt.Sprintf("%d messages, format %q, sha256 %s", len(t.Messages), t.Format, t.Hash()[:16]))
	}
	if n := len(c.Compactions); n > 0 {
		last := c.Compactions[n-1]
		row("compactions", fmt.Sprintf("%d (last: %s, %d -> %d tokens)", n, last.Method, last.TokensBefore, last.TokensAfter))
	}
	if len(c.ToolCache) > 0 {
		row("tool cache", fmt.Sprintf("%d results", len(c.ToolCache)))
	}
	if len(c.SideEffects) > 0 {
		row("side effects", fmt.Sprintf("%d", len(c.SideEffects)))
	}
	if p := c.Pending; p != nil {
		v := fmt.Sprintf("%s (params sha256 %s)", p.Tool, p.ParamsHash[:16])
		if p.ApprovedBy != "" {
			v += " approved by " + p.ApprovedBy
		}
		row("pending", v)
	}
	for _, p := range c.Permissions {
		row("permission", strings.TrimSpace(p.Scope+" "+p.Ref))
	}
	row("sha256", c.Hash)
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(c.Steps) == 0 {
		return nil
	}
	fmt.Fprintln(w)
	tw = tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "STEP\tSTATUS\tTOOL\tDURATION\tOUTPUT / ERROR")
	for _, st := range c.Steps {
		note := st.Output
		if st.Error != "" {
			note = "error: " + st.Error
		}
		dur := ""
		if st.Duration > 0 {
			dur = st.Duration.Round(time.Millisecond).String()
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", st.ID, st.Status, st.Tool, dur, cpOneLine(note, 60))
	}
	return tw.Flush()
}

func cpHistory(ctx context.Context, e *env, args []string) error {
	fs := newCPFlags(e, "history", "history SESSION [--json]")
	rest, err := parseFlags(fs.FlagSet, args)
	if err != nil {
		return err
	}
	if len(rest) != 1 {
		return usageErrorf("checkpoint history: want SESSION")
	}
	s, err := openStore(ctx, e, checkpointStoreSpec(e, *fs.store), nil, false)
	if err != nil {
		return err
	}
	defer s.Close()
	h, err := s.History(ctx, rest[0])
	if err != nil && len(h) == 0 {
		return cpStoreError(err)
	}
	if *fs.asJSON {
		if perr := cpPrintJSON(e.stdout, h); perr != nil {
			return perr
		}
		return err
	}
	tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "SEQ\tCHECKPOINT\tSTATUS\tUPDATED\tSIZE\tCODEC")
	for _, m := range h {
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%d\t%s\n", m.Seq, m.ID, m.Status, m.UpdatedAt.Local().Format(time.DateTime), m.Size, m.Codec)
	}
	if ferr := tw.Flush(); ferr != nil {
		return ferr
	}
	return err
}

// resumeReport is what "checkpoint resume --json" prints.
type resumeReport struct {
	Session       string                    `json:"session"`
	Checkpoint    string                    `json:"checkpoint"`
	Status        checkpoint.Status         `json:"status"`
	RetryCount    int                       `json:"retry_count"`
	Reset         []string                  `json:"reset,omitempty"`
	Next          *checkpoint.Step          `json:"next,omitempty"`
	NeedsApproval bool                      `json:"needs_approval,omitempty"`
	Pending       *checkpoint.PendingAction `json:"pending,omitempty"`
	Saved         string                    `json:"saved,omitempty"`
	Approved      bool                      `json:"approved,omitempty"`
}

func cpResume(ctx context.Context, e *env, args []string) error {
	fs := newCPFlags(e, "resume", "resume SESSION [--save] [--user USER --approve TOKEN|-] [--json]")
	save := fs.Bool("save", false, "save the resumed state (steps reset, status running) as a new checkpoint")
	user := fs.String("user", "", "with --approve: who approves")
	token := fs.String("approve", "", "resume `TOKEN` approving the pending action (signed with $"+resumeKeyEnv+"); - reads it from stdin, or from $"+resumeTokenEnv+" when that is set, so it stays out of ps")
	rest, err := parseFlags(fs.FlagSet, args)
	if err != nil {
		return err
	}
	if len(rest) != 1 {
		return usageErrorf("checkpoint resume: want SESSION")
	}
	if (*token == "") != (*user == "") {
		return usageErrorf("checkpoint resume: --approve and --user go together")
	}
	s, err := openStore(ctx, e, checkpointStoreSpec(e, *fs.store), nil, false)
	if err != nil {
		return err
	}
	defer s.Close()
	session := rest[0]
	var rep resumeReport
	if *token != "" {
		tokens, err := resumeTokens(e, "checkpoint resume --approve")
		if err != nil {
			return err
		}
		tok, err := approvalToken(e, *token)
		if err != nil {
			return err
		}
		c, err := checkpoint.Approve(ctx, s, tokens, session, *user, tok)
		if err != nil {
			return cpStoreError(err)
		}
		rep.Approved, rep.Saved = true, c.ID
	}
	r, err := checkpoint.Resume(ctx, s, session)
	if err != nil {
		return cpStoreError(err)
	}
	c := r.Checkpoint
	rep.Session, rep.Checkpoint, rep.Status, rep.RetryCount = session, c.ID, c.Status, c.RetryCount
	rep.Reset, rep.Next, rep.NeedsApproval = r.Reset, r.Next, r.NeedsApproval
	if r.NeedsApproval {
		rep.Pending = c.Pending
	}
	if *save {
		if err := s.Save(ctx, c, c.ID); err != nil {
			return fmt.Errorf("save the resumed state: %w", err)
		}
		rep.Saved = c.ID
	}
	if *fs.asJSON {
		return cpPrintJSON(e.stdout, rep)
	}
	w := e.stdout
	if rep.Approved {
		fmt.Fprintf(w, "approved %s's pending action as %s\n", session, *user)
	}
	fmt.Fprintf(w, "session %s at checkpoint %s: %s, %d retries\n", session, rep.Checkpoint, rep.Status, rep.RetryCount)
	if len(r.Reset) > 0 {
		fmt.Fprintf(w, "reset to pending: %s\n", strings.Join(r.Reset, ", "))
	}
	switch {
	case r.NeedsApproval:
		fmt.Fprintf(w, "waiting for approval: %s (params sha256 %s); approve with --user USER --approve TOKEN (compact checkpoint token SESSION --user USER issues one)\n", c.Pending.Tool, c.Pending.ParamsHash)
	case r.Next != nil:
		fmt.Fprintf(w, "next: step %s", r.Next.ID)
		if r.Next.Tool != "" {
			fmt.Fprintf(w, " (%s %s)", r.Next.Tool, cpOneLine(string(r.Next.Args), 80))
		}
		fmt.Fprintln(w)
	default:
		fmt.Fprintln(w, "next: nothing; every step is done")
	}
	if *save {
		fmt.Fprintf(w, "saved as %s\n", c.ID)
	}
	return nil
}

func cpPrune(ctx context.Context, e *env, args []string) error {
	fs := newCPFlags(e, "prune", "prune [--keep N] [--max-age DUR] [--json]")
	keep := fs.Int("keep", 0, "keep at most N checkpoints per session (0: no limit)")
	maxAge := fs.Duration("max-age", 0, "drop checkpoints, and whole sessions, older than this (e.g. 720h; 0: no limit)")
	rest, err := parseFlags(fs.FlagSet, args)
	if err != nil {
		return err
	}
	if len(rest) > 0 {
		return usageErrorf("checkpoint prune: unexpected argument %q", rest[0])
	}
	if *keep < 0 || *maxAge < 0 {
		return usageErrorf("checkpoint prune: --keep and --max-age cannot be negative")
	}
	s, err := openStore(ctx, e, checkpointStoreSpec(e, *fs.store), nil, false)
	if err != nil {
		return err
	}
	defer s.Close()
	res, err := s.Prune(ctx, checkpoint.PruneOptions{KeepLast: *keep, MaxAge: *maxAge})
	if *fs.asJSON {
		if perr := cpPrintJSON(e.stdout, res); perr != nil {
			return perr
		}
	} else {
		fmt.Fprintf(e.stdout, "pruned %d checkpoints, %d whole sessions\n", res.Checkpoints, res.Sessions)
		if len(res.Busy) > 0 {
			fmt.Fprintf(e.stdout, "left as they were (saving while pruned; prune again later): %s\n", strings.Join(res.Busy, ", "))
		}
	}
	return err
}

func cpVerify(ctx context.Context, e *env, args []string) error {
	fs := newCPFlags(e, "verify", "verify [SESSION...] [--json]")
	rest, err := parseFlags(fs.FlagSet, args)
	if err != nil {
		return err
	}
	for _, id := range rest {
		if !checkpoint.ValidSessionID(id) {
			return usageErrorf("checkpoint verify: %q is not a session ID", id)
		}
	}
	s, err := openStore(ctx, e, checkpointStoreSpec(e, *fs.store), nil, false)
	if err != nil {
		return err
	}
	defer s.Close()
	n, problems, err := checkpoint.Verify(ctx, s, rest...)
	if err != nil {
		return err
	}
	if *fs.asJSON {
		if err := cpPrintJSON(e.stdout, struct {
			Checked  int                  `json:"checked"`
			Problems []checkpoint.Problem `json:"problems"`
		}{n, cpNonNil(problems)}); err != nil {
			return err
		}
	} else {
		for _, p := range problems {
			fmt.Fprintf(e.stdout, "%s\t%s\t%s\n", p.Session, p.ID, p.Message)
		}
		fmt.Fprintf(e.stdout, "checked %d checkpoints: %d problems\n", n, len(problems))
	}
	return verifyOutcome(problems, n)
}

// verifyOutcome is the error of a verify that found problems: damage,
// which recover repairs, and sessions sealed with a key the store was not
// given, which only the key opens.
func verifyOutcome(problems []checkpoint.Problem, checked int) error {
	var sealed []string
	damaged := 0
	for _, p := range problems {
		if errors.Is(p.Err, checkpoint.ErrKeyRequired) || errors.Is(p.Err, checkpoint.ErrWrongKey) {
			sealed = append(sealed, p.Session)
		} else {
			damaged++
		}
	}
	var errs []error
	if damaged > 0 {
		errs = append(errs, fmt.Errorf("checkpoint verify: %d problems in %d checkpoints (compact checkpoint recover SESSION rebuilds a session's head from its newest checkpoint that verifies)", damaged, checked))
	}
	if len(sealed) > 0 {
		errs = append(errs, fmt.Errorf("checkpoint verify: %d encrypted session(s) not verified: %s (set $%s to their key)", len(sealed), strings.Join(sealed, ", "), checkpointKeyEnv))
	}
	return errors.Join(errs...)
}

// resumeTokens are the resume tokens signed with $COMPACT_RESUME_KEY.
func resumeTokens(e *env, what string) (checkpoint.Tokens, error) {
	key := []byte(e.getenv(resumeKeyEnv))
	if len(key) < 16 {
		return checkpoint.Tokens{}, usageErrorf("%s: $%s must hold the token signing key (16 bytes or more)", what, resumeKeyEnv)
	}
	return checkpoint.Tokens{Key: key}, nil
}

// approvalToken returns the token --approve names: the flag's value, or
// for "-" $COMPACT_RESUME_TOKEN when set, else the first line of stdin.
func approvalToken(e *env, flagValue string) (string, error) {
	if flagValue != "-" {
		return flagValue, nil
	}
	if tok := strings.TrimSpace(e.getenv(resumeTokenEnv)); tok != "" {
		return tok, nil
	}
	line, err := bufio.NewReader(io.LimitReader(e.stdin, 64<<10)).ReadString('\n')
	if err != nil && !errors.Is(err, io.EOF) {
		return "", fmt.Errorf("checkpoint resume --approve -: read the token from stdin: %w", err)
	}
	if tok := strings.TrimSpace(line); tok != "" {
		return tok, nil
	}
	return "", usageErrorf("checkpoint resume --approve -: no token on stdin and $%s is not set", resumeTokenEnv)
}

// tokenReport is what "checkpoint token --json" prints.
type tokenReport struct {
	Token        string    `json:"token"`
	Session      string    `json:"session"`
	Checkpoint   string    `json:"checkpoint"`
	User         string    `json:"user"`
	Tool         string    `json:"tool"`
	ParamsSHA256 string    `json:"params_sha256"`
	ExpiresAt    time.Time `json:"expires_at"`
}

// cpToken issues a resume token for the action a session waits to have
// approved: the token alone on stdout (for a pipe or $(...)), what it
// approves on stderr.
func cpToken(ctx context.Context, e *env, args []string) error {
	fs := newCPFlags(e, "token", "token SESSION --user USER [--ttl DUR] [--json]")
	user := fs.String("user", "", "who may approve with the token (required)")
	ttl := fs.Duration("ttl", 10*time.Minute, "how long the token is good for")
	rest, err := parseFlags(fs.FlagSet, args)
	if err != nil {
		return err
	}
	if len(rest) != 1 {
		return usageErrorf("checkpoint token: want SESSION")
	}
	if *user == "" {
		return usageErrorf("checkpoint token: --user names who approves")
	}
	if *ttl <= 0 {
		return usageErrorf("checkpoint token: --ttl must be positive")
	}
	tokens, err := resumeTokens(e, "checkpoint token")
	if err != nil {
		return err
	}
	s, err := openStore(ctx, e, checkpointStoreSpec(e, *fs.store), nil, false)
	if err != nil {
		return err
	}
	defer s.Close()
	session := rest[0]
	c, err := s.Latest(ctx, session)
	if err != nil {
		return cpStoreError(err)
	}
	if c.Status != checkpoint.StatusWaitingApproval || c.Pending == nil {
		return fmt.Errorf("checkpoint token: %w: session %s is %s, no action waits for approval", checkpoint.ErrNotWaiting, session, c.Status)
	}
	tok, err := tokens.Issue(session, *user, c.Pending.ParamsHash, *ttl)
	if err != nil {
		return err
	}
	expires := time.Now().Add(*ttl).UTC().Truncate(time.Second)
	if *fs.asJSON {
		return cpPrintJSON(e.stdout, tokenReport{Token: tok, Session: session, Checkpoint: c.ID, User: *user,
			Tool: c.Pending.Tool, ParamsSHA256: c.Pending.ParamsHash, ExpiresAt: expires})
	}
	fmt.Fprintf(e.stderr, "compact checkpoint token: approves %s's pending %s (params sha256 %s) by %s, once, until %s\n",
		session, c.Pending.Tool, c.Pending.ParamsHash, *user, expires.Local().Format(time.DateTime))
	fmt.Fprintln(e.stdout, tok)
	return nil
}

// recoverReport is one line of "checkpoint recover --json".
type recoverReport struct {
	Session    string            `json:"session"`
	Checkpoint string            `json:"checkpoint"`
	Seq        int64             `json:"seq"`
	Status     checkpoint.Status `json:"status"`
	// SetAside is where --start-over put the damaged log.
	SetAside string `json:"set_aside,omitempty"`
}

func cpRecover(ctx context.Context, e *env, args []string) error {
	fs := newCPFlags(e, "recover", "recover SESSION... [--start-over] [--json]")
	startOver := fs.Bool("start-over", false, "when no checkpoint before the damage can be read, set the damaged log aside (log.damaged-TIME) so the next save starts the session over")
	rest, err := parseFlags(fs.FlagSet, args)
	if err != nil {
		return err
	}
	if len(rest) == 0 {
		return usageErrorf("checkpoint recover: name the sessions to recover (checkpoint verify lists the damaged ones)")
	}
	for _, id := range rest {
		if !checkpoint.ValidSessionID(id) {
			return usageErrorf("checkpoint recover: %q is not a session ID", id)
		}
	}
	s, err := openStore(ctx, e, checkpointStoreSpec(e, *fs.store), nil, false)
	if err != nil {
		return err
	}
	defer s.Close()
	var reps []recoverReport
	var errs []error
	for _, session := range rest {
		c, err := checkpoint.Recover(ctx, s, session)
		if err != nil && *startOver && errors.Is(err, checkpoint.ErrCorrupt) {
			where, serr := checkpoint.StartOver(ctx, s, session)
			if serr != nil {
				errs = append(errs, cpStoreError(errors.Join(err, serr)))
				continue
			}
			reps = append(reps, recoverReport{Session: session, SetAside: where})
			if !*fs.asJSON {
				fmt.Fprintf(e.stdout, "%s: nothing before the damage could be read; the damaged log is kept as %s and the next save starts the session over\n", session, where)
			}
			continue
		}
		if err != nil {
			if errors.Is(err, checkpoint.ErrCorrupt) {
				err = fmt.Errorf("%w (--start-over sets the damaged log aside so the session can start over)", err)
			}
			errs = append(errs, cpStoreError(err))
			continue
		}
		reps = append(reps, recoverReport{Session: session, Checkpoint: c.ID, Seq: c.Seq, Status: c.Status})
		if !*fs.asJSON {
			fmt.Fprintf(e.stdout, "%s: head is checkpoint %s (seq %d, %s)\n", session, c.ID, c.Seq, c.Status)
		}
	}
	if *fs.asJSON {
		if err := cpPrintJSON(e.stdout, cpNonNil(reps)); err != nil {
			return err
		}
	}
	return errors.Join(errs...)
}
