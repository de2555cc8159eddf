package checkpoint

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"
	"unsafe"
)

// FileStore keeps checkpoints in a directory, one subdirectory per session:
//
//	DIR/SESSION/log            the session's log: elements and records, appended
//	DIR/SESSION/lock           flock'd by writers (exclusive) and readers (shared)
//	DIR/SESSION/events.jsonl   the event log
//
// A save appends one batch to the log (the elements it introduces, then
// its record) in one write and makes it durable with one fdatasync, under
// the session's lock, so processes sharing the directory never interleave.
// A batch is committed once whole on disk: a crash in the middle leaves a
// torn tail that readers ignore and the next writer cuts off, so the last
// committed checkpoint always loads. Batch headers check themselves (see
// filebatch.go), so only what a cut-short append leaves is taken for a torn
// tail; damage anywhere else is reported with its byte offset and never
// cut off. Readers take the shared lock while they
// read, so they never see a batch before it is durable. Prune rewrites a
// log to a new file renamed into place. Files are created 0600 and
// directories 0700.
//
// Sessions written before logs (a file per checkpoint and a HEAD) load as
// they are; their next save starts the log.
type FileStore struct {
	*LogStore
	dir string
}

const (
	// rewriteBatch bounds the batches of a rewritten log (a header says
	// at most 4 GiB).
	rewriteBatch = 1 << 30
	logName      = "log"
	lockName     = "lock"
	eventsFile   = "events.jsonl"
)

// NewFileStore opens the store in dir. A missing directory is created
// (mode 0700) by the first save, so reading a store that does not exist yet
// leaves no trace.
func NewFileStore(dir string, opts Options) (*FileStore, error) {
	st, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return nil, fmt.Errorf("checkpoint store: %w", err)
	case !st.IsDir():
		return nil, fmt.Errorf("%w: checkpoint store %s is not a directory", ErrInvalid, dir)
	}
	ls, err := NewLogStore(&fileLog{dir: dir}, opts)
	if err != nil {
		return nil, err
	}
	s := &FileStore{LogStore: ls, dir: dir}
	ls.legacy = &legacyFiles{dir: dir, codec: ls.codec}
	if !opts.DisableEventLog {
		ls.events = s.logEvents
	}
	return s, nil
}

// Dir returns the store's directory.
func (s *FileStore) Dir() string { return s.dir }

// EventLogPath returns the path of a session's event log.
func (s *FileStore) EventLogPath(session string) string {
	return filepath.Join(s.dir, session, eventsFile)
}

// logEvents appends a committed save's events to the session's event log.
// The log is a convenience for watching a session (tail -f): it is written
// after the save is durable and not synced itself, so a crash can lose its
// last lines but never names a checkpoint that was not committed.
func (s *FileStore) logEvents(session string, events []Event) {
	f, err := os.OpenFile(s.EventLogPath(session), os.O_RDWR|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return
	}
	defer f.Close()
	if trimTornTail(f) != nil {
		return
	}
	var b []byte
	for _, e := range events {
		line, err := json.Marshal(e)
		if err != nil {
			return
		}
		b = append(append(b, line...), '\n')
	}
	f.Write(b)
}

func checkSession(session string) error {
	if !ValidSessionID(session) {
		return fmt.Errorf("%w: session ID %q", ErrInvalid, session)
	}
	return nil
}

// logStat is what a reader needs of a log file: its generation (see
// statLog) and its size.
type logStat struct {
	gen  string
	size int64
}

// fileLog is the LogBackend of a FileStore: the log file is a sequence
// of batches (see filebatch.go). A position's Gen names the file (its
// inode number and, where kept, its birth time: gen_linux.go), N a byte
// offset.
type fileLog struct{ dir string }

func (l *fileLog) path(session string) string { return filepath.Join(l.dir, session, logName) }

// ReadLog implements LogBackend, under the session's shared lock.
func (l *fileLog) ReadLog(ctx context.Context, session string, from LogPos) ([][]byte, LogPos, error) {
	frames, _, _, end, err := l.readFrames(ctx, session, from)
	return frames, end, err
}

// readLogAt implements logRanger.
func (l *fileLog) readLogAt(ctx context.Context, session string, from LogPos) ([][]byte, []int64, LogPos, error) {
	frames, data, base, pos, err := l.readFrames(ctx, session, from)
	if err != nil || len(frames) == 0 {
		return frames, nil, pos, err
	}
	offs := make([]int64, len(frames))
	for i, f := range frames {
		offs[i] = offsetIn(data, f, base)
	}
	return frames, offs, pos, nil
}

// offsetIn returns where frame f lies in the log, data being the log from
// byte base on: -1 when f is not within data (a damage frame scan made).
func offsetIn(data, f []byte, base int64) int64 {
	if len(f) == 0 || len(data) == 0 {
		return -1
	}
	d := uintptr(unsafe.Pointer(unsafe.SliceData(data)))
	p := uintptr(unsafe.Pointer(unsafe.SliceData(f)))
	if p < d || p+uintptr(len(f)) > d+uintptr(len(data)) {
		return -1
	}
	return base + int64(p-d)
}

