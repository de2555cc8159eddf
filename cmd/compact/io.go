package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// input is an opened FILE or stdin.
type input struct {
	io.Reader
	// name is the file name for messages, or "<stdin>".
	name   string
	closer io.Closer
	// decoded: Reader gives the text the file's bytes hold (UTF-16,
	// gzip), not the bytes themselves.
	decoded bool
}

func (in *input) Close() error {
	if in.closer == nil {
		return nil
	}
	return in.closer.Close()
}

// file returns the input as a regular file read from its start, or nil
// (stdin, a pipe, a device): what source records can be read back from.
func (in *input) file() *os.File {
	f, ok := in.closer.(*os.File)
	if !ok {
		return nil
	}
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() {
		return nil
	}
	if off, err := f.Seek(0, io.SeekCurrent); err != nil || off != 0 {
		return nil
	}
	return f
}

// size returns the size of a regular file, 0 for anything else.
func (in *input) size() int64 {
	f, ok := in.Reader.(*os.File)
	if !ok {
		return 0
	}
	st, err := f.Stat()
	if err != nil || !st.Mode().IsRegular() {
		return 0
	}
	return st.Size()
}

// openInput opens the one positional argument: a file, or stdin for "-" or
// none at all. More than one argument is a usage error.
func openInput(e *env, args []string) (*input, error) {
	if len(args) > 1 {
		return nil, usageErrorf("expected one FILE or -, got %d arguments", len(args))
	}
	if len(args) == 0 || args[0] == "-" {
		return &input{Reader: bufio.NewReaderSize(e.stdin, 1<<16), name: "<stdin>"}, nil
	}
	f, err := os.Open(args[0])
	if err != nil {
		return nil, badInput(err)
	}
	st, err := f.Stat()
	if err == nil && st.IsDir() {
		f.Close()
		return nil, usageErrorf("%s is a directory (use \"compact batch\" for directories)", args[0])
	}
	if err == nil && e != nil {
		e.guardFile(args[0], st)
	}
	return &input{Reader: f, name: args[0], closer: f}, nil
}

// guard is something a run reads that none of its outputs may replace:
// the input file (compared by device and inode, so a link or another path
// to it counts) or a checkpoint store's directory (no output inside it).
type guard struct {
	name string      // as the user gave it, for messages
	file os.FileInfo // the input file, or nil
	dir  string      // the store's directory, absolute, links resolved
}

// guardFile records the input file name (its FileInfo st): an output that
// is the same file is refused (outputSet.check).
func (e *env) guardFile(name string, st os.FileInfo) {
	e.guards = append(e.guards, guard{name: name, file: st})
}

// guardStore records a checkpoint store spec when it names a directory
// (a store that does not exist yet included): an output at or under it is
// refused.
func (e *env) guardStore(spec string) {
	if strings.Contains(spec, "://") {
		return // Redis
	}
	if dir := realAbs(spec); dir != "" {
		e.guards = append(e.guards, guard{name: spec, dir: dir})
	}
}

// realAbs is path made absolute with the links of its longest existing
// prefix resolved, or "" when it cannot be made absolute.
func realAbs(path string) string {
	abs, err := filepath.Abs(path)
	if err != nil {
		return ""
	}
	var rest []string
	for p := abs; ; {
		if real, err := filepath.EvalSymlinks(p); err == nil {
			return filepath.Join(append([]string{real}, rest...)...)
		}
		parent := filepath.Dir(p)
		if parent == p {
			return abs
		}
		rest = append([]string{filepath.Base(p)}, rest...)
		p = parent
	}
}

