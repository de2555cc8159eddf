package checkpoint

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"
)

// FileStore keeps checkpoints in a directory, one subdirectory per session:
//
//	DIR/SESSION/00000007-3fa9c1d2e4b5.ckpt   one file per checkpoint
//	DIR/SESSION/HEAD                         the latest checkpoint's ID and hash
//	DIR/SESSION/events.jsonl                 the event log
//	DIR/SESSION/lock                         flock'd by every writer
//
// Every file is written to a temporary name, synced, renamed into place and
// its directory synced, so a crash at any instant leaves the previous state
// or the new one, never a mix. The checkpoint file is durable before the
// head names it. Writers of a session take its lock file, so processes
// sharing the directory cannot interleave. Files are created 0600 and
// directories 0700.
type FileStore struct {
	dir   string
	opts  Options
	codec codec
}

var _ Store = (*FileStore)(nil)

const (
	headFile   = "HEAD"
	lockName   = "lock"
	eventsFile = "events.jsonl"
	ckptExt    = ".ckpt"
	tmpPrefix  = ".tmp-"
	trashName  = ".deleted-"
)

// NewFileStore opens the store in dir. A missing directory is created
// (mode 0700) by the first save, so reading a store that does not exist yet
// leaves no trace.
func NewFileStore(dir string, opts Options) (*FileStore, error) {
	cd, err := newCodec(opts.Key)
	if err != nil {
		return nil, err
	}
	st, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return nil, fmt.Errorf("checkpoint store: %w", err)
	case !st.IsDir():
		return nil, fmt.Errorf("%w: checkpoint store %s is not a directory", ErrInvalid, dir)
	}
	return &FileStore{dir: dir, opts: opts, codec: cd}, nil
}

// readStoreDir lists the store's directory; a store never saved to is empty.
func (s *FileStore) readStoreDir() ([]os.DirEntry, error) {
	entries, err := os.ReadDir(s.dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("checkpoint store: %w", err)
	}
	return entries, nil
}

// Dir returns the store's directory.
func (s *FileStore) Dir() string { return s.dir }

// EventLogPath returns the path of a session's event log.
func (s *FileStore) EventLogPath(session string) string {
	return filepath.Join(s.dir, session, eventsFile)
}

// Close does nothing: a FileStore holds no open files between calls.
func (s *FileStore) Close() error { return nil }

func checkSession(session string) error {
	if !ValidSessionID(session) {
		return fmt.Errorf("%w: session ID %q", ErrInvalid, session)
	}
	return nil
}

// Save implements Store.
func (s *FileStore) Save(ctx context.Context, c *Checkpoint, parent string) error {
	if err := c.validate(s.opts.Redactor != nil); err != nil {
		return err
	}
	dir := filepath.Join(s.dir, c.Session)
	unlock, err := s.lockSession(ctx, c.Session, true)
	if err != nil {
		return err
	}
	defer unlock()

	prev, err := s.readHead(c.Session)
	var ps parentState
	switch {
	case errors.Is(err, ErrNotFound):
	case err != nil:
		return err
	default:
		ps = parentState{exists: true, id: prev.Info.Latest, seq: prev.Info.Seq, createdAt: prev.Info.CreatedAt}
	}
	d, blob, err := prepare(&s.opts, s.codec, c, parent, ps)
	if err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	hb, err := json.Marshal(newHeadRecord(d))
	if err != nil {
		return fmt.Errorf("save session %s: head: %w", c.Session, err)
	}
	var events []Event
	if !s.opts.DisableEventLog {
		var p *headRecord
		if ps.exists {
			p = &prev
		}
		events = transitions(p, d)
	}
	// Three writes that do not depend on each other run at once, so their
	// fsyncs overlap: the checkpoint file (synced, renamed into place, its
	// directory synced), the event log lines (synced), and the new head in
	// its temporary file (synced). Only when all three are durable does the
	// head's rename commit the save. A crash before that leaves the old
	// head, naming the old checkpoint; events logged ahead of it name a
	// checkpoint the history does not reach.
	var wg sync.WaitGroup
	var ckptErr, eventErr, headErr error
	var headTmp string
	wg.Add(3)
	go func() { defer wg.Done(); ckptErr = writeAtomic(dir, d.ID+ckptExt, blob) }()
	go func() { defer wg.Done(); eventErr = s.logEvents(c.Session, events) }()
	go func() {
		defer wg.Done()
		headTmp, headErr = writeTemp(dir, headFile, s.codec.seal(kindHead, metaOf(d), hb))
	}()
	wg.Wait()
	if err := errors.Join(ckptErr, eventErr, headErr); err != nil {
		if headTmp != "" {
			os.Remove(headTmp)
		}
		return fmt.Errorf("save session %s: %w", c.Session, err)
	}
	if err := commitTemp(dir, headTmp, headFile); err != nil {
		os.Remove(headTmp)
		return fmt.Errorf("save session %s: %w", c.Session, err)
	}
	commit(c, d)
	return nil
}

