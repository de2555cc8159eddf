package checkpoint

import (
	"bytes"
	"errors"
	"strconv"
	"strings"
	"testing"
)

func testBatches() [][][]byte {
	return [][][]byte{
		{[]byte("blob one"), []byte("record one")},
		{bytes.Repeat([]byte("x"), 300), []byte("record two")},
		{[]byte("record three")},
	}
}

// TestScanTornOnlyAtTheEnd: every cut of the last batch is a torn tail;
// every one-byte change of any batch is damage at that batch's offset.
func TestScanTornOnlyAtTheEnd(t *testing.T) {
	var log []byte
	var starts []int
	for _, b := range testBatches() {
		starts = append(starts, len(log))
		log = append(log, encodeBatch(b)...)
	}
	last := starts[len(starts)-1]
	for cut := last; cut < len(log); cut++ {
		frames, end, err := scan(log[:cut], 0)
		if err != nil || end != int64(last) || len(frames) != 4 {
			t.Fatalf("cut at %d: %d frames, end %d, %v; want a torn tail after byte %d", cut, len(frames), end, err, last)
		}
	}
	for off := range log {
		d := bytes.Clone(log)
		d[off] ^= 0x40
		batch := 0
		for i, s := range starts {
			if off >= s {
				batch = i
			}
		}
		frames, end, err := scan(d, 0)
		if !errors.Is(err, ErrCorrupt) {
			t.Fatalf("damage at %d: %d frames, %v; want ErrCorrupt", off, len(frames), err)
		}
		if want := "at byte " + strconv.Itoa(starts[batch]); !strings.Contains(err.Error(), want) || end != int64(starts[batch]) {
			t.Fatalf("damage at %d: %v (end %d), want %q", off, err, end, want)
		}
	}
}

func TestEncodeBatchesSplits(t *testing.T) {
	frames := [][]byte{bytes.Repeat([]byte("a"), 100), bytes.Repeat([]byte("b"), 100), []byte("c"), bytes.Repeat([]byte("d"), 500)}
	data := encodeBatches(frames, 150)
	got, end, err := scan(data, 0)
	if err != nil || end != int64(len(data)) || len(got) != len(frames) {
		t.Fatalf("%d frames, end %d of %d, %v", len(got), end, len(data), err)
	}
	for i := range frames {
		if !bytes.Equal(got[i], frames[i]) {
			t.Fatalf("frame %d differs", i)
		}
	}
	if n := bytes.Count(data, []byte{batchMagic0, batchMagic1}); n < 3 {
		t.Errorf("%d batches, want 3 or more", n)
	}
}

// FuzzScan: scan never panics, its frames lie in its input, and a batch
// appended after its end reads back after them.
func FuzzScan(f *testing.F) {
	for _, b := range testBatches() {
		f.Add(encodeBatch(b))
	}
	f.Add([]byte{oldMagic, oldFlagLast, 3, 0, 0, 0, 'a', 'b', 'c'})
	f.Add([]byte{batchMagic0, batchMagic1, 0xff})
	f.Fuzz(func(t *testing.T, data []byte) {
		frames, end, err := scan(data, 0)
		if end < 0 || end > int64(len(data)) {
			t.Fatalf("end %d of %d", end, len(data))
		}
		n := 0
		for _, fr := range frames {
			n += len(fr)
		}
		if n > int(end) {
			t.Fatalf("%d frame bytes in %d committed bytes", n, end)
		}
		if err != nil {
			return
		}
		more := append(bytes.Clone(data[:end]), encodeBatch([][]byte{[]byte("next")})...)
		again, _, err := scan(more, 0)
		if err != nil || len(again) != len(frames)+1 || string(again[len(again)-1]) != "next" {
			t.Fatalf("a batch after the committed end: %d frames, %v", len(again), err)
		}
	})
}
