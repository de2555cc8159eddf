//go:build !linux

package main

import "io"

// terminalWidth is unknown here: the bar goes by $COLUMNS, else 80.
func terminalWidth(io.Writer) int { return 0 }
