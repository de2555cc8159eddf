//go:build linux

package checkpoint

import (
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// A log's generation is its inode number and its birth time. The inode
// number alone is not enough: after a rewrite unlinks the old log, the
// file system may give its number to the next file created, a later
// rewrite's, and a reader would take the new log for the one it indexed
// and read its old byte positions in it. The birth time (nanoseconds)
// tells the two apart. Where the file system keeps no birth time, the
// generation is the inode number alone.

// statLog returns the generation and size of the open log f.
func statLog(f *os.File) (logStat, error) {
	var x unix.Statx_t
	err := unix.Statx(int(f.Fd()), "", unix.AT_EMPTY_PATH, unix.STATX_INO|unix.STATX_SIZE|unix.STATX_BTIME, &x)
	if err != nil {
		return logStat{}, &os.PathError{Op: "statx", Path: f.Name(), Err: err}
	}
	return statxLog(&x), nil
}

// statLogPath returns the generation and size of the log at path.
func statLogPath(path string) (logStat, error) {
	var x unix.Statx_t
	err := unix.Statx(unix.AT_FDCWD, path, 0, unix.STATX_INO|unix.STATX_SIZE|unix.STATX_BTIME, &x)
	if err != nil {
		return logStat{}, &os.PathError{Op: "statx", Path: path, Err: err}
	}
	return statxLog(&x), nil
}

func statxLog(x *unix.Statx_t) logStat {
	g := strconv.FormatUint(x.Ino, 10)
	if x.Mask&unix.STATX_BTIME != 0 {
		g += "." + strconv.FormatInt(x.Btime.Sec, 10) + "." + strconv.FormatUint(uint64(x.Btime.Nsec), 10)
	}
	return logStat{gen: g, size: int64(x.Size)}
}
