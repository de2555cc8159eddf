// Package cputime reads the CPU time a process or thread has used. The
// benchmarks report it beside wall time: on a machine shared with other
// work, wall time stretches when the neighbours are busy and CPU time does
// not. Where the platform cannot tell, it returns 0 and the benchmarks skip
// their CPU figures.
package cputime
