//go:build !unix

package checkpoint

import "os"

// gen returns the generation of a log file. Without an inode number it is
// the modification time, which an append changes too: a writer then
// rereads the log after each save, which is slower, never wrong. (A
// FileStore needs flock, which lock_other.go does not have: it is here so
// that the module builds, with the Redis store, where flock is not.)
func gen(st os.FileInfo) string { return st.ModTime().String() }
