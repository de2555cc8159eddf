//go:build !unix

package main

import "os"

// closeBeforeRename is true where an open file cannot be renamed.
const closeBeforeRename = true

// lockTemp cannot lock here (no flock): age alone tells debris.
func lockTemp(*os.File) {}

// tempInUse cannot tell here: a temporary file older than staleTempAge is
// taken for debris.
func tempInUse(string) bool { return false }
