package parallel

import (
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
)

func TestEach(t *testing.T) {
	for _, n := range []int{0, 1, 255, 256, 257, 5000} {
		for _, fail := range []int{-1, 0, 1, 300, n - 1, n / 2} {
			if fail >= n {
				continue
			}
			t.Run(fmt.Sprint(n, "/", fail), func(t *testing.T) {
				calls := make([]atomic.Int32, n)
				at, err := Each(n, func(i int) error {
					calls[i].Add(1)
					if i == fail || (fail >= 0 && i == fail+700) {
						return fmt.Errorf("item %d", i)
					}
					return nil
				})
				if fail < 0 {
					if at != -1 || err != nil {
						t.Fatalf("= %d, %v; want -1, nil", at, err)
					}
				} else if at != fail || err == nil || err.Error() != fmt.Sprintf("item %d", fail) {
					t.Fatalf("= %d, %v; want %d", at, err, fail)
				}
				limit := n
				if fail >= 0 {
					limit = fail + 1
				}
				for i := 0; i < limit; i++ {
					if c := calls[i].Load(); c != 1 {
						t.Fatalf("item %d called %d times", i, c)
					}
				}
			})
		}
	}
	if _, err := Each(3, func(int) error { return errors.New("x") }); err == nil {
		t.Fatal("no error")
	}
}
