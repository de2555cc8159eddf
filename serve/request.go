package serve

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/maphash"
	"strconv"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/format"
	"github.com/compactkit/compact/internal/jsonscan"
)

// shape is what the proxy sees of a request body without reading it: the
// spans of its top-level members, its model, and the elements of its
// conversation list.
type shape struct {
	api  *api
	body []byte
	// model is the request's "model", "" when it has none.
	model string
	// maxOutput is the answer's token limit the request sets (max_tokens,
	// max_completion_tokens, max_output_tokens), 0 when it sets none.
	maxOutput int
	// list is the span of the conversation list in body; hasList is false
	// when the request has none (a Responses request whose input is a
	// string), so there is nothing to compact.
	list    [2]int
	hasList bool
	elems   [][2]int
	// beside are the members beside the list that the prompt holds.
	beside []jsonscan.Member
	// idents are the elements' identities (see ident), 0 until taken.
	idents []uint64
	// keys are the elements' keys in the count cache for the model whose
	// salt is keySalt (see Server.elemKey).
	keys    []uint64
	keySalt uint64
	// byteBounds are the elements' bounds by their bytes at boundScale
	// (see Server.elemBound), 0 until taken.
	byteBounds []int
	boundScale float64
}

// view is a request body read for compaction: its shape, the transcript
// the format reader made of it, and which elements each message is.
type view struct {
	*shape
	t compact.Transcript
	// groups[i] are the elements of message i, [from, to); from is -1 for a
	// message that lives outside the list (Anthropic's system, Responses'
	// instructions). Elements that belong to no message (records a reader
	// keeps aside) are in the group of the message they precede.
	groups [][2]int
}

// errNoPlace is returned when a message cannot be placed among the list's
// elements, so the request cannot be rewritten element by element.
var errNoPlace = errors.New("messages do not match the list's elements")

// shapeOf finds the members and list elements of a request of a by their
// spans (package jsonscan), so that a new list can be spliced between the
// body's other bytes.
func shapeOf(a *api, body []byte) (*shape, error) {
	// One pass finds the members and the list's elements.
	members, elems, complete := jsonscan.MembersElements(body, a.list)
	if !complete {
		return shapeOfBroken(a, body)
	}
	sh := &shape{api: a, body: body}
	seen := 0
	for _, m := range members {
		switch m.Key {
		case "model":
			sh.model, _ = jsonscan.Unquote(jsonscan.Value(body, m.Value))
		case "max_tokens", "max_completion_tokens", "max_output_tokens":
			if n, err := strconv.Atoi(string(jsonscan.Value(body, m.Value))); err == nil {
				sh.maxOutput = max(sh.maxOutput, n)
			}
		case a.list:
			seen++
			if body[m.Value.Start] == '[' {
				sh.list, sh.hasList = [2]int{m.Value.Start, m.Value.End}, true
			}
		default:
			if a.beside(m.Key) {
				sh.beside = append(sh.beside, m)
			}
		}
	}
	if seen > 1 {
		// Which of two lists the upstream would read is its parser's choice.
		return nil, fmt.Errorf("the request has %d %q members", seen, a.list)
	}
	if sh.hasList {
		sh.elems = make([][2]int, len(elems))
		for i, e := range elems {
			sh.elems[i] = [2]int{e.Start, e.End}
		}
	}
	return sh, nil
}

// shapeOfBroken says what is wrong with a body that is not a complete JSON
// object with a complete list.
func shapeOfBroken(a *api, body []byte) (*shape, error) {
	members, complete := jsonscan.Members(body)
	if !complete {
		return nil, errors.New("the request is not a complete JSON object")
	}
	for _, m := range members {
		if m.Key == a.list && body[m.Value.Start] == '[' {
			if _, complete := jsonscan.Elements(body[m.Value.Start:m.Value.End]); !complete {
				return nil, fmt.Errorf("the %q list is not a complete JSON array", a.list)
			}
		}
	}
	return nil, errors.New("the request is not a complete JSON object")
}

// read reads the body with the API's format reader.
func (sh *shape) read() (*view, error) {
	t, err := format.Read(bytes.NewReader(sh.body), "request", sh.api.format)
	if err != nil {
		return nil, err
	}
	return &view{shape: sh, t: t}, nil
}

// readView shapes and reads body as a request of a.
func readView(a *api, body []byte) (*view, error) {
	sh, err := shapeOf(a, body)
	if err != nil {
		return nil, err
	}
	return sh.read()
}

// place fills groups: it walks the messages and the elements together, each
// message's source records matching the next elements byte for byte.
func (v *view) place() error {
	if v.groups != nil {
		return nil
	}
	if !v.hasList {
		return fmt.Errorf("%w: the request has no %q list", errNoPlace, v.api.list)
	}
	groups := make([][2]int, len(v.t.Messages))
	j := 0
	for i := range v.t.Messages {
		m := &v.t.Messages[i]
		recs := m.Source.Records
		if len(recs) == 0 {
			return fmt.Errorf("%w: message %d has no source record", errNoPlace, i)
		}
		k := j
		for k < len(v.elems) && !v.equal(k, recs[0]) {
			k++
		}
		if k == len(v.elems) {
			if j == 0 && (m.Role == compact.RoleSystem || m.Role == compact.RoleDeveloper) {
				groups[i] = [2]int{-1, -1} // read from a member beside the list
				continue
			}
			return fmt.Errorf("%w: message %d is not in the list", errNoPlace, i)
		}
		from := j // elements skipped on the way belong to this message
		j = k
		for _, r := range recs {
			if j >= len(v.elems) || !v.equal(j, r) {
				return fmt.Errorf("%w: message %d's records are not consecutive elements", errNoPlace, i)
			}
			j++
		}
		groups[i] = [2]int{from, j}
	}
	if j < len(v.elems) {
		last := -1
		for i := range groups {
			if groups[i][0] >= 0 {
				last = i
			}
		}
		if last < 0 {
			return fmt.Errorf("%w: elements that belong to no message", errNoPlace)
		}
		groups[last][1] = len(v.elems)
	}
	v.groups = groups
	return nil
}