// within reports whether path is dir or lies under it (both absolute and
// clean).
func within(path, dir string) bool {
	rel, err := filepath.Rel(dir, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// refusal returns the usage error for output f when it would replace what
// g guards, else nil.
func (g guard) refusal(f *outputFile) error {
	if g.file != nil {
		st, err := os.Stat(f.real)
		if err != nil || !os.SameFile(st, g.file) || f.replacesInput {
			return nil
		}
		same := ""
		if filepath.Clean(f.path) != filepath.Clean(g.name) {
			same = " (the same file)"
		}
		return usageErrorf("%s %s is the input %s%s: writing it would replace the transcript being read; %s",
			f.flag, f.path, g.name, same, f.inputHint())
	}
	if within(realAbs(f.path), g.dir) {
		return usageErrorf("%s %s lies inside the checkpoint store %s: writing it there would damage the store; write it outside the store",
			f.flag, f.path, g.name)
	}
	return nil
}

// inputHint says what to do instead of writing over the input.
func (f *outputFile) inputHint() string {
	switch {
	case f.inPlaceFlag != "":
		return "write to another file, or pass " + f.inPlaceFlag + " to replace the input (an agent still appending to it would lose what it writes after the read)"
	case f.flag == "-o":
		return "write to another file (and rename it over the input afterwards if that is what you want)"
	}
	return "name another file"
}

// checkOutput refuses, before any work, an output path (named by flag)
// that would replace what e guards; the write checks it again.
func (e *env) checkOutput(flag, path string) error {
	if path == "" || path == "-" {
		return nil
	}
	f := &outputFile{path: path, real: path, flag: flag}
	if real, err := filepath.EvalSymlinks(path); err == nil {
		f.real = real
	}
	return refusal(e.guards, f)
}

// refusal returns the first guard's refusal of f, or nil.
func refusal(guards []guard, f *outputFile) error {
	for _, g := range guards {
		if err := g.refusal(f); err != nil {
			return err
		}
	}
	return nil
}

// writeOutput runs write against stdout, or, when path is set, against a
// temporary file beside path that replaces path only once write and the
// flush to disk succeeded: a failed or interrupted run never leaves a
// half-written output.
func writeOutput(e *env, path string, write func(io.Writer) error) error {
	var o outputSet
	o.add(e, "-o", path, write)
	if err := o.check(); err != nil {
		return err
	}
	return o.commit()
}

// writeFileAtomic writes path with write through a temporary file renamed
// into place (see outputSet).
func writeFileAtomic(path string, write func(io.Writer) error) error {
	return writeOutput(nil, path, write)
}

// outputSet is the files one run writes, all or none: check names every
// path that cannot be written before anything is, and commit writes each
// to a temporary file beside its path, flushed to disk, and renames them
// into place only when all are ready. A failure leaves every existing
// output as it was and no temporary file behind.
//
// A replaced file keeps its mode; a new one gets 0666 less the umask, as
// a shell redirection would. Stdout and paths that are not regular files
// (/dev/null, a FIFO, a terminal) are written to as they are, after the
// temporary files are ready and before they are renamed.
type outputSet struct {
	files []*outputFile
	// env is the run's (nil for writeFileAtomic): its guards are what the
	// outputs may not replace, read at check time; its stdout and stderr
	// are where an output naming them is written.
	env *env
}

type outputFile struct {
	path string // as given, for messages
	flag string // the flag that named it ("-o", "--report"), for messages
	// replacesInput allows the output to be the input file (--in-place);
	// inPlaceFlag names that flag when the command has one, for messages.
	replacesInput bool
	inPlaceFlag   string
	// skip drops the output from commit (an in-place output with nothing
	// to change: the input stays untouched).
	skip   bool
	real   string    // symlinks resolved: the file that is replaced
	stdout io.Writer // the stream written to: e's stdout, or its stderr (stream)
	stream string    // "stdout" or "stderr"
	device bool
	// fd is the descriptor a /dev/fd/N, /dev/stdout or /proc/self/fd/N
	// path names (when viaFD): written through, never renamed over.
	fd    int
	viaFD bool
	write func(io.Writer) error
	tmp   string
	// tmpFile stays open, and locked (lockTemp), until the rename: a
	// later run takes an unlocked temporary file for debris.
	tmpFile *os.File
}

// add registers an output named by flag ("-o" when empty): path "" or "-"
// is e's stdout. With e set, the output may not replace what e guards (the
// input, a checkpoint store).
func (o *outputSet) add(e *env, flag, path string, write func(io.Writer) error) *outputFile {
	if flag == "" {
		flag = "-o"
	}
	out := &outputFile{path: path, real: path, flag: flag, write: write}
	if e != nil {
		if path == "" || path == "-" {
			out.stdout, out.stream = e.stdout, "stdout"
		}
		o.env = e
	}
	o.files = append(o.files, out)
	return out
}

// check resolves each path and reports the first that cannot be written:
// a directory, a missing or read-only parent directory, two outputs that
// name one file, an output that is the input or lies in a checkpoint
// store the run reads (a usage error: nothing is written).
func (o *outputSet) check() error {
	seen := map[string]string{}
	var infos []os.FileInfo // of the outputs that exist, by index in named
	var named []*outputFile
	for _, f := range o.files {
		if f.stdout != nil {
			continue
		}
		// A link is followed, so the file it names is replaced, not the link.
		if real, err := filepath.EvalSymlinks(f.path); err == nil {
			f.real = real
		}
		if o.env != nil {
			if err := refusal(o.env.guards, f); err != nil {
				return err
			}
		}
		// A path naming an open descriptor (/dev/stdout, /dev/fd/N,
		// /proc/self/fd/N), or the file stdout or stderr was redirected
		// to, is written through that descriptor: renamed over, the file
		// would leave the descriptor writing to an unlinked inode.
		if o.stream(f) {
			continue
		}
		if fd, ok := descriptorLink(f.path); ok {
			f.device, f.fd, f.viaFD = true, fd, true
			continue
		}
		abs, err := filepath.Abs(f.real)
		if err != nil {
			return fmt.Errorf("output %s: %w", f.path, err)
		}
		if other, dup := seen[abs]; dup {
			return usageErrorf("%s and %s name the same file", other, f.path)
		}
		seen[abs] = f.path
		st, err := os.Stat(f.real)
		if err == nil {
			// Hard links: two names, one file.
			for i, other := range infos {
				if os.SameFile(st, other) {
					return usageErrorf("%s and %s name the same file", named[i].path, f.path)
				}
			}
			infos, named = append(infos, st), append(named, f)
		}
		switch {
		case err == nil && st.IsDir():
			return fmt.Errorf("%s is a directory", f.path)
		case err == nil && !st.Mode().IsRegular():
			// A device, a FIFO or a terminal (/dev/null, /dev/stdout, a
			// named pipe) cannot be replaced by a rename: renaming over
			// /dev/null would turn it into a plain file.
			f.device = true
			continue
		case err != nil && !errors.Is(err, fs.ErrNotExist):
			return fmt.Errorf("output %s: %w", f.path, err)
		}
		// Temporary files of this output that a killed run left behind
		// (SIGKILL, a power cut) go now.
		removeStaleTemps(filepath.Dir(f.real), filepath.Base(f.real), staleTempAge)
		// The temporary file goes beside the output: creating one now
		// proves the directory exists and is writable.
		tmp, err := createTemp(f.real, 0o600)
		if err != nil {
			return fmt.Errorf("output %s: %w", f.path, err)
		}
		tmp.Close()
		os.Remove(tmp.Name())
	}
	return o.oneOnStdout()
}

// stream makes f write to the run's stdout or stderr when its path names
// one of them: the descriptor itself (/dev/stdout, /proc/self/fd/1), or
// the regular file it was redirected to ("--report r.json > r.json").
func (o *outputSet) stream(f *outputFile) bool {
	if o.env == nil {
		return false
	}
	fd, isFD := descriptorLink(f.path)
	st, err := os.Stat(f.real)
	for _, s := range []struct {
		name string
		w    io.Writer
	}{{"stdout", o.env.stdout}, {"stderr", o.env.stderr}} {
		file, ok := s.w.(*os.File)
		if !ok {
			continue
		}
		same := isFD && uintptr(fd) == file.Fd()
		if !isFD && err == nil && st.Mode().IsRegular() {
			fst, ferr := file.Stat()
			same = ferr == nil && os.SameFile(st, fst)
		}
		if same {
			f.stdout, f.stream = s.w, s.name
			return true
		}
	}
	return false
}

// oneOnStdout refuses two outputs on stdout: the transcript and a path
// that names it.
func (o *outputSet) oneOnStdout() error {
	var first *outputFile
	for _, f := range o.files {
		if f.stream != "stdout" {
			continue
		}
		if first == nil {
			first = f
			continue
		}
		named, other := f, first
		if f.path == "" || f.path == "-" {
			named, other = first, f
		}
		what := other.flag + " " + other.path
		if other.path == "" {
			what = "the main output (no " + other.flag + " given)"
		}
		return usageErrorf("%s %s is this command's stdout, where %s goes: name another file", named.flag, named.path, what)
	}
	return nil
}

// descriptorLink returns the descriptor N that path names when it is, or
// links to, /dev/fd/N or /proc/self/fd/N (/dev/stdout, /dev/stderr).
func descriptorLink(path string) (int, bool) {
	p, err := filepath.Abs(path)
	if err != nil {
		return 0, false
	}
	for range 40 {
		if n, ok := descriptorPath(p); ok {
			return n, true
		}
		target, err := os.Readlink(p)
		if err != nil {
			return 0, false
		}
		if !filepath.IsAbs(target) {
			target = filepath.Join(filepath.Dir(p), target)
		}
		p = filepath.Clean(target)
	}
	return 0, false
}

// descriptorPath parses /dev/fd/N, /proc/self/fd/N, /proc/thread-self/fd/N
// and /proc/PID/fd/N of this process.
func descriptorPath(p string) (int, bool) {
	for _, dir := range []string{"/dev/fd/", "/proc/self/fd/", "/proc/thread-self/fd/", "/proc/" + strconv.Itoa(os.Getpid()) + "/fd/"} {
		if rest, ok := strings.CutPrefix(filepath.ToSlash(p), dir); ok {
			n, err := strconv.Atoi(rest)
			return n, err == nil && n >= 0
		}
	}
	return 0, false
}

// commit writes every output; see outputSet.
func (o *outputSet) commit() (err error) {
	defer func() {
		for _, f := range o.files {
			if f.tmpFile != nil {
				f.tmpFile.Close()
			}
			if err != nil && f.tmp != "" {
				os.Remove(f.tmp)
			}
		}
	}()
	for _, f := range o.files {
		if f.stdout == nil && !f.device && !f.skip {
			if err := f.writeTemp(); err != nil {
				return err
			}
		}
	}
	for _, f := range o.files {
		if (f.stdout != nil || f.device) && !f.skip {
			if err := f.writeDirect(); err != nil {
				return err
			}
		}
	}
	for _, f := range o.files {
		if f.tmp == "" {
			continue
		}
		if closeBeforeRename {
			f.tmpFile.Close()
			f.tmpFile = nil
		}
		if err := os.Rename(f.tmp, f.real); err != nil {
			return fmt.Errorf("replace %s: %w", f.path, fileErrCause(err))
		}
		f.tmp = ""
		if d, derr := os.Open(filepath.Dir(f.real)); derr == nil {
			d.Sync() // make the rename durable; not all filesystems support it
			d.Close()
		}
	}
	return nil
}

// writeTemp writes f to a temporary file beside it, flushed to disk, with
// the mode the output will have.
func (f *outputFile) writeTemp() error {
	perm := os.FileMode(0o666) // less the umask, applied by the kernel
	keep := false
	if st, err := os.Stat(f.real); err == nil {
		perm, keep = st.Mode().Perm(), true
	}
	tmp, err := createTemp(f.real, perm)
	if err != nil {
		return fmt.Errorf("output %s: create its temporary file: %w", f.path, err)
	}
	f.tmp, f.tmpFile = tmp.Name(), tmp
	// Errors name the output, not the temporary file the user never
	// asked for ("write out.jsonl: file too large").
	w := bufio.NewWriterSize(namedWriter{tmp, f.path}, 1<<16)
	err = f.write(w)
	if err == nil {
		err = w.Flush() // named by namedWriter
	}
	if err == nil && keep {
		// The existing file's mode exactly, whatever the umask.
		if err = tmp.Chmod(perm); err != nil {
			err = fmt.Errorf("chmod %s: %w", f.path, fileErrCause(err))
		}
	}
	if err == nil {
		if err = tmp.Sync(); err != nil {
			err = fmt.Errorf("sync %s: %w", f.path, fileErrCause(err))
		}
	}
	return err
}

// namedWriter writes to a temporary file, its errors naming the output
// the file becomes.
type namedWriter struct {
	f    *os.File
	name string
}

func (w namedWriter) Write(p []byte) (int, error) {
	n, err := w.f.Write(p)
	if err != nil {
		err = fmt.Errorf("write %s: %w", w.name, fileErrCause(err))
	}
	return n, err
}

// fileErrCause is the cause of a file operation's error (ENOSPC, EFBIG)
// without the operation and the path it names: a caller names them.
func fileErrCause(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	var le *os.LinkError
	if errors.As(err, &le) {
		return le.Err
	}
	return err
}

// writeDirect writes f to stdout or to the device it names.
func (f *outputFile) writeDirect() error {
	dst := f.stdout
	var file *os.File
	if dst == nil {
		var err error
		if f.viaFD {
			// A copy of the descriptor: it shares the file's offset
			// (and O_APPEND) with the one the shell opened.
			file, err = dupDescriptor(f.fd, f.path)
		} else {
			file, err = os.OpenFile(f.real, os.O_WRONLY, 0)
		}
		if err != nil {
			return fmt.Errorf("open output %s: %w", f.path, err)
		}
		defer file.Close()
		dst = file
	}
	var named io.Writer = dst
	if file != nil {
		named = namedWriter{file, f.path}
	}
	w := bufio.NewWriterSize(named, 1<<16)
	if err := f.write(w); err != nil {
		return err
	}
	if err := w.Flush(); err != nil {
		if file != nil {
			return err // named by namedWriter
		}
		return fmt.Errorf("write %s: %w", f.name(), err)
	}
	if file != nil {
		return file.Close()
	}
	return nil
}

func (f *outputFile) name() string {
	if f.stdout != nil {
		return f.stream
	}
	return f.path
}

// createTemp creates a new file named .BASE.tmp-RANDOM beside path,
// created with perm less the umask and locked (lockTemp) while it is open.
func createTemp(path string, perm os.FileMode) (*os.File, error) {
	dir, base := filepath.Split(path)
	for range 10000 {
		name := filepath.Join(dir, tempPrefix(base)+strconv.FormatUint(rand.Uint64(), 36))
		f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL, perm)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err == nil {
			lockTemp(f)
		}
		return f, err
	}
	return nil, fmt.Errorf("create a temporary file beside %s: too many attempts", path)
}

func tempPrefix(base string) string { return "." + base + ".tmp-" }

// staleTempAge is how old an unlocked temporary file must be before a run
// takes it for debris of a killed one: older than any rename that is
// still to come after the write.
const staleTempAge = time.Minute

// removeStaleTemps removes the temporary files createTemp names after
// base in dir that a run killed mid-write left behind: older than minAge
// and held by no running process (tempInUse), so that a run writing the
// same output at this moment keeps its own.
func removeStaleTemps(dir, base string, minAge time.Duration) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	prefix := tempPrefix(base)
	for _, e := range entries {
		rest, ok := strings.CutPrefix(e.Name(), prefix)
		if !ok || rest == "" || !e.Type().IsRegular() {
			continue
		}
		info, err := e.Info()
		if err != nil || time.Since(info.ModTime()) < minAge {
			continue
		}
		if path := filepath.Join(dir, e.Name()); !tempInUse(path) {
			os.Remove(path)
		}
	}
}

// isTerminal reports whether f is a character device (a terminal), without
// a dependency on x/term.
func isTerminal(f *os.File) bool {
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}