func (s *FileStore) logEvents(session string, events []Event) error {
	if len(events) == 0 {
		return nil
	}
	l, err := OpenEventLog(s.EventLogPath(session))
	if err != nil {
		return err
	}
	if err := l.Append(events...); err != nil {
		l.Close()
		return err
	}
	return l.Close()
}

// lockSession takes the session's lock, creating the session directory
// first when create is set; without create, a missing session is
// ErrNotFound.
func (s *FileStore) lockSession(ctx context.Context, session string, create bool) (func(), error) {
	dir := filepath.Join(s.dir, session)
	if create {
		if err := os.MkdirAll(s.dir, 0o700); err != nil {
			return nil, fmt.Errorf("checkpoint store: %w", err)
		}
	}
	for {
		if create {
			if err := mkdirDurable(s.dir, dir); err != nil {
				return nil, fmt.Errorf("session %s: %w", session, err)
			}
		}
		unlock, current, err := lockFile(ctx, filepath.Join(dir, lockName))
		if errors.Is(err, fs.ErrNotExist) && !create {
			return nil, fmt.Errorf("%w: session %s", ErrNotFound, session)
		}
		if err != nil {
			return nil, fmt.Errorf("session %s: %w", session, err)
		}
		if current {
			return unlock, nil
		}
		// Deleted while we waited: start over on the new directory.
		unlock()
		if !create {
			return nil, fmt.Errorf("%w: session %s", ErrNotFound, session)
		}
	}
}

// mkdirDurable creates dir (one level below parent) and syncs parent so
// the new entry survives a crash.
func mkdirDurable(parent, dir string) error {
	err := os.Mkdir(dir, 0o700)
	if errors.Is(err, fs.ErrExist) {
		return nil
	}
	if err != nil {
		return err
	}
	return syncDir(parent)
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("sync %s: %w", dir, err)
	}
	return nil
}

// writeAtomic replaces dir/name with data: temporary file, sync, rename,
// directory sync.
func writeAtomic(dir, name string, data []byte) error {
	tmp, err := writeTemp(dir, name, data)
	if err != nil {
		return err
	}
	if err := commitTemp(dir, tmp, name); err != nil {
		os.Remove(tmp)
		return err
	}
	return nil
}

// writeTemp writes data to a new temporary file beside dir/name and syncs
// it, returning its path.
func writeTemp(dir, name string, data []byte) (path string, err error) {
	var rb [6]byte
	rand.Read(rb[:])
	tmp := filepath.Join(dir, tmpPrefix+name+"-"+hex.EncodeToString(rb[:]))
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return "", err
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(tmp)
		}
	}()
	if _, err = f.Write(data); err != nil {
		return "", fmt.Errorf("write %s: %w", name, err)
	}
	if err = syncData(f); err != nil {
		return "", fmt.Errorf("sync %s: %w", name, err)
	}
	if err = f.Close(); err != nil {
		return "", fmt.Errorf("close %s: %w", name, err)
	}
	return tmp, nil
}

// commitTemp renames a synced temporary file to dir/name and syncs dir, so
// the new name survives a crash.
func commitTemp(dir, tmp, name string) error {
	if err := os.Rename(tmp, filepath.Join(dir, name)); err != nil {
		return fmt.Errorf("rename %s: %w", name, err)
	}
	return syncDir(dir)
}

