//go:build !unix

package checkpoint

import "os"

// statLog returns the generation and size of the open log f. Without an
// inode number the generation is the modification time, which an append
// changes too: a writer then rereads the log after each save, which is
// slower, never wrong. (A FileStore needs flock, which lock_other.go does
// not have: it is here so that the module builds, with the Redis store,
// where flock is not.)
func statLog(f *os.File) (logStat, error) {
	st, err := f.Stat()
	if err != nil {
		return logStat{}, err
	}
	return logStat{gen: st.ModTime().String(), size: st.Size()}, nil
}

// statLogPath returns the generation and size of the log at path.
func statLogPath(path string) (logStat, error) {
	st, err := os.Stat(path)
	if err != nil {
		return logStat{}, err
	}
	return logStat{gen: st.ModTime().String(), size: st.Size()}, nil
}
