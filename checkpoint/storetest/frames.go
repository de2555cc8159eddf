package storetest

import (
	"fmt"

	"github.com/compactkit/compact/checkpoint"
)

// DamageFrames applies a damage to the frames of a session's log (see
// checkpoint.LogBackend): with content false, mutate replaces the record
// frame of checkpoint id; with content true, one byte of the first element
// that checkpoint's save wrote is flipped. It returns the frames to store
// back, for a Backend's Corrupt and CorruptContent.
func DamageFrames(frames [][]byte, id string, content bool, mutate func([]byte) []byte) ([][]byte, error) {
	start := 0
	for i, f := range frames {
		rid, ok := checkpoint.RecordID(f)
		if !ok {
			continue
		}
		if rid != id {
			start = i + 1
			continue
		}
		out := append([][]byte(nil), frames...)
		if !content {
			out[i] = mutate(append([]byte(nil), f...))
			return out, nil
		}
		if start == i {
			return nil, fmt.Errorf("checkpoint %s wrote no element", id)
		}
		b := append([]byte(nil), out[start]...)
		b[len(b)-1] ^= 0x20
		out[start] = b
		return out, nil
	}
	return nil, fmt.Errorf("no record of checkpoint %s in the log", id)
}
