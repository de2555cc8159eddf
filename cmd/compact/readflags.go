package main

import (
	"flag"
	"fmt"
	"io"
	"sync"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/format"
)

// readFlags are the flags of every command that reads a transcript: how
// damaged and doubtful input is treated.
type readFlags struct {
	skipBadLines, strictUTF8 *bool
	instance                 *string
}

func addReadFlags(fs *flag.FlagSet) *readFlags {
	return &readFlags{
		skipBadLines: fs.Bool("skip-bad-lines", false, "read past a damaged JSONL line (or a record with a field of the wrong type), warning about each one, instead of failing"),
		strictUTF8:   fs.Bool("strict-utf8", false, "fail on invalid UTF-8 inside a string instead of warning and reading it as U+FFFD"),
		instance:     fs.String("instance", "", "read the instance with this `ID` of a file holding several (an OpenHands evaluation output's instance_id); the first by default"),
	}
}

// readInput reads a transcript as the flags say, printing each
// warning on stderr ("compact: warning: FILE:LINE: ...") and returning
// them too.
func readInput(e *env, r io.Reader, name string, as format.Name, rf *readFlags) (compact.Transcript, []format.Warning, error) {
	return readInputAt(e, r, name, as, rf, nil)
}

// readInputAt is readInput that keeps the messages' source records as
// spans of at (the input file, read from its start) instead of bytes,
// where at is not nil: format.LoadSources must load them before writing.
func readInputAt(e *env, r io.Reader, name string, as format.Name, rf *readFlags, at io.ReaderAt) (compact.Transcript, []format.Warning, error) {
	var warnings []format.Warning
	if in, ok := r.(*input); ok {
		r = in.Reader // a file: the reader sizes its buffer by it
	}
	o := readOptions(e, rf, &warnings)
	o.Source = at
	t, err := format.ReadWith(r, name, as, o)
	return t, warnings, err
}

// readOptions are the ReadOptions the flags say, with warnings printed on
// stderr and, when into is not nil, collected there.
func readOptions(e *env, rf *readFlags, into *[]format.Warning) format.ReadOptions {
	var mu sync.Mutex
	o := format.ReadOptions{Warn: func(w format.Warning) {
		mu.Lock()
		defer mu.Unlock()
		if into != nil {
			*into = append(*into, w)
		}
		if w.Kind == format.WarnInstance {
			w.Msg += "; --instance ID picks another"
		}
		fmt.Fprintln(e.stderr, "compact:", w)
	}}
	if rf != nil {
		o.SkipBadLines, o.StrictUTF8, o.Instance = *rf.skipBadLines, *rf.strictUTF8, *rf.instance
	}
	return o
}
