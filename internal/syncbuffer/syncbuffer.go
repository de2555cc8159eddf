// Package syncbuffer is a bytes.Buffer that goroutines may write and read
// at once: the log sink of a server under test, or the output of a
// process that a test reads while the process still writes it. It is test
// support, shared by the packages whose tests need one (serve,
// cmd/compact) instead of a copy in each.
package syncbuffer

import (
	"bytes"
	"sync"
)

// Buffer is a bytes.Buffer behind a mutex. The zero value is an empty
// buffer ready to use.
type Buffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

// Write appends p to the buffer.
func (s *Buffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

// String returns what was written so far.
func (s *Buffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
