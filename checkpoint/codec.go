package checkpoint

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
)

// Stored form of a checkpoint file and of a HEAD file, as FileStores wrote
// them before logs (legacy.go reads them): one header line of JSON, then
// the payload.
//
//	{"format":"compact-checkpoint","version":1,"kind":"checkpoint","codec":"plain","sha256":"…","size":N,"meta":{…}}\n
//	<N bytes of payload>
//
// The header's sha256 covers the payload exactly as stored, so a truncated or
// damaged file is caught before anything is decoded. The payload is the
// checkpoint's body (its JSON, a newline, and the raw section holding the
// transcript's raw bytes: see verbatim.go), or for a head pointer a JSON
// summary. The codec tag says how the payload is stored: "plain", or
// "aes-gcm" (a 12-byte nonce, then the sealed body), so plain and encrypted files live side by side and a key
// can be introduced without rewriting old checkpoints. The meta (IDs, status,
// time, body hash) stays readable without the key so history and listing
// need no decryption; the task, steps, transcript and everything else are in
// the payload.
const (
	formatName         = "compact-checkpoint"
	formatVersion      = 1
	codecPlain         = "plain"
	codecAESGCM        = "aes-gcm"
	kindCheckpointFile = "checkpoint"
	kindHeadFile       = "head"
	maxHeader          = 64 << 10
)

type header struct {
	Format  string `json:"format"`
	Version int    `json:"version"`
	Kind    string `json:"kind"`
	Codec   string `json:"codec"`
	KeyID   string `json:"key_id,omitempty"`
	SHA256  string `json:"sha256"`
	Size    int    `json:"size"`
	Meta    Meta   `json:"meta"`
}

// codec seals and opens stored blobs. The zero value stores plain JSON.
type codec struct {
	aead  cipher.AEAD
	keyID string
	// addrKey keys element addresses when the store encrypts.
	addrKey []byte
}

func newCodec(key []byte) (codec, error) {
	if len(key) == 0 {
		return codec{}, nil
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return codec{}, fmt.Errorf("checkpoint key: %w (want 16, 24 or 32 bytes)", err)
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return codec{}, fmt.Errorf("checkpoint key: %w", err)
	}
	ak := sha256.Sum256(append([]byte("compact-checkpoint-address-key\x00"), key...))
	return codec{aead: aead, keyID: KeyID(key), addrKey: ak[:]}, nil
}

func (c codec) name() string {
	if c.aead != nil {
		return codecAESGCM
	}
	return codecPlain
}

// KeyID returns a short public fingerprint of an encryption key. It is
// written beside encrypted payloads so that a wrong key is reported as such.
func KeyID(key []byte) string {
	sum := sha256.Sum256(append([]byte("compact-checkpoint-key-id\x00"), key...))
	return hex.EncodeToString(sum[:8])
}

// aad binds a sealed payload to the checkpoint it belongs to, so an
// encrypted body moved to another file or session does not open.
func aad(kind string, m *Meta) []byte {
	return []byte(kind + "\x00" + m.Session + "\x00" + m.ID)
}

func (c codec) seal(kind string, m Meta, plain []byte) []byte {
	return c.sealSum(kind, m, plain, nil)
}

// sealSum is seal with the sha256 of plain already known (nil if not).
func (c codec) sealSum(kind string, m Meta, plain, plainSum []byte) []byte {
	h := header{Format: formatName, Version: formatVersion, Kind: kind, Codec: codecPlain, Meta: m}
	payload := plain
	if c.aead != nil {
		h.Codec, h.KeyID = codecAESGCM, c.keyID
		nonce := make([]byte, c.aead.NonceSize(), c.aead.NonceSize()+len(plain)+c.aead.Overhead())
		rand.Read(nonce) // never fails (crypto/rand panics instead)
		payload = c.aead.Seal(nonce, nonce, plain, aad(kind, &m))
	}
	if c.aead != nil || plainSum == nil {
		sum := sha256.Sum256(payload)
		plainSum = sum[:]
	}
	h.SHA256, h.Size = hex.EncodeToString(plainSum), len(payload)
	hb, _ := json.Marshal(h) // plain strings, numbers and times: cannot fail
	out := make([]byte, 0, len(hb)+1+len(payload))
	out = append(append(append(out, hb...), '\n'), payload...)
	return out
}

// readHeader parses the header line of a blob and returns it with the rest.
func readHeader(blob []byte) (header, []byte, error) {
	var h header
	n := bytes.IndexByte(blob[:min(len(blob), maxHeader)], '\n')
	if n < 0 {
		if len(blob) == 0 {
			return h, nil, fmt.Errorf("%w: empty", ErrCorrupt)
		}
		return h, nil, fmt.Errorf("%w: no header line in the first %d bytes", ErrCorrupt, min(len(blob), maxHeader))
	}
	if err := json.Unmarshal(blob[:n], &h); err != nil {
		return h, nil, fmt.Errorf("%w: header: %v", ErrCorrupt, err)
	}
	if h.Format != formatName {
		return h, nil, fmt.Errorf("%w: not a checkpoint (format %q)", ErrCorrupt, h.Format)
	}
	if h.Version > formatVersion {
		return h, nil, fmt.Errorf("%w: format version %d is newer than this build reads (%d)", ErrInvalid, h.Version, formatVersion)
	}
	h.Meta.Codec, h.Meta.Size = h.Codec, len(blob)
	return h, blob[n+1:], nil
}

