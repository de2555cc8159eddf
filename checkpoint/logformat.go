package checkpoint

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"sync"
	"time"
)

// A session's log is a sequence of frames: blob frames hold elements,
// record frames hold checkpoints. A save appends the blobs it introduces
// and then its record, as one batch. Frames check themselves (CRC-32C), so
// a backend can store them as they are:
//
//	blob:   'B' crc32c(rest) addr[32] kind codec data
//	record: 'R' crc32c(rest) len(meta) meta-JSON len(info) info flags
//	        per list: n sets (index addr[32])×sets adds addr[32]×adds;
//	        head addr; transcript?; state?
//
// A record's meta (IDs, sequence, status, times, hash, codec) stays
// readable without the key, like the header of the old checkpoint files;
// its info (task and step counts, for List) and every blob's data are
// sealed with AES-GCM when the store has a key, and addresses are then
// keyed hashes, so equal content cannot be recognised by its address.
// A record says, for each element list, its new length, which of its
// parent's entries it replaces and which it appends, so a save that
// appends two messages or changes one step's status writes two addresses
// or one, whatever the transcript's length. Records follow
// each other in the log in chain order (a save appends only over the
// latest), so a reader rebuilds every checkpoint by replaying the log.

// Addr is an element's address: the sha256 of its kind and encoding, or
// with a key, their HMAC-SHA256 under a key derived from it.
type Addr [32]byte

const (
	frameBlob   byte = 'B'
	frameRecord byte = 'R'
	// frameDamage is never stored: a backend that finds damage in its log
	// returns one in place of what it could not read (damageFrame).
	frameDamage byte = 'D'
	codecByte   byte = 0
	sealedByte  byte = 1
	recordFull  byte = 1
)

// castagnoli is made on first use, not at start-up.
var castagnoli = sync.OnceValue(func() *crc32.Table { return crc32.MakeTable(crc32.Castagnoli) })

// recordMeta is the readable part of a record.
type recordMeta struct {
	ID        string    `json:"id"`
	ParentID  string    `json:"parent_id,omitempty"`
	Seq       int64     `json:"seq"`
	Session   string    `json:"session"`
	Status    Status    `json:"status"`
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
	Hash      string    `json:"sha256"`
	Codec     string    `json:"codec"`
	KeyID     string    `json:"key_id,omitempty"`
}

// recordInfo is the sealed part of a record: what List shows.
type recordInfo struct {
	Task           string `json:"task,omitempty"`
	Steps          int    `json:"steps"`
	CompletedSteps int    `json:"completed_steps"`
}

// listDelta says how one list differs from the parent's: its new length
// n (shorter lists are cut), the entries it replaces (ascending
// positions) and those it appends.
type listDelta struct {
	n    int
	sets []setOp
	add  []Addr
}

type setOp struct {
	i int
	a Addr
}

// logDelta says how a checkpoint's element lists differ from its parent's.
type logDelta struct {
	lists [numLists]listDelta
	head  Addr
	tr    *Addr // nil: no transcript
	st    *Addr // nil: no State
}

// logRecord is one decoded record frame.
type logRecord struct {
	meta  recordMeta
	info  []byte // as stored: sealed with a key
	full  bool
	delta logDelta
	size  int // bytes of the frame
}

func putFrame(kind byte, body []byte) []byte {
	f := make([]byte, 5, 5+len(body))
	f[0] = kind
	f = append(f, body...)
	binary.LittleEndian.PutUint32(f[1:5], crc32.Checksum(f[5:], castagnoli()))
	return f
}

// checkFrame verifies a frame's checksum and returns its kind and body.
func checkFrame(f []byte) (byte, []byte, error) {
	if len(f) < 5 {
		return 0, nil, fmt.Errorf("%w: frame of %d bytes", ErrCorrupt, len(f))
	}
	if crc32.Checksum(f[5:], castagnoli()) != binary.LittleEndian.Uint32(f[1:5]) {
		return 0, nil, fmt.Errorf("%w: frame checksum does not match", ErrCorrupt)
	}
	if f[0] == frameDamage {
		desc, _ := parseDamageFrame(f)
		return 0, nil, fmt.Errorf("%w: %s", ErrCorrupt, desc)
	}
	if f[0] != frameBlob && f[0] != frameRecord {
		return 0, nil, fmt.Errorf("%w: unknown frame kind %q", ErrCorrupt, f[0])
	}
	return f[0], f[5:], nil
}

