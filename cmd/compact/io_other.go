//go:build !unix

package main

import (
	"fmt"
	"os"
)

// closeBeforeRename is true where an open file cannot be renamed.
const closeBeforeRename = true

// lockTemp cannot lock here (no flock): age alone tells debris.
func lockTemp(*os.File) {}

// tempInUse cannot tell here: a temporary file older than staleTempAge is
// taken for debris.
func tempInUse(string) bool { return false }

// dupDescriptor cannot copy a descriptor here.
func dupDescriptor(fd int, name string) (*os.File, error) {
	return nil, fmt.Errorf("%s: writing to descriptor %d is not supported on this system", name, fd)
}
