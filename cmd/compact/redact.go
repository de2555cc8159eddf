package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"runtime/debug"
	"sort"
	"strings"
	"unsafe"

	"github.com/compactkit/compact/internal/safeurl"
	"github.com/compactkit/compact/redact"
)

const redactUsage = "compact redact [-o FILE] [--report] [--json] [--rules FILE] [--mask-env NAMES] [--as auto|text|json] [FILE|-]"

const redactExamples = `  compact redact session.jsonl > clean.jsonl
      mask secrets in a transcript; JSON and JSONL stay valid, every byte
      that is not a secret is kept
  env | compact redact
      any text, stdin to stdout
  compact redact --report -o clean.jsonl session.jsonl
      also list what was masked (rule, line:column) on stderr
  compact redact --rules company.toml --mask-env DB_PASSWORD,STRIPE_KEY app.log
      add custom rules (gitleaks TOML) and always mask the values of these
      environment variables
  compact redact --list-rules
      the built-in rules
`

func runRedact(_ context.Context, e *env, args []string) error {
	fs := newFlags(e, "redact", redactUsage, redactExamples)
	output := fs.String("o", "", "write the redacted text to `FILE` (atomically) instead of stdout")
	report := fs.Bool("report", false, "print each finding (rule, line:column, length) to stderr")
	asJSON := fs.Bool("json", false, "with --report: print findings as JSON Lines")
	rulesFile := fs.String("rules", "", "add custom rules from a gitleaks-style TOML `FILE`")
	maskEnv := fs.String("mask-env", "", "comma-separated environment variable `NAMES` whose values are always masked")
	as := fs.String("as", "auto", "input kind: auto (JSON and JSONL detected, kept valid), text or json (fail unless JSON/JSONL)")
	list := fs.Bool("list-rules", false, "print the built-in rules and exit")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if *list {
		return listRules(e)
	}
	if *as != "auto" && *as != "text" && *as != "json" {
		return usageErrorf("--as %q: want auto, text or json", *as)
	}
	cfg := redact.Config{}
	if *rulesFile != "" {
		f, err := os.Open(*rulesFile)
		if err != nil {
			return badInput(err)
		}
		cfg, err = redact.LoadRules(f)
		f.Close()
		if err != nil {
			return badInput(fmt.Errorf("%s: %w", *rulesFile, err))
		}
	}
	r, err := redact.New(cfg)
	if err != nil {
		return badInput(err)
	}
	for _, name := range strings.Split(*maskEnv, ",") {
		if name = strings.TrimSpace(name); name != "" {
			r.AddValue(e.getenv(name))
		}
	}

	in, err := openInput(e, pos)
	if err != nil {
		return err
	}
	defer in.Close()
	br := bufio.NewReaderSize(in, 64<<10)
	// UTF-16 and gzip are read as the text they hold and written back as
	// they came; compressed formats redact cannot write back are refused.
	cd, err := sniffCodec(br)
	if err != nil {
		return badInput(fmt.Errorf("%s: %w", in.name, err))
	}
	if cd != nil {
		dec, err := cd.reader(br)
		if err != nil {
			return badInput(fmt.Errorf("%s: %s: %w", in.name, cd.name, err))
		}
		in = &input{Reader: dec, name: in.name, decoded: true}
		br = bufio.NewReaderSize(dec, 64<<10)
	}
	if *as == "text" || (*as == "auto" && startsAsText(br)) {
		return redactStream(e, r, in, br, cd, *output, *report, *asJSON)
	}
	// The input is most of what stays live; reading and redacting leave
	// garbage of a piece's size. The collector's default goal (twice the
	// live heap) would let that garbage grow to the input's size again.
	defer debug.SetGCPercent(debug.SetGCPercent(25))
	data, err := readSized(in, e.stdin, br)
	if err != nil {
		return fmt.Errorf("read %s: %w", in.name, err)
	}
	if *as == "json" {
		if err := jsonDocError(data); err != nil {
			return badInput(fmt.Errorf("%s: not JSON or JSON Lines: %w", in.name, err))
		}
	}
	// The input is read once and never written: the redactor reads it in
	// place, and writes the output a piece at a time (issue 16: the peak
	// is the input and a piece, not three copies of it).
	doc := unsafe.String(unsafe.SliceData(data), len(data))
	var found []redact.Finding
	if err := writeOutput(e, *output, withCodec(cd, func(w io.Writer) error {
		bw := bufio.NewWriterSize(w, 1<<16)
		var err error
		if found, err = r.NewScope().RedactTo(bw, doc); err != nil {
			return err
		}
		return bw.Flush()
	})); err != nil {
		return err
	}
	if *report {
		if err := printFindings(e, in.name, data, found, *asJSON); err != nil {
			return err
		}
	}
	if st := r.Stats(); st.Timeouts > 0 {
		fmt.Fprintf(e.stderr, "compact: warning: %d custom-rule matches timed out; text they ran on may still hold secrets\n", st.Timeouts)
	}
	return nil
}

