package checkpoint

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
)

// A FileStore log is a sequence of batches, one per append, each a header
// that checks itself followed by the batch's frames:
//
//	0xC8 'L' | n (uint32) | crc32c(payload) (uint32) | crc32c(the 10 bytes before) (uint32)
//	payload (n bytes): per frame, uvarint(len) frame
//
// (integers little-endian). Because the header checks itself, a damaged
// length is never taken for a true one, and the only tail read as an
// append a crashed writer left unfinished (a torn tail, never committed,
// cut off by the next append) is what a cut-short write leaves: a prefix
// of a header, or a whole header whose batch runs past the end of the
// file. Anything else that does not check, anywhere, is damage: its
// frames that check are read all the same, and so is the log after it
// (see scan); the rest is reported naming its byte offset, and never cut
// off by a save: checkpoint recover rewrites the log without it.
//
// Logs written before batch headers are a sequence of frames, each
// [0xC7, flags, len (uint32)] and the frame, flags bit 0 ending a batch;
// they still read, and their next append is a batch as above. A frame of
// that layout proves nothing about its length, so one that runs past the
// end of the file is damage too.
const (
	batchMagic0  = 0xC8
	batchMagic1  = 'L'
	batchHeader  = 14
	oldMagic     = 0xC7
	oldHeader    = 6
	oldFlagLast  = 1
	maxBatchSize = 1<<32 - 1 // payload bytes a header can say
)

// errBatchTooLarge is a save too large for one batch.
var errBatchTooLarge = fmt.Errorf("%w: a save of 4 GiB or more", ErrInvalid)

// encodeBatches returns the bytes of frames as batches of at most limit
// payload bytes each (one batch per frame larger than that), in order:
// a rewritten log.
func encodeBatches(frames [][]byte, limit int) []byte {
	var out []byte
	for start, size, i := 0, 0, 0; i <= len(frames); i++ {
		if i == len(frames) || (size > 0 && size+len(frames[i])+binary.MaxVarintLen32 > limit) {
			if i > start {
				out = append(out, encodeBatch(frames[start:i])...)
			}
			start, size = i, 0
		}
		if i < len(frames) {
			size += len(frames[i]) + binary.MaxVarintLen32
		}
	}
	return out
}

// encodeBatch returns the bytes that append frames as one batch.
func encodeBatch(frames [][]byte) []byte {
	n := 0
	for _, f := range frames {
		n += binary.MaxVarintLen32 + len(f)
	}
	buf := make([]byte, batchHeader, batchHeader+n)
	for _, f := range frames {
		buf = binary.AppendUvarint(buf, uint64(len(f)))
		buf = append(buf, f...)
	}
	buf[0], buf[1] = batchMagic0, batchMagic1
	binary.LittleEndian.PutUint32(buf[2:], uint32(len(buf)-batchHeader))
	binary.LittleEndian.PutUint32(buf[6:], crc32.Checksum(buf[batchHeader:], castagnoli()))
	binary.LittleEndian.PutUint32(buf[10:], crc32.Checksum(buf[:10], castagnoli()))
	return buf
}

// errTorn marks the unfinished batch a crashed append left at the end of
// the log.
var errTorn = errors.New("torn batch")

// scan splits data (the log from byte offset off on) into the frames of
// its committed batches and returns the offset after the last of them. A
// torn tail (see above) ends the scan without an error. Damage does not
// end it: a batch that does not check is read frame by frame (each frame
// checks itself), its length taken from its header when that checks, else
// from where the next batch that checks starts, and the scan goes on
// after it; what cannot be read is a damage frame (damageFrame) in its
// place, naming its byte offset, so that one damaged byte costs the frame
// that holds it, not the log after it. err is then an ErrCorrupt naming
// the first damage.
func scan(data []byte, off int64) (frames [][]byte, end int64, err error) {
	end = off
	for p := 0; p < len(data); {
		var fs [][]byte
		var n int
		var berr error
		switch data[p] {
		case batchMagic0:
			fs, n, berr = scanBatch(data[p:])
		case oldMagic:
			fs, n, berr = scanOldBatch(data[p:])
		default:
			berr = fmt.Errorf("no batch starts there (byte %#02x)", data[p])
		}
		if errors.Is(berr, errTorn) {
			return frames, end, err
		}
		if berr != nil {
			at := off + int64(p)
			if err == nil {
				err = fmt.Errorf("%w: log damaged at byte %d: %v", ErrCorrupt, at, berr)
			}
			fs, n = salvage(data[p:], at, berr)
		}
		frames = append(frames, fs...)
		p += n
		end = off + int64(p)
	}
	return frames, end, err
}