// damageFrame returns the frame a backend returns in place of damage it
// found in a session's log: desc says where and what; raw, when not nil,
// is the damaged frame as stored, from which the store tells which
// element it held.
func damageFrame(desc string, raw []byte) []byte {
	body := binary.AppendUvarint(nil, uint64(len(desc)))
	body = append(append(body, desc...), raw...)
	return putFrame(frameDamage, body)
}

// isDamageFrame reports whether f is a damage frame a backend made (not a
// damaged frame of another kind).
func isDamageFrame(f []byte) bool {
	return len(f) >= 5 && f[0] == frameDamage && crc32.Checksum(f[5:], castagnoli()) == binary.LittleEndian.Uint32(f[1:5])
}

// parseDamageFrame returns what a damage frame says and the damaged frame
// it holds, if any.
func parseDamageFrame(f []byte) (desc string, raw []byte) {
	body := f[5:]
	n, k := binary.Uvarint(body)
	if k <= 0 || n > uint64(len(body)-k) {
		return "log damaged", nil
	}
	return string(body[k : k+int(n)]), body[k+int(n):]
}

// blobFrame returns the frame of an element whose stored data (sealed or
// plain) is data.
func blobFrame(a Addr, kind, codec byte, data []byte) []byte {
	body := make([]byte, 0, 34+len(data))
	body = append(append(append(body, a[:]...), kind, codec), data...)
	return putFrame(frameBlob, body)
}

// blobLoc is where a session's log holds an element: at is the byte
// offset of its stored data in the log, or -1 when the store holds the
// data in memory; n its length.
type blobLoc struct {
	at          int64
	n           uint32
	kind, codec byte
}

// blobDataOffset is where a blob frame's data starts: after the kind, the
// checksum, the address, the element's kind and codec.
const blobDataOffset = 5 + 32 + 2

type storedBlob struct {
	kind, codec byte
	data        []byte
}

func parseBlob(body []byte) (Addr, storedBlob, error) {
	var a Addr
	if len(body) < 34 {
		return a, storedBlob{}, fmt.Errorf("%w: blob frame of %d bytes", ErrCorrupt, len(body))
	}
	copy(a[:], body)
	return a, storedBlob{kind: body[32], codec: body[33], data: body[34:]}, nil
}

func (r *logRecord) encode() []byte {
	meta, _ := json.Marshal(r.meta) // strings, numbers and times: cannot fail
	n := 5 + 3*binary.MaxVarintLen64 + len(meta) + len(r.info) + 3*33
	for l := range numLists {
		d := &r.delta.lists[l]
		n += 3*binary.MaxVarintLen64 + len(d.sets)*(binary.MaxVarintLen64+32) + len(d.add)*32
	}
	b := make([]byte, 5, n)
	b = binary.AppendUvarint(b, uint64(len(meta)))
	b = append(b, meta...)
	b = binary.AppendUvarint(b, uint64(len(r.info)))
	b = append(b, r.info...)
	var flags byte
	if r.full {
		flags = recordFull
	}
	b = append(b, flags)
	for l := range numLists {
		d := &r.delta.lists[l]
		b = binary.AppendUvarint(b, uint64(d.n))
		b = binary.AppendUvarint(b, uint64(len(d.sets)))
		for _, op := range d.sets {
			b = binary.AppendUvarint(b, uint64(op.i))
			b = append(b, op.a[:]...)
		}
		b = binary.AppendUvarint(b, uint64(len(d.add)))
		for _, a := range d.add {
			b = append(b, a[:]...)
		}
	}
	b = append(b, r.delta.head[:]...)
	for _, p := range []*Addr{r.delta.tr, r.delta.st} {
		if p == nil {
			b = append(b, 0)
		} else {
			b = append(append(b, 1), p[:]...)
		}
	}
	b[0] = frameRecord
	binary.LittleEndian.PutUint32(b[1:5], crc32.Checksum(b[5:], castagnoli()))
	return b
}

