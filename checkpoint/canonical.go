package checkpoint

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"math/big"
	"os"
	"sort"
	"strconv"
)

// CanonicalJSON returns v re-encoded so that equal values give equal bytes:
// object keys sorted, no insignificant whitespace, no HTML escaping, numbers
// in one spelling (1, 1.0 and 1e0 are all 1). Invalid JSON is an error.
// Empty input is taken as null.
func CanonicalJSON(v json.RawMessage) ([]byte, error) {
	if len(bytes.TrimSpace(v)) == 0 {
		return []byte("null"), nil
	}
	dec := json.NewDecoder(bytes.NewReader(v))
	dec.UseNumber()
	var x any
	if err := dec.Decode(&x); err != nil {
		return nil, fmt.Errorf("canonical JSON: %w", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("canonical JSON: data after the value")
	}
	var b bytes.Buffer
	if err := writeCanonical(&b, x); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

func writeCanonical(b *bytes.Buffer, x any) error {
	switch v := x.(type) {
	case map[string]any:
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		b.WriteByte('{')
		for i, k := range keys {
			if i > 0 {
				b.WriteByte(',')
			}
			writeString(b, k)
			b.WriteByte(':')
			if err := writeCanonical(b, v[k]); err != nil {
				return err
			}
		}
		b.WriteByte('}')
	case []any:
		b.WriteByte('[')
		for i, e := range v {
			if i > 0 {
				b.WriteByte(',')
			}
			if err := writeCanonical(b, e); err != nil {
				return err
			}
		}
		b.WriteByte(']')
	case string:
		writeString(b, v)
	case json.Number:
		b.WriteString(canonicalNumber(v))
	case bool:
		b.WriteString(strconv.FormatBool(v))
	case nil:
		b.WriteString("null")
	default:
		return fmt.Errorf("canonical JSON: unexpected %T", x)
	}
	return nil
}

func writeString(b *bytes.Buffer, s string) {
	enc := json.NewEncoder(b)
	enc.SetEscapeHTML(false)
	enc.Encode(s) // a string always encodes
	b.Truncate(b.Len() - 1)
}

// canonicalNumber spells integers exactly, however large, and other numbers
// in the shortest form that reads back as the same float64.
func canonicalNumber(n json.Number) string {
	r, ok := new(big.Rat).SetString(string(n))
	if !ok {
		return string(n)
	}
	if r.IsInt() {
		return r.Num().String()
	}
	f, _ := r.Float64()
	return strconv.FormatFloat(f, 'g', -1, 64)
}

// ParamsHash returns the sha256, in hex, of the canonical JSON of params.
func ParamsHash(params json.RawMessage) (string, error) {
	c, err := CanonicalJSON(params)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(c)
	return hex.EncodeToString(sum[:]), nil
}

// Key returns the idempotency key of a call of tool with args: the tool name
// and a hash of the canonical JSON of args, so the same call spelled
// differently gets the same key. Each path in files is read and its content
// hashed into the key, so a call whose input file changed gets a new key and
// runs again.
func Key(tool string, args json.RawMessage, files ...string) (string, error) {
	c, err := CanonicalJSON(args)
	if err != nil {
		return "", fmt.Errorf("idempotency key of %s: %w", tool, err)
	}
	h := sha256.New()
	writeField(h, []byte(tool))
	writeField(h, c)
	for _, path := range files {
		sum, err := fileHash(path)
		if err != nil {
			return "", fmt.Errorf("idempotency key of %s: %w", tool, err)
		}
		writeField(h, []byte(path))
		writeField(h, sum)
	}
	return tool + ":" + hex.EncodeToString(h.Sum(nil)[:20]), nil
}

// writeField writes b with a length prefix, so no two field lists hash alike.
func writeField(w io.Writer, b []byte) {
	var n [8]byte
	for i := range n {
		n[i] = byte(uint64(len(b)) >> (8 * i))
	}
	w.Write(n[:])
	w.Write(b)
}

func fileHash(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	return h.Sum(nil), nil
}
