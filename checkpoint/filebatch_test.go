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
		{putFrame(frameBlob, []byte("blob one")), putFrame(frameRecord, []byte("record one"))},
		{putFrame(frameBlob, bytes.Repeat([]byte("x"), 300)), putFrame(frameRecord, []byte("record two"))},
		{putFrame(frameRecord, []byte("record three"))},
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
		if want := "at byte " + strconv.Itoa(starts[batch]); !strings.Contains(err.Error(), want) || end != int64(len(d)) {
			t.Fatalf("damage at %d: %v (end %d), want %q and the whole log read", off, err, end, want)
		}
		// The other batches' frames all read, in order; the damaged
		// batch's are there or a damage frame stands in for them.
		var intact, damaged int
		for _, f := range frames {
			if isDamageFrame(f) {
				damaged++
				if desc, _ := parseDamageFrame(f); !strings.Contains(desc, "log damaged at byte ") {
					t.Fatalf("damage at %d: damage frame says %q", off, desc)
				}
			} else {
				intact++
			}
		}
		want := 5 - len(testBatches()[batch])
		if damaged == 0 || intact < want || intact > 5 {
			t.Fatalf("damage at %d (batch %d at %d): %d frames read, %d damage frames; want %d to 5 and one or more", off, batch, starts[batch], intact, damaged, want)
		}
	}
}

// TestScanSalvagesADamagedFrame: one damaged byte in one frame of a batch
// costs that frame: the frames beside it and the batches after it read.
func TestScanSalvagesADamagedFrame(t *testing.T) {
	blob := putFrame(frameBlob, bytes.Repeat([]byte("b"), 64))
	rec := putFrame(frameRecord, []byte("record"))
	log := append(encodeBatch([][]byte{blob, rec}), encodeBatch([][]byte{rec})...)
	i := bytes.Index(log, blob) + 40
	log[i] ^= 1
	frames, end, err := scan(log, 0)
	if !errors.Is(err, ErrCorrupt) || end != int64(len(log)) || len(frames) != 3 {
		t.Fatalf("%d frames, end %d of %d, %v", len(frames), end, len(log), err)
	}
	desc, raw := parseDamageFrame(frames[0])
	if !isDamageFrame(frames[0]) || !strings.Contains(desc, "log damaged at byte "+strconv.Itoa(i-40-1)) || len(raw) != len(blob) {
		t.Errorf("frame 0: %q (%d bytes of the damaged frame), want the damage at the frame's byte", desc, len(raw))
	}
	if !bytes.Equal(frames[1], rec) || !bytes.Equal(frames[2], rec) {
		t.Errorf("the intact frames did not read")
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
			if !isDamageFrame(fr) {
				n += len(fr)
			}
		}
		if n > int(end) {
			t.Fatalf("%d frame bytes in %d committed bytes", n, end)
		}
		// A batch appended after the end reads back after what was read,
		// damage or not (but a damaged frame of the old layout, which does
		// not say where it ends, may run into it).
		if err != nil && bytes.IndexByte(data, oldMagic) >= 0 {
			return
		}
		next := putFrame(frameRecord, []byte("next"))
		more := append(bytes.Clone(data[:end]), encodeBatch([][]byte{next})...)
		again, _, err2 := scan(more, 0)
		if (err == nil) != (err2 == nil) || len(again) != len(frames)+1 || !bytes.Equal(again[len(again)-1], next) {
			t.Fatalf("a batch after the committed end: %d frames (was %d), %v (was %v)", len(again), len(frames), err2, err)
		}
	})
}
