package checkpoint

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// legacyFiles reads the sessions a FileStore wrote before logs: one file
// per checkpoint and a HEAD file naming the latest.
//
//	DIR/SESSION/00000007-3fa9c1d2e4b5.ckpt   one checkpoint (see codec.go)
//	DIR/SESSION/HEAD                         the latest checkpoint's ID and hash
//
// Such a session loads as it was; its first save appends to a log, over the
// HEAD's checkpoint, and its history runs on into the files.
type legacyFiles struct {
	dir   string
	codec codec
}

const (
	headFile  = "HEAD"
	ckptExt   = ".ckpt"
	tmpPrefix = ".tmp-"
	trashName = ".deleted-"
)

// readHead reads the session's head pointer.
func (l *legacyFiles) readHead(session string) (headRecord, error) {
	var h headRecord
	blob, err := os.ReadFile(filepath.Join(l.dir, session, headFile))
	if errors.Is(err, fs.ErrNotExist) {
		return h, fmt.Errorf("%w: session %s", ErrNotFound, session)
	}
	if err != nil {
		return h, fmt.Errorf("session %s: %w", session, err)
	}
	hdr, payload, err := l.codec.open(blob, kindHeadFile)
	if err != nil {
		return h, fmt.Errorf("session %s: head: %w", session, err)
	}
	if err := json.Unmarshal(payload, &h); err != nil {
		return h, fmt.Errorf("session %s: head: %w: %v", session, ErrCorrupt, err)
	}
	if h.Info.Latest != hdr.Meta.ID || h.Info.Session != session {
		return h, fmt.Errorf("session %s: head: %w: names %s/%s", session, ErrCorrupt, h.Info.Session, h.Info.Latest)
	}
	return h, nil
}

// headMeta returns the latest checkpoint's meta as the head records it,
// readable without the key.
func (l *legacyFiles) headMeta(session string) (Meta, error) {
	blob, err := os.ReadFile(filepath.Join(l.dir, session, headFile))
	if errors.Is(err, fs.ErrNotExist) {
		if l.hasFiles(session) {
			return Meta{}, fmt.Errorf("session %s: %w: checkpoint files without a HEAD (checkpoint recover rebuilds it)", session, ErrCorrupt)
		}
		return Meta{}, fmt.Errorf("%w: session %s", ErrNotFound, session)
	}
	if err != nil {
		return Meta{}, fmt.Errorf("session %s: %w", session, err)
	}
	hdr, _, err := l.codec.open(blob, kindHeadFile)
	if err != nil && !errors.Is(err, ErrKeyRequired) && !errors.Is(err, ErrWrongKey) {
		return Meta{}, fmt.Errorf("session %s: head: %w", session, err)
	}
	if hdr.Meta.Session != session || !ValidSessionID(hdr.Meta.ID) {
		return Meta{}, fmt.Errorf("session %s: head: %w: names %s/%s", session, ErrCorrupt, hdr.Meta.Session, hdr.Meta.ID)
	}
	return hdr.Meta, nil
}

// hasFiles reports whether the session's directory holds checkpoint files.
func (l *legacyFiles) hasFiles(session string) bool {
	m, _ := filepath.Glob(filepath.Join(l.dir, session, "*"+ckptExt))
	return len(m) > 0
}

func (l *legacyFiles) latest(ctx context.Context, session string) (*Checkpoint, error) {
	m, err := l.headMeta(session)
	if err != nil {
		return nil, err
	}
	c, err := l.load(ctx, session, m.ID)
	if errors.Is(err, ErrNotFound) {
		return nil, fmt.Errorf("session %s: %w: head names checkpoint %s, which is not stored", session, ErrCorrupt, m.ID)
	}
	if err != nil {
		return nil, err
	}
	if c.Hash != m.Hash {
		return nil, fmt.Errorf("session %s: checkpoint %s: %w: hash %s, head recorded %s", session, m.ID, ErrCorrupt, c.Hash, m.Hash)
	}
	return c, nil
}

func (l *legacyFiles) load(ctx context.Context, session, id string) (*Checkpoint, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	blob, err := os.ReadFile(filepath.Join(l.dir, session, id+ckptExt))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%w: session %s, checkpoint %s", ErrNotFound, session, id)
	}
	if err != nil {
		return nil, fmt.Errorf("session %s: checkpoint %s: %w", session, id, err)
	}
	c, _, err := l.codec.decode(blob)
	if err != nil {
		return nil, fmt.Errorf("session %s: checkpoint %s: %w", session, id, err)
	}
	if c.ID != id || c.Session != session {
		return nil, fmt.Errorf("session %s: checkpoint %s: %w: file holds %s/%s", session, id, ErrCorrupt, c.Session, c.ID)
	}
	return c, nil
}

