//go:build unix

package main

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// closeBeforeRename is false: a temporary file stays open, and so locked,
// until it has replaced the output.
const closeBeforeRename = false

// lockTemp takes an advisory lock on a temporary file being written; the
// kernel drops it when the process ends, however it ends.
func lockTemp(f *os.File) {
	unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
}

// tempInUse reports whether a running process holds path's lock.
func tempInUse(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return true // leave what cannot be examined
	}
	defer f.Close()
	err = unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
	if err == nil {
		unix.Flock(int(f.Fd()), unix.LOCK_UN)
		return false
	}
	return errors.Is(err, unix.EWOULDBLOCK)
}

// dupDescriptor returns a copy of descriptor fd, named name: closing it
// leaves fd open.
func dupDescriptor(fd int, name string) (*os.File, error) {
	n, err := unix.Dup(fd)
	if err != nil {
		return nil, err
	}
	return os.NewFile(uintptr(n), name), nil
}
