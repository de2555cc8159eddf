package checkpoint

import (
	"encoding/binary"
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

// LogBatches returns the byte offsets where the batches of a FileStore
// session's log start, and the log's size.
func LogBatches(dir, session string) ([]int64, int64, error) {
	data, err := os.ReadFile(filepath.Join(dir, session, logName))
	if err != nil {
		return nil, 0, err
	}
	var starts []int64
	for p := 0; p < len(data); {
		starts = append(starts, int64(p))
		_, n, err := scanBatch(data[p:])
		if err != nil {
			return starts, int64(len(data)), err
		}
		p += n
	}
	return starts, int64(len(data)), nil
}

// OldLayout rewrites a FileStore session's log in the layout before batch
// headers (frames with a 6-byte header, the last of a batch flagged).
func OldLayout(dir, session string) error {
	path := filepath.Join(dir, session, logName)
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	var out []byte
	for p := 0; p < len(data); {
		frames, n, err := scanBatch(data[p:])
		if err != nil {
			return err
		}
		for i, f := range frames {
			var flags byte
			if i == len(frames)-1 {
				flags = oldFlagLast
			}
			out = append(out, oldMagic, flags)
			out = binary.LittleEndian.AppendUint32(out, uint32(len(f)))
			out = append(out, f...)
		}
		p += n
	}
	return writeAtomic(filepath.Join(dir, session), logName, out)
}
