package checkpoint

import (
	"os"
	"path/filepath"
)

// LogFrames returns the frames of a FileStore session's log.
func LogFrames(dir, session string) ([][]byte, error) {
	data, err := os.ReadFile(filepath.Join(dir, session, logName))
	if err != nil {
		return nil, err
	}
	frames, _, err := scan(data, 0)
	return frames, err
}

// SetLogFrames replaces a FileStore session's log with frames, as a new
// file (so open stores see a new generation).
func SetLogFrames(dir, session string, frames [][]byte) error {
	return writeAtomic(filepath.Join(dir, session), logName, encodeBatch(frames))
}

// WriteLegacy writes c as a FileStore wrote checkpoints before logs: a
// file per checkpoint and a HEAD. c's identity fields must be set.
func WriteLegacy(dir string, key []byte, c *Checkpoint) error {
	cd, err := newCodec(key)
	if err != nil {
		return err
	}
	return (&legacyFiles{dir: dir, codec: cd}).writeLegacy(c)
}

// NewIDForTest returns a checkpoint ID for seq.
func NewIDForTest(seq int64) string { return newID(seq) }

// LogTail returns where a FileStore session's log's committed batches end
// and its size: a larger size is a torn tail a crashed writer left.
func LogTail(dir, session string) (committed, size int64, err error) {
	data, err := os.ReadFile(filepath.Join(dir, session, logName))
	if err != nil {
		return 0, 0, err
	}
	_, end, err := scan(data, 0)
	return end, int64(len(data)), err
}
