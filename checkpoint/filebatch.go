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
// file. Anything else that does not check, anywhere, is damage
// (ErrCorrupt naming its byte offset), and nothing past it is read or
// ever cut off: checkpoint recover salvages the batches before it.
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
// torn tail (see above) ends the scan without an error; damage is an
// ErrCorrupt naming the offset where the batch it spoils starts, with the
// frames before it.
func scan(data []byte, off int64) (frames [][]byte, end int64, err error) {
	end = off
	for p := 0; p < len(data); {
		var fs [][]byte
		var n int
		switch data[p] {
		case batchMagic0:
			fs, n, err = scanBatch(data[p:])
		case oldMagic:
			fs, n, err = scanOldBatch(data[p:])
		default:
			err = fmt.Errorf("no batch starts there (byte %#02x)", data[p])
		}
		if errors.Is(err, errTorn) {
			return frames, end, nil
		}
		if err != nil {
			return frames, end, fmt.Errorf("%w: log damaged at byte %d: %v", ErrCorrupt, off+int64(p), err)
		}
		frames = append(frames, fs...)
		p += n
		end = off + int64(p)
	}
	return frames, end, nil
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