func (sh *shape) elem(k int) []byte { return sh.body[sh.elems[k][0]:sh.elems[k][1]] }

// identSeed seeds element identities: random per process, so that no
// client can make two elements collide on purpose.
var identSeed = maphash.MakeSeed()

// ident is the identity of element k: a 64-bit hash of its bytes, never 0
// (0 marks an element a prefix keeps). It is taken for every element at
// once, in the one pass over the list's bytes that the count cache's keys
// and prefix matching share.
func (sh *shape) ident(k int) uint64 {
	if sh.idents == nil {
		sh.idents = make([]uint64, len(sh.elems))
		for i := range sh.elems {
			sh.idents[i] = maphash.Bytes(identSeed, sh.elem(i)) | 1
		}
	}
	return sh.idents[k]
}

// droppedIdent is the identity of element k as a prefix that drops it
// remembers it: of its bytes with the API's volatile members left out, as
// hashDropped hashes it.
func (sh *shape) droppedIdent(k int) uint64 {
	e := sh.elem(k)
	if len(sh.api.volatile) > 0 && containsAny(e, sh.api.volatile) {
		return maphash.Bytes(identSeed, writeWithout(nil, e, sh.api.volatile)) | 1
	}
	return sh.ident(k)
}

// droppedIdents returns, for each of the elements [0, n), its droppedIdent
// when items does not keep it and 0 when it does.
func (sh *shape) droppedIdents(n int, items []int) []uint64 {
	out := make([]uint64, n)
	for k := range out {
		out[k] = 1 // a placeholder, never an identity's value alone
	}
	for _, it := range items {
		if it >= 0 && it < n {
			out[it] = 0
		}
	}
	for k := range out {
		if out[k] != 0 {
			out[k] = sh.droppedIdent(k)
		}
	}
	return out
}

func (v *view) equal(k int, rec []byte) bool {
	return bytes.Equal(v.elem(k), bytes.TrimSpace(rec))
}

// hashDropped returns a hash of the elements [0, n) that items does not
// keep, with their positions, members the API calls volatile left out.
func (sh *shape) hashDropped(n int, items []int) string {
	keep := make([]bool, n)
	for _, it := range items {
		if it >= 0 && it < n {
			keep[it] = true
		}
	}
	h := sha256.New()
	var buf []byte
	var lenBuf [8]byte
	for k := 0; k < n; k++ {
		binary.LittleEndian.PutUint64(lenBuf[:], uint64(k))
		h.Write(lenBuf[:])
		if keep[k] {
			continue
		}
		e := sh.elem(k)
		if len(sh.api.volatile) > 0 && containsAny(e, sh.api.volatile) {
			buf = writeWithout(buf[:0], e, sh.api.volatile)
			e = buf
		}
		binary.LittleEndian.PutUint64(lenBuf[:], uint64(len(e)))
		h.Write(lenBuf[:])
		h.Write(e)
	}
	return hex.EncodeToString(h.Sum(nil))
}

func containsAny(b []byte, keys []string) bool {
	for _, k := range keys {
		if bytes.Contains(b, []byte(k)) {
			return true
		}
	}
	return false
}

// withList returns body with its list replaced by elems.
func withList(body []byte, list [2]int, elems [][]byte) []byte {
	n := len(body) - (list[1] - list[0]) + 2 + len(elems)
	for _, e := range elems {
		n += len(e)
	}
	out := make([]byte, 0, n)
	out = append(out, body[:list[0]]...)
	out = append(out, '[')
	for i, e := range elems {
		if i > 0 {
			out = append(out, ',')
		}
		out = append(out, e...)
	}
	out = append(out, ']')
	return append(out, body[list[1]:]...)
}

// sessionKey identifies a conversation by what never changes as it grows:
// the API, the prompt's members beside the list but the tool definitions
// (Anthropic's system, Responses' instructions), and the list's elements
// up to its first user message (system and developer messages, the first
// ask), volatile members left out. It is taken from the bytes, so a request
// let through unread finds its conversation as one read in full does.
func (sh *shape) sessionKey() string {
	h := sha256.New()
	h.Write([]byte(sh.api.name))
	var buf []byte
	write := func(b []byte) {
		if len(sh.api.volatile) > 0 && containsAny(b, sh.api.volatile) {
			buf = writeWithout(buf[:0], b, sh.api.volatile)
			b = buf
		}
		h.Write([]byte{0})
		h.Write(b)
	}
	for _, m := range sh.beside {
		if m.Key != "tools" && m.Key != "functions" {
			write(sh.body[m.Value.Start:m.Value.End])
		}
	}
	for k := range sh.elems {
		e := sh.elem(k)
		write(e)
		if jsonscan.LookupString(e, "role") == "user" {
			break
		}
	}
	return "conv-" + hex.EncodeToString(h.Sum(nil)[:12])
}