// readHead reads the session's head pointer.
func (s *FileStore) readHead(session string) (headRecord, error) {
	var h headRecord
	blob, err := os.ReadFile(filepath.Join(s.dir, session, headFile))
	if errors.Is(err, fs.ErrNotExist) {
		return h, fmt.Errorf("%w: session %s", ErrNotFound, session)
	}
	if err != nil {
		return h, fmt.Errorf("session %s: %w", session, err)
	}
	hdr, payload, err := s.codec.open(blob, kindHead)
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

// headMeta returns the latest checkpoint's meta as the head records it.
func (s *FileStore) headMeta(session string) (Meta, error) {
	blob, err := os.ReadFile(filepath.Join(s.dir, session, headFile))
	if errors.Is(err, fs.ErrNotExist) {
		return Meta{}, fmt.Errorf("%w: session %s", ErrNotFound, session)
	}
	if err != nil {
		return Meta{}, fmt.Errorf("session %s: %w", session, err)
	}
	// The head's own payload is verified, and may be encrypted; the meta
	// in its header is covered by its hash as well.
	hdr, _, err := s.codec.open(blob, kindHead)
	if err != nil && !errors.Is(err, ErrKeyRequired) && !errors.Is(err, ErrWrongKey) {
		return Meta{}, fmt.Errorf("session %s: head: %w", session, err)
	}
	if hdr.Meta.Session != session || !ValidSessionID(hdr.Meta.ID) {
		return Meta{}, fmt.Errorf("session %s: head: %w: names %s/%s", session, ErrCorrupt, hdr.Meta.Session, hdr.Meta.ID)
	}
	return hdr.Meta, nil
}

// Latest implements Store. The checkpoint must match the hash its head
// recorded.
func (s *FileStore) Latest(ctx context.Context, session string) (*Checkpoint, error) {
	if err := checkSession(session); err != nil {
		return nil, err
	}
	m, err := s.headMeta(session)
	if err != nil {
		return nil, err
	}
	return loadHeadCheckpoint(ctx, s, session, m)
}

// Load implements Store.
func (s *FileStore) Load(ctx context.Context, session, id string) (*Checkpoint, error) {
	if err := checkIDs(session, id); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	blob, err := os.ReadFile(filepath.Join(s.dir, session, id+ckptExt))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%w: session %s, checkpoint %s", ErrNotFound, session, id)
	}
	if err != nil {
		return nil, fmt.Errorf("session %s: checkpoint %s: %w", session, id, err)
	}
	c, _, err := s.codec.decode(blob)
	if err != nil {
		return nil, fmt.Errorf("session %s: checkpoint %s: %w", session, id, err)
	}
	if c.ID != id || c.Session != session {
		return nil, fmt.Errorf("session %s: checkpoint %s: %w: file holds %s/%s", session, id, ErrCorrupt, c.Session, c.ID)
	}
	return c, nil
}