// startsAsText reports whether the input is text that Redact would not read
// as one JSON document or as JSON Lines: its first non-blank byte cannot
// open a JSON document, and its first line is no JSON value. Such input is
// redacted as it streams in (redactStream), with the bytes whole-input
// redaction writes.
func startsAsText(br *bufio.Reader) bool {
	head := peekLine(br)
	i := 0
	for i < len(head) && (head[i] == ' ' || head[i] == '\t' || head[i] == '\r' || head[i] == '\n') {
		i++
	}
	if i == len(head) {
		return len(head) == br.Size() // blanks only, so far: stream them if they go on
	}
	switch head[i] {
	case '{', '[', '"':
		return false
	}
	line := head[i:]
	if nl := bytes.IndexByte(line, '\n'); nl >= 0 {
		line = line[:nl]
	} else if len(head) == br.Size() {
		// A first line longer than the look: only a number could still be JSON.
		return !strings.ContainsRune("-0123456789tfn", rune(head[i]))
	}
	return !json.Valid(bytes.TrimRight(line, " \t\r"))
}

// peekLine returns the input's first bytes, as far as a line break after
// its first non-blank byte, or as much as the reader holds at EOF, on an
// error or when its buffer is full. It reads no more than that: a stream
// that stops after its first line (tail -f) is told text or JSON at once.
func peekLine(br *bufio.Reader) []byte {
	for {
		head, err := br.Peek(min(max(br.Buffered(), 1), br.Size())) // what has come, or wait for a first read
		if err != nil || len(head) == br.Size() {
			return head
		}
		i := 0
		for i < len(head) && (head[i] == ' ' || head[i] == '\t' || head[i] == '\r' || head[i] == '\n') {
			i++
		}
		if i < len(head) && bytes.IndexByte(head[i:], '\n') >= 0 {
			return head
		}
		if _, err := br.Peek(len(head) + 1); err != nil { // wait for the next read
			head, _ = br.Peek(br.Buffered())
			return head
		}
	}
}

// redactStream redacts text as it reads it (redact.Scope.RedactTextTo): a
// few MiB held, whatever the input's size. A regular file is read twice:
// first for the masks it already holds, so that new secrets are numbered
// after them, as whole-input redaction does. Findings are reported as they
// are written.
func redactStream(e *env, r *redact.Redactor, in *input, br *bufio.Reader, cd *codec, output string, report, asJSON bool) error {
	sc := r.NewScope()
	if f, ok := regularFile(in, e.stdin); ok {
		if at, err := f.Seek(0, io.SeekCurrent); err == nil {
			if err := sc.ReserveFrom(io.NewSectionReader(f, at-int64(br.Buffered()), math.MaxInt64-at)); err != nil {
				return fmt.Errorf("read %s: %w", in.name, err)
			}
		}
	}
	n := 0
	enc := json.NewEncoder(e.stderr)
	enc.SetEscapeHTML(false)
	found := func(f redact.Finding) error {
		n++
		if !report {
			return nil
		}
		if asJSON {
			return enc.Encode(redactFinding{File: in.name, Rule: f.Rule, Line: f.Line, Column: f.Column, Start: f.Start, End: f.End})
		}
		_, err := fmt.Fprintf(e.stderr, "%s:%d:%d: %s (%d bytes)\n", in.name, f.Line, f.Column, f.Rule, f.End-f.Start)
		return err
	}
	src := &readErrors{r: br}
	err := writeOutput(e, output, withCodec(cd, func(w io.Writer) error {
		bw := bufio.NewWriterSize(w, 1<<16)
		if err := sc.RedactTextTo(bw, src, found); err != nil {
			return err
		}
		return bw.Flush()
	}))
	if src.err != nil {
		return fmt.Errorf("read %s: %w", in.name, src.err)
	}
	if err != nil {
		return err
	}
	if report && !asJSON {
		if _, err := fmt.Fprintf(e.stderr, "%s: %d secret(s) masked\n", in.name, n); err != nil {
			return err
		}
	}
	if st := r.Stats(); st.Timeouts > 0 {
		fmt.Fprintf(e.stderr, "compact: warning: %d custom-rule matches timed out; text they ran on may still hold secrets\n", st.Timeouts)
	}
	return nil
}

// readErrors keeps the error of a reader other than EOF, to tell a failed
// read from a failed write.
type readErrors struct {
	r   io.Reader
	err error
}

func (re *readErrors) Read(p []byte) (int, error) {
	n, err := re.r.Read(p)
	if err != nil && err != io.EOF {
		re.err = err
	}
	return n, err
}

// regularFile returns the input's file when it is a regular one (standard
// input redirected from a file too).
func regularFile(in *input, stdin io.Reader) (*os.File, bool) {
	if in.decoded {
		return nil, false // its bytes are not the text
	}
	f, ok := in.closer.(*os.File)
	if in.closer == nil {
		f, ok = stdin.(*os.File) // < file: standard input is the file
	}
	if !ok {
		return nil, false
	}
	st, err := f.Stat()
	return f, err == nil && st.Mode().IsRegular()
}