// readAt implements logRanger. The bytes of a generation's log that were
// committed never change (an append writes past them, a rewrite makes a
// new generation), so it needs no lock.
func (l *fileLog) readAt(session, g string, off int64, buf []byte) error {
	f, err := os.Open(l.path(session))
	if err != nil {
		return err
	}
	defer f.Close()
	st, err := statLog(f)
	if err != nil {
		return err
	}
	if st.gen != g {
		return errLogRewritten
	}
	_, err = f.ReadAt(buf, off)
	return err
}

// readFrames is ReadLog, returning also the bytes read (frames are
// slices of them) and the byte offset in the log they start at.
func (l *fileLog) readFrames(ctx context.Context, session string, from LogPos) ([][]byte, []byte, int64, LogPos, error) {
	// Nothing appended since from (the common case: this store wrote the
	// last batch) is told by one stat, without opening or locking: a
	// batch being appended makes the file longer, a rewrite makes
	// another file.
	if from.Gen != "" {
		if st, err := statLogPath(l.path(session)); err == nil && st.gen == from.Gen && st.size == from.N {
			return nil, nil, from.N, from, nil
		}
	}
	f, err := os.Open(l.path(session))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil, 0, LogPos{}, fmt.Errorf("%w: session %s", ErrNotFound, session)
	}
	if err != nil {
		return nil, nil, 0, from, fmt.Errorf("session %s: %w", session, err)
	}
	defer f.Close()
	unlock, err := lockShared(ctx, filepath.Join(l.dir, session, lockName))
	if err != nil {
		return nil, nil, 0, from, fmt.Errorf("session %s: %w", session, err)
	}
	defer unlock()
	st, err := statLog(f)
	if err != nil {
		return nil, nil, 0, from, err
	}
	pos := LogPos{Gen: st.gen}
	if from.Gen == pos.Gen {
		pos.N = from.N
	}
	if st.size <= pos.N {
		return nil, nil, 0, pos, nil
	}
	data := make([]byte, st.size-pos.N)
	if _, err := f.ReadAt(data, pos.N); err != nil {
		return nil, nil, 0, from, fmt.Errorf("session %s: read log: %w", session, err)
	}
	// Damage comes as damage frames in its place among the frames read
	// past it (see scan), so the store knows what it cost.
	frames, end, _ := scan(data, pos.N)
	return frames, data, pos.N, LogPos{Gen: pos.Gen, N: end}, nil
}

// AppendLog implements LogBackend: one write and one fdatasync under the
// session's exclusive lock.
func (l *fileLog) AppendLog(ctx context.Context, session string, at LogPos, frames [][]byte) (LogPos, error) {
	return l.appendBatch(ctx, session, at, encodeBatch(frames))
}

// appendBatch implements logRanger: AppendLog of a batch encodeBatch
// encoded.
func (l *fileLog) appendBatch(ctx context.Context, session string, at LogPos, buf []byte) (LogPos, error) {
	unlock, err := l.lock(ctx, session, true)
	if err != nil {
		return at, err
	}
	defer unlock()
	path := l.path(session)
	_, serr := os.Stat(path)
	created := errors.Is(serr, fs.ErrNotExist)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return at, err
	}
	defer f.Close()
	end, err := l.committedEnd(f, at)
	if err != nil {
		return at, err
	}
	if len(buf)-batchHeader > maxBatchSize {
		return at, errBatchTooLarge
	}
	// A failed write or sync leaves nothing behind: not a torn batch for
	// a later save to cut, nor, for a session's first save, an empty log
	// that names a session with no checkpoint.
	// (After a failed fsync the kernel may have dropped the dirty pages:
	// the batch must not be served as committed.)
	undo := func(err error) error {
		if created && end.N == 0 {
			if rerr := os.Remove(path); rerr == nil {
				return err
			}
		}
		if terr := f.Truncate(end.N); terr != nil {
			return fmt.Errorf("%w; the log's state after byte %d is unknown: %w", err, end.N, terr)
		}
		syncData(f)
		return err
	}
	if _, err := f.WriteAt(buf, end.N); err != nil {
		return at, undo(fmt.Errorf("write log: %w", err))
	}
	if err := syncData(f); err != nil {
		return at, undo(fmt.Errorf("sync log: %w", err))
	}
	if created {
		if err := syncDir(filepath.Join(l.dir, session)); err != nil {
			return at, err
		}
	}
	end.N += int64(len(buf))
	return end, nil
}

