package checkpoint_test

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/compactkit/compact/checkpoint"
	"github.com/compactkit/compact/checkpoint/storetest"
)

// fileBackend is a FileStore directory for the conformance suite.
type fileBackend struct{ dir string }

func newFileBackend(t *testing.T) *fileBackend { return &fileBackend{dir: t.TempDir()} }

func (b *fileBackend) Open(opts checkpoint.Options) (checkpoint.Store, error) {
	return checkpoint.NewFileStore(b.dir, opts)
}

func (b *fileBackend) Dump() ([]byte, error) {
	var all bytes.Buffer
	err := filepath.WalkDir(b.dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(path)
		all.Write(data)
		return err
	})
	return all.Bytes(), err
}

func (b *fileBackend) damage(session, id string, content bool, mutate func([]byte) []byte) error {
	frames, err := checkpoint.LogFrames(b.dir, session)
	if err != nil {
		return err
	}
	frames, err = storetest.DamageFrames(frames, id, content, mutate)
	if err != nil {
		return err
	}
	return checkpoint.SetLogFrames(b.dir, session, frames)
}

func (b *fileBackend) Corrupt(session, id string, mutate func([]byte) []byte) error {
	return b.damage(session, id, false, mutate)
}

func (b *fileBackend) CorruptContent(session, id string) error {
	return b.damage(session, id, true, nil)
}