// readMeta reads only the header of a checkpoint file.
func (s *FileStore) readMeta(session, id string) (Meta, error) {
	path := filepath.Join(s.dir, session, id+ckptExt)
	f, err := os.Open(path)
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

// History implements Store.
func (s *FileStore) History(ctx context.Context, session string) ([]Meta, error) {
	if err := checkSession(session); err != nil {
		return nil, err
	}
	head, err := s.headMeta(session)
	if err != nil {
		return nil, err
	}
	var out []Meta
	for id := head.ID; id != ""; {
		if err := ctx.Err(); err != nil {
			return out, err
		}
		m, err := s.readMeta(session, id)
		if errors.Is(err, ErrNotFound) {
			if len(out) == 0 {
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

// List implements Store.
func (s *FileStore) List(ctx context.Context, f Filter) ([]SessionInfo, error) {
	entries, err := s.readStoreDir()
	if err != nil {
		return nil, err
	}
	now := s.opts.now()
	var out []SessionInfo
	var errs []error
	for _, e := range entries {
		if !e.IsDir() || !ValidSessionID(e.Name()) {
			continue
		}
		if err := ctx.Err(); err != nil {
			return out, err
		}
		h, err := s.readHead(e.Name())
		if errors.Is(err, ErrNotFound) {
			continue // created, first save not committed
		}
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if f.match(&h.Info, now) {
			out = append(out, h.Info)
		}
	}
	sortInfos(out)
	return out, errors.Join(errs...)
}

func sortInfos(in []SessionInfo) {
	sort.SliceStable(in, func(i, j int) bool {
		if !in[i].UpdatedAt.Equal(in[j].UpdatedAt) {
			return in[i].UpdatedAt.After(in[j].UpdatedAt)
		}
		return in[i].Session < in[j].Session
	})
}

// Delete implements Store.
func (s *FileStore) Delete(ctx context.Context, session string) error {
	if err := checkSession(session); err != nil {
		return err
	}
	unlock, err := s.lockSession(ctx, session, false)
	if errors.Is(err, ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	defer unlock()
	_, err = s.removeSession(session)
	return err
}

// removeSession moves the session directory away in one rename, so that
// readers see all of it or none, then removes it. The caller holds the lock.
func (s *FileStore) removeSession(session string) (int, error) {
	var rb [6]byte
	rand.Read(rb[:])
	trash := filepath.Join(s.dir, trashName+session+"-"+hex.EncodeToString(rb[:]))
	if err := os.Rename(filepath.Join(s.dir, session), trash); err != nil {
		return 0, fmt.Errorf("delete session %s: %w", session, err)
	}
	if err := syncDir(s.dir); err != nil {
		return 0, fmt.Errorf("delete session %s: %w", session, err)
	}
	n := 0
	if entries, err := os.ReadDir(trash); err == nil {
		for _, e := range entries {
			if strings.HasSuffix(e.Name(), ckptExt) {
				n++
			}
		}
	}
	if err := os.RemoveAll(trash); err != nil {
		return n, fmt.Errorf("delete session %s: %w", session, err)
	}
	return n, nil
}

// Prune implements Store. It also removes what crashed writers left behind:
// temporary files and checkpoint files the head never came to name.
func (s *FileStore) Prune(ctx context.Context, p PruneOptions) (PruneResult, error) {
	var res PruneResult
	entries, err := s.readStoreDir()
	if err != nil {
		return res, err
	}
	now := s.opts.now()
	var errs []error
	for _, e := range entries {
		if err := ctx.Err(); err != nil {
			return res, err
		}
		name := e.Name()
		if strings.HasPrefix(name, trashName) { // a Delete interrupted by a crash
			os.RemoveAll(filepath.Join(s.dir, name))
			continue
		}
		if !e.IsDir() || !ValidSessionID(name) {
			continue
		}
		if err := s.pruneSession(ctx, name, p, now, &res); err != nil {
			errs = append(errs, err)
		}
	}
	return res, errors.Join(errs...)
}

func (s *FileStore) pruneSession(ctx context.Context, session string, p PruneOptions, now time.Time, res *PruneResult) error {
	unlock, err := s.lockSession(ctx, session, false)
	if errors.Is(err, ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	defer unlock()
	dir := filepath.Join(s.dir, session)
	head, err := s.headMeta(session)
	if errors.Is(err, ErrNotFound) {
		head = Meta{} // never committed: everything here is debris
	} else if err != nil {
		return err
	}
	if head.ID != "" && p.MaxAge > 0 && head.UpdatedAt.Before(now.Add(-p.MaxAge)) {
		n, err := s.removeSession(session)
		res.Checkpoints += n
		res.Sessions++
		return err
	}
	// Walk the chain from the head to decide what stays.
	keep := map[string]bool{}
	for id, n := head.ID, 0; id != ""; n++ {
		m, err := s.readMeta(session, id)
		if err != nil {
			if errors.Is(err, ErrNotFound) {
				break
			}
			return err
		}
		old := p.MaxAge > 0 && m.UpdatedAt.Before(now.Add(-p.MaxAge))
		if n > 0 && ((p.KeepLast > 0 && n >= p.KeepLast) || old) {
			break // the rest of the chain is older still
		}
		keep[id] = true
		id = m.ParentID
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	removed := false
	for _, e := range entries {
		name := e.Name()
		switch {
		case strings.HasPrefix(name, tmpPrefix):
			// Writers hold the lock while a temporary file exists, and we
			// hold it now: this one belongs to a writer that died.
			os.Remove(filepath.Join(dir, name))
		case strings.HasSuffix(name, ckptExt) && !keep[strings.TrimSuffix(name, ckptExt)]:
			if err := os.Remove(filepath.Join(dir, name)); err != nil {
				return err
			}
			res.Checkpoints++
			removed = true
		}
	}
	if removed {
		return syncDir(dir)
	}
	return nil
}
