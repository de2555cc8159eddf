//go:build unix

package storetest

import "syscall"

// Pause stops the server's process (SIGSTOP): connections stay open and
// nothing answers, as with a server stalled by swapping or a debugger.
func (r *RedisServer) Pause() {
	if r.cmd != nil && r.cmd.Process != nil {
		r.cmd.Process.Signal(syscall.SIGSTOP)
	}
}

// Continue resumes a paused server (SIGCONT).
func (r *RedisServer) Continue() {
	if r.cmd != nil && r.cmd.Process != nil {
		r.cmd.Process.Signal(syscall.SIGCONT)
	}
}
