//go:build unix

package checkpoint

import (
	"os"
	"strconv"
	"syscall"
)

// gen returns the generation of a log file: its inode number, which a
// rewrite (a new file renamed over the log) changes and an append does not.
func gen(st os.FileInfo) string {
	if s, ok := st.Sys().(*syscall.Stat_t); ok {
		return strconv.FormatUint(uint64(s.Ino), 10)
	}
	return st.ModTime().String()
}
