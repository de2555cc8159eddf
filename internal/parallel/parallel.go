// Package parallel runs independent calls over an index range on all cores,
// keeping the error a sequential loop would have stopped at.
package parallel

import (
	"runtime"
	"sync"
	"sync/atomic"
)

// Each calls fn(i) for every i in [0, n) on up to GOMAXPROCS
// goroutines, in chunks of consecutive indexes, and returns the lowest i
// whose call failed with its error (-1, nil when none did): the error a
// loop from 0 would have stopped at. Calls above a failure may or may not
// have run. Short lists run in the caller's goroutine. fn must be safe to
// call concurrently for different i.
func Each(n int, fn func(i int) error) (int, error) {
	const chunk = 256
	workers := min(runtime.GOMAXPROCS(0), (n+chunk-1)/chunk)
	if workers <= 1 {
		for i := range n {
			if err := fn(i); err != nil {
				return i, err
			}
		}
		return -1, nil
	}
	var (
		next   atomic.Int64
		mu     sync.Mutex
		failAt = n
		failed error
		wg     sync.WaitGroup
	)
	stopAt := func() int {
		mu.Lock()
		defer mu.Unlock()
		return failAt
	}
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				from := int(next.Add(chunk)) - chunk
				if from >= n || from >= stopAt() {
					return
				}
				for i := from; i < min(from+chunk, n); i++ {
					if err := fn(i); err != nil {
						mu.Lock()
						if i < failAt {
							failAt, failed = i, err
						}
						mu.Unlock()
						break
					}
				}
			}
		}()
	}
	wg.Wait()
	if failed == nil {
		return -1, nil
	}
	return failAt, failed
}