// open verifies a blob and returns its header and plain payload.
func (c codec) open(blob []byte, kind string) (header, []byte, error) {
	h, payload, err := readHeader(blob)
	if err != nil {
		return h, nil, err
	}
	if h.Kind != kind {
		return h, nil, fmt.Errorf("%w: a %s where a %s was expected", ErrCorrupt, h.Kind, kind)
	}
	if len(payload) != h.Size {
		return h, nil, fmt.Errorf("%w: truncated or extended: payload is %d bytes, header says %d", ErrCorrupt, len(payload), h.Size)
	}
	sum := sha256.Sum256(payload)
	if hex.EncodeToString(sum[:]) != h.SHA256 {
		return h, nil, fmt.Errorf("%w: payload does not match its sha256", ErrCorrupt)
	}
	switch h.Codec {
	case codecPlain:
		return h, payload, nil
	case codecAESGCM:
		if c.aead == nil {
			return h, nil, fmt.Errorf("%w (key %s)", ErrKeyRequired, h.KeyID)
		}
		if h.KeyID != c.keyID {
			return h, nil, fmt.Errorf("%w: sealed with key %s, this store has key %s", ErrWrongKey, h.KeyID, c.keyID)
		}
		ns := c.aead.NonceSize()
		if len(payload) < ns {
			return h, nil, fmt.Errorf("%w: encrypted payload shorter than its nonce", ErrCorrupt)
		}
		plain, err := c.aead.Open(nil, payload[:ns], payload[ns:], aad(kind, &h.Meta))
		if err != nil {
			return h, nil, fmt.Errorf("%w: does not authenticate: %v", ErrCorrupt, err)
		}
		return h, plain, nil
	default:
		return h, nil, fmt.Errorf("%w: unknown codec %q", ErrCorrupt, h.Codec)
	}
}

// encode stores c: the body is c's JSON without Hash, and c.Hash is set to
// its sha256.
func (c codec) encode(cp *Checkpoint) ([]byte, error) {
	cp.Hash = ""
	body, err := marshalBody(cp)
	if err != nil {
		return nil, fmt.Errorf("%w: encode session %s: %w", ErrInvalid, cp.Session, err)
	}
	sum := sha256.Sum256(body)
	cp.Hash = hex.EncodeToString(sum[:])
	return c.sealSum(kindCheckpointFile, metaOf(cp), body, sum[:]), nil
}

func metaOf(cp *Checkpoint) Meta {
	return Meta{ID: cp.ID, ParentID: cp.ParentID, Seq: cp.Seq, Session: cp.Session,
		Status: cp.Status, UpdatedAt: cp.UpdatedAt, Hash: cp.Hash}
}

// decode opens a stored checkpoint and checks that its body is the one its
// header describes.
func (c codec) decode(blob []byte) (*Checkpoint, Meta, error) {
	h, body, err := c.open(blob, kindCheckpointFile)
	if err != nil {
		return nil, h.Meta, err
	}
	// For plain payloads the body is the payload open just hashed.
	if h.Codec != codecPlain || h.SHA256 != h.Meta.Hash {
		if sum := sha256.Sum256(body); hex.EncodeToString(sum[:]) != h.Meta.Hash {
			return nil, h.Meta, fmt.Errorf("%w: body does not match its sha256", ErrCorrupt)
		}
	}
	cp, err := unmarshalBody(body)
	if err != nil {
		return nil, h.Meta, fmt.Errorf("%w: body: %v", ErrCorrupt, err)
	}
	if cp.SchemaVersion > SchemaVersion {
		return nil, h.Meta, fmt.Errorf("%w: schema version %d is newer than this build reads (%d)", ErrInvalid, cp.SchemaVersion, SchemaVersion)
	}
	// The header's meta is outside the payload hash: hold it to the body.
	if cp.ID != h.Meta.ID || cp.Session != h.Meta.Session || cp.ParentID != h.Meta.ParentID ||
		cp.Seq != h.Meta.Seq || cp.Status != h.Meta.Status || !cp.UpdatedAt.Equal(h.Meta.UpdatedAt) {
		return nil, h.Meta, fmt.Errorf("%w: body is checkpoint %s/%s, header says %s/%s", ErrCorrupt, cp.Session, cp.ID, h.Meta.Session, h.Meta.ID)
	}
	cp.Hash = h.Meta.Hash
	return cp, h.Meta, nil
}