// committedEnd checks that the log f ends at at (after any torn tail,
// which it cuts off) and returns its position.
func (l *fileLog) committedEnd(f *os.File, at LogPos) (LogPos, error) {
	st, err := statLog(f)
	if err != nil {
		return at, err
	}
	pos := LogPos{Gen: st.gen}
	if at.Gen == pos.Gen {
		pos.N = at.N
	} else if at.Gen != "" || at.N != 0 {
		return at, ErrConflict
	}
	if st.size < pos.N {
		return at, ErrConflict
	}
	if st.size > pos.N {
		data := make([]byte, st.size-pos.N)
		if _, err := f.ReadAt(data, pos.N); err != nil {
			return at, err
		}
		frames, end, err := scan(data, pos.N)
		if len(frames) > 0 {
			return at, ErrConflict // another writer committed meanwhile
		}
		if err != nil {
			return at, err // damage is never cut off
		}
		// What is left is provably a batch a crashed writer left
		// unfinished (scan says): never committed.
		if err := f.Truncate(end); err != nil {
			return at, err
		}
	}
	return pos, nil
}

// RewriteLog implements LogBackend: a new file, synced and renamed over
// the log.
func (l *fileLog) RewriteLog(ctx context.Context, session string, at LogPos, frames [][]byte) (LogPos, error) {
	unlock, err := l.lock(ctx, session, false)
	if err != nil {
		return at, err
	}
	defer unlock()
	f, err := os.OpenFile(l.path(session), os.O_RDWR, 0o600)
	if err != nil {
		return at, err
	}
	_, err = l.committedEnd(f, at)
	f.Close()
	if err != nil && !errors.Is(err, ErrCorrupt) { // damage is what a rewrite replaces
		return at, err
	}
	dir := filepath.Join(l.dir, session)
	tmp, err := writeTemp(dir, logName, encodeBatches(frames, rewriteBatch))
	if err != nil {
		return at, err
	}
	if err := commitTemp(dir, tmp, logName); err != nil {
		os.Remove(tmp)
		return at, err
	}
	st, err := statLogPath(l.path(session))
	if err != nil {
		return at, err
	}
	return LogPos{Gen: st.gen, N: st.size}, nil
}

// SetAsideLog implements LogSetAsider: the log is renamed log.damaged-TIME
// in the session's directory.
func (l *fileLog) SetAsideLog(ctx context.Context, session string) (string, error) {
	unlock, err := l.lock(ctx, session, false)
	if err != nil {
		return "", err
	}
	defer unlock()
	dir := filepath.Join(l.dir, session)
	aside := filepath.Join(dir, logName+".damaged-"+time.Now().UTC().Format("20060102T150405.000000000Z"))
	if err := os.Rename(l.path(session), aside); err != nil {
		return "", err
	}
	return aside, syncDir(dir)
}

// Sessions implements LogBackend.
func (l *fileLog) Sessions(ctx context.Context) ([]string, error) {
	entries, err := os.ReadDir(l.dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("checkpoint store: %w", err)
	}
	var out []string
	for _, e := range entries {
		if e.IsDir() && ValidSessionID(e.Name()) {
			// An empty log (a first save that crashed before writing)
			// holds no checkpoint: not a session yet.
			if st, err := os.Stat(l.path(e.Name())); err == nil && st.Size() > 0 {
				out = append(out, e.Name())
			}
		}
	}
	return out, nil
}

// DeleteLog implements LogBackend: the session's directory goes, with any
// files from before logs.
func (l *fileLog) DeleteLog(ctx context.Context, session string) error {
	unlock, err := l.lock(ctx, session, false)
	if errors.Is(err, ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	defer unlock()
	return l.removeSession(session)
}

// Close does nothing: a FileStore holds no open files between calls.
func (l *fileLog) Close() error { return nil }

// lock takes the session's exclusive lock, creating the session directory
// first when create is set; without create, a missing session is
// ErrNotFound.
func (l *fileLog) lock(ctx context.Context, session string, create bool) (func(), error) {
	dir := filepath.Join(l.dir, session)
	if create {
		if err := os.MkdirAll(l.dir, 0o700); err != nil {
			return nil, fmt.Errorf("checkpoint store: %w", err)
		}
	}
	for {
		if create {
			if err := mkdirDurable(l.dir, dir); err != nil {
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

// removeSession moves the session directory away in one rename, so that
// readers see all of it or none, then removes it. The caller holds the lock.
func (l *fileLog) removeSession(session string) error {
	var rb [6]byte
	rand.Read(rb[:])
	trash := filepath.Join(l.dir, trashName+session+"-"+hex.EncodeToString(rb[:]))
	if err := os.Rename(filepath.Join(l.dir, session), trash); err != nil {
		return fmt.Errorf("delete session %s: %w", session, err)
	}
	if err := syncDir(l.dir); err != nil {
		return fmt.Errorf("delete session %s: %w", session, err)
	}
	if err := os.RemoveAll(trash); err != nil {
		return fmt.Errorf("delete session %s: %w", session, err)
	}
	return nil
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