// readMeta reads only the header of a checkpoint file.
func (l *legacyFiles) readMeta(session, id string) (Meta, error) {
	f, err := os.Open(filepath.Join(l.dir, session, id+ckptExt))
	if errors.Is(err, fs.ErrNotExist) {
		return Meta{}, fmt.Errorf("%w: session %s, checkpoint %s", ErrNotFound, session, id)
	}
	if err != nil {
		return Meta{}, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return Meta{}, err
	}
	line, err := bufio.NewReaderSize(f, 4096).ReadSlice('\n')
	if err != nil && !errors.Is(err, bufio.ErrBufferFull) && !errors.Is(err, io.EOF) {
		return Meta{}, err
	}
	if len(line) == 0 || line[len(line)-1] != '\n' {
		return Meta{}, fmt.Errorf("session %s: checkpoint %s: %w: no header line", session, id, ErrCorrupt)
	}
	h, _, err := readHeader(line)
	if err != nil {
		return Meta{}, fmt.Errorf("session %s: checkpoint %s: %w", session, id, err)
	}
	if h.Meta.ID != id || h.Meta.Session != session {
		return Meta{}, fmt.Errorf("session %s: checkpoint %s: %w: header names %s/%s", session, id, ErrCorrupt, h.Meta.Session, h.Meta.ID)
	}
	h.Meta.Size = int(st.Size())
	return h.Meta, nil
}

// history walks the files' chain from id ("" with fromHead: from HEAD).
func (l *legacyFiles) history(ctx context.Context, session, id string, fromHead bool) ([]Meta, error) {
	if fromHead {
		head, err := l.headMeta(session)
		if err != nil {
			return nil, err
		}
		id = head.ID
	}
	var out []Meta
	for id != "" {
		if err := ctx.Err(); err != nil {
			return out, err
		}
		m, err := l.readMeta(session, id)
		if errors.Is(err, ErrNotFound) {
			if len(out) == 0 && fromHead {
				return nil, fmt.Errorf("session %s: %w: head names checkpoint %s, which is not stored", session, ErrCorrupt, id)
			}
			break // pruned
		}
		if err != nil {
			return out, err
		}
		out = append(out, m)
		id = m.ParentID
	}
	return out, nil
}

// sessions lists the session directories that hold a HEAD or checkpoint
// files (readable or not).
func (l *legacyFiles) sessions() ([]string, error) {
	entries, err := os.ReadDir(l.dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("checkpoint store: %w", err)
	}
	var out []string
	for _, e := range entries {
		if !e.IsDir() || !ValidSessionID(e.Name()) {
			continue
		}
		if _, err := os.Stat(filepath.Join(l.dir, e.Name(), headFile)); err == nil || l.hasFiles(e.Name()) {
			out = append(out, e.Name())
		}
	}
	return out, nil
}

// files lists the IDs of the session's checkpoint files.
func (l *legacyFiles) files(session string) []string {
	m, _ := filepath.Glob(filepath.Join(l.dir, session, "*"+ckptExt))
	var ids []string
	for _, p := range m {
		ids = append(ids, strings.TrimSuffix(filepath.Base(p), ckptExt))
	}
	return ids
}

// recover rebuilds a missing or unreadable HEAD from the newest checkpoint
// file that loads and verifies.
func (l *legacyFiles) recover(ctx context.Context, session string) (*Checkpoint, error) {
	var best *Checkpoint
	ids := l.files(session)
	if len(ids) == 0 {
		return nil, fmt.Errorf("%w: session %s: no checkpoint saved", ErrNotFound, session)
	}
	for _, id := range ids {
		if !ValidSessionID(id) {
			continue
		}
		c, err := l.load(ctx, session, id)
		if err != nil {
			continue
		}
		if best == nil || c.Seq > best.Seq {
			best = c
		}
	}
	if best == nil {
		return nil, fmt.Errorf("%w: session %s: no checkpoint file verifies", ErrCorrupt, session)
	}
	hb, err := json.Marshal(newHeadRecord(best))
	if err != nil {
		return nil, err
	}
	if err := writeAtomic(filepath.Join(l.dir, session), headFile, l.codec.seal(kindHeadFile, metaOf(best), hb)); err != nil {
		return nil, fmt.Errorf("session %s: write head: %w", session, err)
	}
	return best, nil
}

// writeLegacy writes c as a checkpoint file and makes it the head, as
// FileStores did before logs (for tests of reading old stores).
func (l *legacyFiles) writeLegacy(c *Checkpoint) error {
	dir := filepath.Join(l.dir, c.Session)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	c.SchemaVersion = SchemaVersion
	blob, err := l.codec.encode(c)
	if err != nil {
		return err
	}
	if err := writeAtomic(dir, c.ID+ckptExt, blob); err != nil {
		return err
	}
	hb, _ := json.Marshal(newHeadRecord(c))
	return writeAtomic(dir, headFile, l.codec.seal(kindHeadFile, metaOf(c), hb))
}
