//go:build unix && !linux

package checkpoint

import (
	"os"
	"strconv"
	"syscall"
)

// statLog returns the generation and size of the open log f. The
// generation is its inode number, which a rewrite (a new file renamed
// over the log) changes and an append does not. (Linux adds the birth
// time: see gen_linux.go.)
func statLog(f *os.File) (logStat, error) {
	st, err := f.Stat()
	if err != nil {
		return logStat{}, err
	}
	return inodeLog(st), nil
}

// statLogPath returns the generation and size of the log at path.
func statLogPath(path string) (logStat, error) {
	st, err := os.Stat(path)
	if err != nil {
		return logStat{}, err
	}
	return inodeLog(st), nil
}

func inodeLog(st os.FileInfo) logStat {
	if s, ok := st.Sys().(*syscall.Stat_t); ok {
		return logStat{gen: strconv.FormatUint(uint64(s.Ino), 10), size: st.Size()}
	}
	return logStat{gen: st.ModTime().String(), size: st.Size()}
}