var errShort = errors.New("record ends early")

func parseRecord(body []byte) (*logRecord, error) {
	r := &logRecord{}
	p := body
	next := func(n int) ([]byte, error) {
		if n < 0 || n > len(p) {
			return nil, errShort
		}
		v := p[:n]
		p = p[n:]
		return v, nil
	}
	uv := func() (int, error) {
		v, n := binary.Uvarint(p)
		if n <= 0 || v > 1<<40 {
			return 0, errShort
		}
		p = p[n:]
		return int(v), nil
	}
	fail := func(err error) (*logRecord, error) {
		return nil, fmt.Errorf("%w: record: %v", ErrCorrupt, err)
	}
	n, err := uv()
	if err != nil {
		return fail(err)
	}
	meta, err := next(n)
	if err != nil {
		return fail(err)
	}
	if err := json.Unmarshal(meta, &r.meta); err != nil {
		return fail(err)
	}
	if n, err = uv(); err != nil {
		return fail(err)
	}
	if r.info, err = next(n); err != nil {
		return fail(err)
	}
	flags, err := next(1)
	if err != nil {
		return fail(err)
	}
	r.full = flags[0]&recordFull != 0
	for l := range numLists {
		d := &r.delta.lists[l]
		if d.n, err = uv(); err != nil {
			return fail(err)
		}
		sets, err := uv()
		if err != nil || sets > len(p)/33 {
			return fail(errShort)
		}
		prev := -1
		for range sets {
			i, err := uv()
			if err != nil {
				return fail(err)
			}
			a, err := next(32)
			if err != nil {
				return fail(err)
			}
			if i <= prev || i >= d.n {
				return fail(fmt.Errorf("list %d: replaced entry %d out of order or range", l, i))
			}
			prev = i
			d.sets = append(d.sets, setOp{i: i, a: Addr(a)})
		}
		add, err := uv()
		if err != nil || add > d.n {
			return fail(errShort)
		}
		raw, err := next(32 * add)
		if err != nil {
			return fail(err)
		}
		d.add = make([]Addr, add)
		for i := range add {
			copy(d.add[i][:], raw[32*i:])
		}
	}
	h, err := next(32)
	if err != nil {
		return fail(err)
	}
	copy(r.delta.head[:], h)
	for _, pp := range []**Addr{&r.delta.tr, &r.delta.st} {
		f, err := next(1)
		if err != nil {
			return fail(err)
		}
		if f[0] == 1 {
			a, err := next(32)
			if err != nil {
				return fail(err)
			}
			var x Addr
			copy(x[:], a)
			*pp = &x
		}
	}
	if len(p) != 0 {
		return fail(fmt.Errorf("%d bytes after the end", len(p)))
	}
	if !ValidSessionID(r.meta.ID) || !ValidSessionID(r.meta.Session) {
		return fail(fmt.Errorf("names %s/%s", r.meta.Session, r.meta.ID))
	}
	return r, nil
}

// address returns the address of an element of kind with encoding b.
func (c codec) address(kind byte, b []byte) Addr {
	var a Addr
	if c.addrKey != nil {
		m := hmac.New(sha256.New, c.addrKey)
		m.Write([]byte{kind})
		m.Write(b)
		m.Sum(a[:0])
		return a
	}
	h := sha256.New()
	h.Write([]byte{kind})
	h.Write(b)
	h.Sum(a[:0])
	return a
}

// sealBlob returns the stored form of an element: its encoding, or with
// a key, a nonce and the encoding sealed to its session and address.
func (c codec) sealBlob(session string, a Addr, b []byte) (byte, []byte) {
	if c.aead == nil {
		return codecByte, append([]byte(nil), b...)
	}
	return sealedByte, c.sealBytes(blobAAD(session, a), b)
}