// jsonDocError returns nil for a JSON document or JSON Lines, and
// otherwise where the input stops being either: the byte offset (and the
// line, for lines) and what is wrong there.
func jsonDocError(data []byte) error {
	var v json.RawMessage
	docErr := json.Unmarshal(data, &v)
	if docErr == nil {
		return nil
	}
	lines, offset := 0, 0
	for i, line := range strings.Split(string(data), "\n") {
		if strings.TrimSpace(line) != "" {
			if err := json.Unmarshal([]byte(line), &v); err != nil {
				if lines == 0 {
					break // not lines either: the document's error says where
				}
				var syn *json.SyntaxError
				if errors.As(err, &syn) {
					return fmt.Errorf("line %d, byte %d: %w", i+1, offset+int(syn.Offset), err)
				}
				return fmt.Errorf("line %d: %w", i+1, err)
			}
			lines++
		}
		offset += len(line) + 1
	}
	if lines > 1 {
		return nil
	}
	var syn *json.SyntaxError
	if errors.As(docErr, &syn) {
		return fmt.Errorf("byte %d: %w", syn.Offset, docErr)
	}
	return docErr
}

// readSized reads all of in: a file (standard input redirected from one
// too) into a buffer of its size, so a large input is not copied while a
// growing buffer doubles.
// It reads through src, which reads in (and may have read ahead of it).
func readSized(in *input, stdin io.Reader, src io.Reader) ([]byte, error) {
	if f, ok := regularFile(in, stdin); ok {
		if st, err := f.Stat(); err == nil && st.Size() > 0 {
			buf := make([]byte, st.Size()+1) // one more: a file that grew is read to its end
			n, err := io.ReadFull(src, buf)
			if err == io.ErrUnexpectedEOF || err == io.EOF {
				return buf[:n], nil
			}
			if err != nil {
				return nil, err
			}
			rest, err := io.ReadAll(src)
			return append(buf[:n], rest...), err
		}
	}
	// A pipe: read in blocks, then join them once (a doubling buffer would
	// hold the old and the new copy at every step).
	var blocks [][]byte
	total := 0
	for {
		b := make([]byte, 1<<20)
		n, err := io.ReadFull(src, b)
		if n > 0 {
			blocks = append(blocks, b[:n])
			total += n
		}
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			break
		}
		if err != nil {
			return nil, err
		}
	}
	data := make([]byte, 0, total)
	for i, b := range blocks {
		data = append(data, b...)
		blocks[i] = nil
	}
	return data, nil
}

// shownURL is a store's or an API's URL as printed and stored: its
// password masked (issue 17, leak 5), and user information without a
// password masked whole (redis://SECRET@host, https://TOKEN@host).
func shownURL(spec string) string { return safeurl.String(spec) }

// shownCommand is a command line as reported: URL passwords masked, and
// whatever the built-in rules find in its flags (a --focus that quotes a
// secret).
func shownCommand(name string, args []string) string {
	line := redact.MaskURLs(name + " " + shellJoin(args))
	if r, err := redact.New(redact.Config{}); err == nil {
		line = r.String(line)
	}
	return line
}

// redactFinding is one line of --report --json.
type redactFinding struct {
	File   string `json:"file"`
	Rule   string `json:"rule"`
	Line   int    `json:"line"`
	Column int    `json:"column"` // in bytes, from 1
	Start  int    `json:"start"`  // byte offsets into the input
	End    int    `json:"end"`
}

func printFindings(e *env, name string, data []byte, found []redact.Finding, asJSON bool) error {
	// Line starts, to turn byte offsets into line:column.
	starts := []int{0}
	for i, c := range data {
		if c == '\n' {
			starts = append(starts, i+1)
		}
	}
	enc := json.NewEncoder(e.stderr)
	enc.SetEscapeHTML(false)
	for _, f := range found {
		line := sort.Search(len(starts), func(i int) bool { return starts[i] > f.Start })
		col := f.Start - starts[line-1] + 1
		var err error
		if asJSON {
			err = enc.Encode(redactFinding{File: name, Rule: f.Rule, Line: line, Column: col, Start: f.Start, End: f.End})
		} else {
			_, err = fmt.Fprintf(e.stderr, "%s:%d:%d: %s (%d bytes)\n", name, line, col, f.Rule, f.End-f.Start)
		}
		if err != nil {
			return err
		}
	}
	if !asJSON {
		_, err := fmt.Fprintf(e.stderr, "%s: %d secret(s) masked\n", name, len(found))
		return err
	}
	return nil
}

func listRules(e *env) error {
	seen := map[string]bool{}
	for _, ri := range redact.BuiltinRules() {
		key := ri.ID + "\x00" + ri.Description
		if seen[key] {
			continue
		}
		seen[key] = true
		if _, err := fmt.Fprintf(e.stdout, "%-34s %s\n", ri.ID, ri.Description); err != nil {
			return err
		}
	}
	return nil
}

// withCodec makes write's output go through cd's writer (nil: as it is):
// the output is written back in the input's encoding.
func withCodec(cd *codec, write func(io.Writer) error) func(io.Writer) error {
	if cd == nil {
		return write
	}
	return func(w io.Writer) error {
		cw := cd.writer(w)
		if err := write(cw); err != nil {
			return err
		}
		return cw.Close()
	}
}