// salvage reads what it can of a batch that does not check, at byte at of
// the log (b starts with it), and returns its frames, damage frames where
// they cannot be read, and the batch's length.
func salvage(b []byte, at int64, why error) ([][]byte, int) {
	n := len(b) // without a batch that checks after it: the rest of the log
	for q := 1; q < len(b); q++ {
		if b[q] == batchMagic0 && headerChecks(b[q:]) {
			n = q
			break
		}
	}
	if len(b) >= batchHeader && b[0] == batchMagic0 && headerChecks(b) {
		if m := batchHeader + int(binary.LittleEndian.Uint32(b[2:])); m <= len(b) {
			n = m // only the payload is damaged: its length holds
		}
	}
	if b[0] == oldMagic {
		// Frames of the old layout do not say where the next one starts.
		return [][]byte{damageFrame(fmt.Sprintf("log damaged at byte %d: %v; bytes %d to %d of the log cannot be read", at, why, at, at+int64(n)), nil)}, n
	}
	var out [][]byte
	lost := 0
	for q := batchHeader; q < n; {
		fl, k := binary.Uvarint(b[q:n])
		if k <= 0 || fl > uint64(n-q-k) || fl < 5 {
			out = append(out, damageFrame(fmt.Sprintf("log damaged at byte %d: bytes %d to %d of the log cannot be read (%v)", at+int64(q), at+int64(q), at+int64(n), why), nil))
			lost++
			break
		}
		f := b[q+k : q+k+int(fl) : q+k+int(fl)]
		if _, _, err := checkFrame(f); err != nil {
			out = append(out, damageFrame(fmt.Sprintf("log damaged at byte %d: %s", at+int64(q), damageText(err)), f))
			lost++
		} else {
			out = append(out, f)
		}
		q += k + int(fl)
	}
	if lost == 0 {
		// The frames check; the damage is in what frames them.
		out = append([][]byte{damageFrame(fmt.Sprintf("log damaged at byte %d: %v (its frames check)", at, why), nil)}, out...)
	}
	return out, n
}

// headerChecks reports whether b starts with a batch header that checks.
func headerChecks(b []byte) bool {
	return len(b) >= batchHeader && b[1] == batchMagic1 &&
		crc32.Checksum(b[:10], castagnoli()) == binary.LittleEndian.Uint32(b[10:])
}

// scanBatch reads the batch at the start of b and returns its frames and
// length: errTorn when b is what a cut-short append of it leaves.
func scanBatch(b []byte) ([][]byte, int, error) {
	if len(b) < batchHeader {
		if len(b) >= 2 && b[1] != batchMagic1 {
			return nil, 0, fmt.Errorf("no batch starts there")
		}
		return nil, 0, errTorn // a header cut short
	}
	if b[1] != batchMagic1 {
		return nil, 0, fmt.Errorf("no batch starts there")
	}
	if crc32.Checksum(b[:10], castagnoli()) != binary.LittleEndian.Uint32(b[10:]) {
		return nil, 0, fmt.Errorf("batch header does not check")
	}
	n := int64(binary.LittleEndian.Uint32(b[2:]))
	if n > int64(len(b)-batchHeader) {
		return nil, 0, errTorn // a whole header, its batch cut short
	}
	payload := b[batchHeader : batchHeader+n : batchHeader+n]
	if crc32.Checksum(payload, castagnoli()) != binary.LittleEndian.Uint32(b[6:]) {
		return nil, 0, fmt.Errorf("batch of %d bytes does not check", n)
	}
	var frames [][]byte
	for q := 0; q < len(payload); {
		fl, k := binary.Uvarint(payload[q:])
		if k <= 0 || fl > uint64(len(payload)-q-k) {
			return nil, 0, fmt.Errorf("frame at byte %d of the batch overruns it", q)
		}
		q += k
		frames = append(frames, payload[q:q+int(fl):q+int(fl)])
		q += int(fl)
	}
	return frames, batchHeader + int(n), nil
}

// scanOldBatch reads a batch of the layout before batch headers.
func scanOldBatch(b []byte) ([][]byte, int, error) {
	var frames [][]byte
	for p := 0; ; {
		if len(b)-p < oldHeader {
			return nil, 0, fmt.Errorf("frame header at byte %d of the batch runs past the end of the log", p)
		}
		if b[p] != oldMagic || b[p+1]&^oldFlagLast != 0 {
			return nil, 0, fmt.Errorf("no frame starts at byte %d of the batch", p)
		}
		n := int(binary.LittleEndian.Uint32(b[p+2:]))
		if n > len(b)-p-oldHeader {
			return nil, 0, fmt.Errorf("frame at byte %d of the batch runs past the end of the log", p)
		}
		frames = append(frames, b[p+oldHeader:p+oldHeader+n:p+oldHeader+n])
		last := b[p+1]&oldFlagLast != 0
		p += oldHeader + n
		if last {
			return frames, p, nil
		}
	}
}