func (c codec) sealBytes(aad, b []byte) []byte {
	nonce := make([]byte, c.aead.NonceSize(), c.aead.NonceSize()+len(b)+c.aead.Overhead())
	rand.Read(nonce)
	return c.aead.Seal(nonce, nonce, b, aad)
}

func (c codec) openBytes(aad, sealed []byte, keyID string) ([]byte, error) {
	if c.aead == nil {
		return nil, fmt.Errorf("%w (key %s)", ErrKeyRequired, keyID)
	}
	if keyID != "" && keyID != c.keyID {
		return nil, fmt.Errorf("%w: sealed with key %s, this store has key %s", ErrWrongKey, keyID, c.keyID)
	}
	ns := c.aead.NonceSize()
	if len(sealed) < ns {
		return nil, fmt.Errorf("%w: sealed data shorter than its nonce", ErrCorrupt)
	}
	plain, err := c.aead.Open(nil, sealed[:ns], sealed[ns:], aad)
	if err != nil {
		return nil, fmt.Errorf("%w: does not authenticate (or another key with the same ID): %v", ErrCorrupt, err)
	}
	return plain, nil
}

func blobAAD(session string, a Addr) []byte {
	return append([]byte("blob\x00"+session+"\x00"), a[:]...)
}

func infoAAD(session, id string) []byte { return []byte("info\x00" + session + "\x00" + id) }

// openBlob returns an element's encoding, checked against its address:
// a plain element is addressed by sha256, a sealed one by the keyed hash.
func (c codec) openBlob(session string, a Addr, b storedBlob, keyID string) ([]byte, error) {
	var got Addr
	switch b.codec {
	case codecByte:
		h := sha256.New()
		h.Write([]byte{b.kind})
		h.Write(b.data)
		h.Sum(got[:0])
		if got != a {
			return nil, fmt.Errorf("%w: element %x does not match its address", ErrCorrupt, a[:6])
		}
		return b.data, nil
	case sealedByte:
		plain, err := c.openBytes(blobAAD(session, a), b.data, keyID)
		if err != nil {
			return nil, err
		}
		if c.address(b.kind, plain) != a {
			return nil, fmt.Errorf("%w: element %x does not match its address", ErrCorrupt, a[:6])
		}
		return plain, nil
	}
	return nil, fmt.Errorf("%w: element %x has unknown codec %d", ErrCorrupt, a[:6], b.codec)
}

// logIndex is one checkpoint's element lists, with the digest of each
// chunk of chunkLen entries, so a save that changes or appends a few
// entries rehashes their chunks and the chunks' digests, not the list.
type logIndex struct {
	lists  [numLists][]Addr
	chunks [numLists][][32]byte
	head   Addr
	tr, st *Addr
}

const chunkLen = 64

// addrs lists the addresses of every element of the checkpoint x indexes.
func (x *logIndex) addrs() []Addr {
	n := 1
	for l := range numLists {
		n += len(x.lists[l])
	}
	out := make([]Addr, 0, n+2)
	out = append(out, x.head)
	for _, p := range []*Addr{x.tr, x.st} {
		if p != nil {
			out = append(out, *p)
		}
	}
	for l := range numLists {
		out = append(out, x.lists[l]...)
	}
	return out
}

func (x *logIndex) clone() *logIndex {
	y := &logIndex{head: x.head, tr: x.tr, st: x.st}
	for l := range numLists {
		y.lists[l] = append([]Addr(nil), x.lists[l]...)
		y.chunks[l] = append([][32]byte(nil), x.chunks[l]...)
	}
	return y
}

// chunkSum is the digest of one chunk of a list.
func chunkSum(addrs []Addr) [32]byte {
	h := sha256.New()
	for i := range addrs {
		h.Write(addrs[i][:])
	}
	var out [32]byte
	h.Sum(out[:0])
	return out
}

