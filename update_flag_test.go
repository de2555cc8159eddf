package compact_test

import "flag"

// "go test ./... -update" regenerates the golden files of the packages that
// have them; every test binary must accept the flag for that command to
// run, and this package has no golden files to rewrite.
var _ = flag.Bool("update", false, "rewrite golden files (none in this package)")
