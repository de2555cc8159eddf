package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// input is an opened FILE or stdin.
type input struct {
	io.Reader
	// name is the file name for messages, or "<stdin>".
	name   string
	closer io.Closer
}

func (in *input) Close() error {
	if in.closer == nil {
		return nil
	}
	return in.closer.Close()
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
	if st, err := f.Stat(); err == nil && st.IsDir() {
		f.Close()
		return nil, usageErrorf("%s is a directory (use \"compact batch\" for directories)", args[0])
	}
	return &input{Reader: f, name: args[0], closer: f}, nil
}

// writeOutput runs write against stdout, or, when path is set, against a
// temporary file beside path that replaces path only once write and the
// flush to disk succeeded: a failed or interrupted run never leaves a
// half-written output.
func writeOutput(e *env, path string, write func(io.Writer) error) error {
	if path == "" || path == "-" {
		w := bufio.NewWriterSize(e.stdout, 1<<16)
		if err := write(w); err != nil {
			return err
		}
		return w.Flush()
	}
	return writeFileAtomic(path, write)
}

func writeFileAtomic(path string, write func(io.Writer) error) (err error) {
	// A link is followed, so the file it names is replaced, not the link.
	if real, err := filepath.EvalSymlinks(path); err == nil {
		path = real
	}
	if st, err := os.Stat(path); err == nil && !st.Mode().IsRegular() {
		if st.IsDir() {
			return fmt.Errorf("%s is a directory", path)
		}
		// A device, a FIFO or a terminal (/dev/null, /dev/stdout, a named
		// pipe) cannot be replaced by a rename: renaming over /dev/null
		// would turn it into a plain file. It is written to as it is.
		return writeDevice(path, write)
	}
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return fmt.Errorf("create output: %w", err)
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	w := bufio.NewWriterSize(tmp, 1<<16)
	if err = write(w); err != nil {
		return err
	}
	if err = w.Flush(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err = tmp.Sync(); err != nil {
		return fmt.Errorf("sync %s: %w", path, err)
	}
	if err = tmp.Close(); err != nil {
		return fmt.Errorf("close %s: %w", path, err)
	}
	if err = os.Chmod(tmp.Name(), 0o644); err != nil {
		return fmt.Errorf("chmod %s: %w", path, err)
	}
	if err = os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("replace %s: %w", path, err)
	}
	if d, derr := os.Open(dir); derr == nil {
		d.Sync() // make the rename durable; not all filesystems support it
		d.Close()
	}
	return nil
}

// writeDevice writes to a path that is not a regular file.
func writeDevice(path string, write func(io.Writer) error) error {
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		return fmt.Errorf("open output: %w", err)
	}
	w := bufio.NewWriterSize(f, 1<<16)
	if err := write(w); err != nil {
		f.Close()
		return err
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	return f.Close()
}

// isTerminal reports whether f is a character device (a terminal), without
// a dependency on x/term.
func isTerminal(f *os.File) bool {
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}