// touched returns the chunks of the list d makes of base whose digests
// change, ascending: those holding a replaced entry, and from the chunk
// where base and the new list part ways in length on.
func touched(d *listDelta, baseLen int) []int {
	var out []int
	m := min(d.n, baseLen)
	tail := -1
	if d.n != baseLen {
		tail = m / chunkLen
		if m%chunkLen == 0 && d.n < baseLen && m > 0 {
			tail = (m - 1) / chunkLen // the cut ends a chunk: it changes
		}
	}
	for _, op := range d.sets {
		c := op.i / chunkLen
		if tail >= 0 && c >= tail {
			break
		}
		if len(out) == 0 || out[len(out)-1] != c {
			out = append(out, c)
		}
	}
	if tail >= 0 {
		for c := tail; c*chunkLen < d.n; c++ {
			out = append(out, c)
		}
	}
	return out
}

// apply turns x (the parent's index) into the child's, in place.
func (x *logIndex) apply(d *logDelta) error {
	for l := range numLists {
		ld := &d.lists[l]
		baseLen := len(x.lists[l])
		m := min(ld.n, baseLen)
		if m+len(ld.add) != ld.n {
			return fmt.Errorf("%w: record makes a list of %d from %d entries and %d more", ErrCorrupt, ld.n, m, len(ld.add))
		}
		if len(ld.sets) > 0 && ld.sets[len(ld.sets)-1].i >= m {
			return fmt.Errorf("%w: record replaces entry %d of a list of %d", ErrCorrupt, ld.sets[len(ld.sets)-1].i, m)
		}
		list := x.lists[l][:m]
		for _, op := range ld.sets {
			list[op.i] = op.a
		}
		list = append(list, ld.add...)
		x.lists[l] = list
		chunks := x.chunks[l][:min(len(x.chunks[l]), (ld.n+chunkLen-1)/chunkLen)]
		for _, c := range touched(ld, baseLen) {
			sum := chunkSum(list[c*chunkLen : min(ld.n, (c+1)*chunkLen)])
			if c < len(chunks) {
				chunks[c] = sum
			} else {
				chunks = append(chunks, sum)
			}
		}
		x.chunks[l] = chunks
	}
	x.head, x.tr, x.st = d.head, d.tr, d.st
	return nil
}

// hash returns the checkpoint hash of a record over index x: a sha256 of
// its identity and of every element's address (through the chunks'
// digests: a two-level Merkle tree), so it proves the whole content like a
// hash of a full snapshot, yet costs about the same for a long transcript
// as for a short one.
func (x *logIndex) hash(m *recordMeta) string {
	var n [numLists]int
	for l := range numLists {
		n[l] = len(x.lists[l])
	}
	return hashOf(m, x.head, x.tr, x.st, n, x.chunks)
}

func hashOf(m *recordMeta, head Addr, tr, st *Addr, n [numLists]int, chunks [numLists][][32]byte) string {
	h := sha256.New()
	str := func(s string) {
		var b [8]byte
		binary.LittleEndian.PutUint64(b[:], uint64(len(s)))
		h.Write(b[:])
		h.Write([]byte(s))
	}
	str("compact-checkpoint-2")
	str(m.ID)
	str(m.ParentID)
	str(fmt.Sprint(m.Seq))
	str(m.Session)
	str(string(m.Status))
	str(m.CreatedAt.UTC().Format(time.RFC3339Nano))
	str(m.UpdatedAt.UTC().Format(time.RFC3339Nano))
	h.Write(head[:])
	for _, p := range []*Addr{tr, st} {
		if p == nil {
			h.Write([]byte{0})
		} else {
			h.Write([]byte{1})
			h.Write(p[:])
		}
	}
	for l := range numLists {
		var b [8]byte
		binary.LittleEndian.PutUint64(b[:], uint64(n[l]))
		h.Write(b[:])
		for i := range chunks[l] {
			h.Write(chunks[l][i][:])
		}
	}
	return hex.EncodeToString(h.Sum(nil))
}

// RecordID returns the ID of the checkpoint a log frame records, and false
// for a frame that is not an intact record. It is for the tests of
// LogBackends, which find a checkpoint's frames with it.
func RecordID(frame []byte) (string, bool) {
	kind, body, err := checkFrame(frame)
	if err != nil || kind != frameRecord {
		return "", false
	}
	r, err := parseRecord(body)
	if err != nil {
		return "", false
	}
	return r.meta.ID, true
}
