package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// The task the agent is given, and the small Go package it works on. The
// package is written into the work dir when a session starts; the agent
// only ever touches it through its tools.
const (
	task = "The inventory service oversells: Store.Reserve accepts orders for stock that is already reserved. " +
		"Fix it, make the tests pass, deploy inventory v1.4.1 to staging and then production, " +
		"add a CHANGELOG entry and email team@example.com when it is live."

	systemPrompt = "You are a careful coding agent working in a Go repository. Use the tools to read and change files, " +
		"run the tests and deploy. Deploys and emails cannot be undone: do each exactly once."

	buggyLine = "if n > s.stock[sku] {"
	fixedLine = "if n > s.Available(sku) {"
)

// Files of the work dir, relative to it.
const (
	sourceFile    = "inventory.go"
	testFile      = "inventory_test.go"
	changelogFile = "CHANGELOG.md"
	receiptsFile  = "receipts.log" // the outside world's record of deploys and emails (see service.go)
)

var seedSource = `// Package inventory tracks stock levels and the units set aside for open
// orders, per SKU.
package inventory

import (
	"errors"
	"fmt"
	"sort"
	"sync"
)

// ErrInsufficientStock is returned when an order asks for more units than
// are available.
var ErrInsufficientStock = errors.New("insufficient stock")

// ErrUnknownSKU is returned for a SKU the store has never stocked.
var ErrUnknownSKU = errors.New("unknown SKU")

// Store holds stock and reservations. It is safe for concurrent use.
type Store struct {
	mu       sync.Mutex
	stock    map[string]int
	reserved map[string]int
}

// NewStore returns an empty store.
func NewStore() *Store {
	return &Store{stock: map[string]int{}, reserved: map[string]int{}}
}

// Add puts n more units of sku in stock.
func (s *Store) Add(sku string, n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stock[sku] += n
}

// Reserve sets n units of sku aside for an order.
func (s *Store) Reserve(sku string, n int) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.stock[sku]; !ok {
		return fmt.Errorf("reserve %d of %s: %w", n, sku, ErrUnknownSKU)
	}
	if n > s.stock[sku] {
		return fmt.Errorf("reserve %d of %s: %w", n, sku, ErrInsufficientStock)
	}
	s.reserved[sku] += n
	return nil
}

// Release returns n reserved units of sku to the available stock.
func (s *Store) Release(sku string, n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.reserved[sku] = max(0, s.reserved[sku]-n)
}

// Available returns the units of sku that are in stock and not reserved.
func (s *Store) Available(sku string) int {
	return s.stock[sku] - s.reserved[sku]
}

// SKUs returns the stocked SKUs in order.
func (s *Store) SKUs() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	skus := make([]string, 0, len(s.stock))
	for sku := range s.stock {
		skus = append(skus, sku)
	}
	sort.Strings(skus)
	return skus
}
`

var seedTest = `package inventory

import (
	"errors"
	"testing"
)

var reserveCases = []struct {
	name   string
	stock  int
	before []int
	n      int
	want   error
}{
	{"stock_4_held_0_order_1", 4, nil, 1, nil},
	{"stock_4_held_1_order_3", 4, []int{1}, 3, nil},
	{"stock_4_held_1_order_4", 4, []int{1}, 4, ErrInsufficientStock},
	{"stock_8_held_3_order_6", 8, []int{2, 1}, 6, ErrInsufficientStock},
	// ... one case per combination of stock, holds and order size
}

func TestReserve(t *testing.T) {
	for _, tc := range reserveCases {
		t.Run(tc.name, func(t *testing.T) {
			s := NewStore()
			s.Add("sku-7", tc.stock)
			for _, n := range tc.before {
				if err := s.Reserve("sku-7", n); err != nil {
					t.Fatalf("setup: Reserve(%d) = %v", n, err)
				}
			}
			err := s.Reserve("sku-7", tc.n)
			if !errors.Is(err, tc.want) {
				t.Errorf("Reserve(%q, %d) = %v, want %v", "sku-7", tc.n, err, tc.want)
			}
		})
	}
}
`

// seedWorkspace writes the package the agent starts from. It runs only when
// a session starts (no checkpoint yet), when no tool has run, so writing
// over an earlier attempt's files loses nothing.
func seedWorkspace(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for name, content := range map[string]string{sourceFile: seedSource, testFile: seedTest} {
		if err := writeFileAtomic(filepath.Join(dir, name), []byte(content)); err != nil {
			return err
		}
	}
	err := os.Remove(filepath.Join(dir, changelogFile))
	if errors.Is(err, fs.ErrNotExist) {
		err = nil
	}
	return err
}

// resetWorkspace removes what the example wrote into dir, and nothing else.
func resetWorkspace(dir string) error {
	for _, name := range []string{sourceFile, testFile, changelogFile, receiptsFile} {
		if err := os.Remove(filepath.Join(dir, name)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	return nil
}

// writeFileAtomic writes to a temporary file and renames it into place, so
// a crash leaves the old content or the new, never half of it.
func writeFileAtomic(path string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // fails harmlessly after the rename
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// reserveCase is one case of the simulated TestReserve: stock on hand,
// reservations made before, and the order under test.
type reserveCase struct {
	name   string
	stock  int
	before []int
	n      int
	fails  bool // whether the order must be refused
}

var reserveCases = func() []reserveCase {
	var cs []reserveCase
	for _, stock := range []int{4, 10} {
		for _, before := range [][]int{nil, {1}, {2, 1}} {
			held := 0
			for _, b := range before {
				held += b
			}
			for _, n := range []int{1, stock - held, stock - held + 1} {
				cs = append(cs, reserveCase{
					name:   fmt.Sprintf("stock_%d_held_%d_order_%d", stock, held, n),
					stock:  stock,
					before: before,
					n:      n,
					fails:  n > stock-held,
				})
			}
		}
	}
	return cs
}()

// simulateTests stands in for `go test -v ./...` on the work dir, so the
// example needs no Go toolchain at run time: it runs the TestReserve cases
// against the Reserve rule the source holds (the buggy one compares the
// order with the stock, the fixed one with what is available) and prints
// what go test would. The output is long on purpose: tool output is what
// fills an agent's context window.
func simulateTests(source string) (log string, passed bool) {
	fixed := strings.Contains(source, fixedLine)
	if !fixed && !strings.Contains(source, buggyLine) {
		return "# inventory\n./inventory.go: Reserve: cannot find the availability check\nFAIL\tinventory [build failed]\n", false
	}
	var b strings.Builder
	// Test logs leak configuration; this line carries a password, which the
	// agent masks before it reaches the model, the summarizer or the store.
	b.WriteString("=== RUN   TestMain\n    main_test.go:19: connecting to DATABASE_URL=postgres://inventory:Tr0ub4dor-3xample@db.internal:5432/inventory\n")
	b.WriteString("=== RUN   TestReserve\n")
	failures := 0
	for _, tc := range reserveCases {
		// The buggy rule refuses only orders larger than the whole stock.
		refused := tc.n > tc.stock
		if fixed {
			refused = tc.fails
		}
		fmt.Fprintf(&b, "=== RUN   TestReserve/%s\n", tc.name)
		if refused != tc.fails {
			failures++
			fmt.Fprintf(&b, "    inventory_test.go:20: Reserve(\"sku-7\", %d) = <nil>, want insufficient stock\n", tc.n)
			fmt.Fprintf(&b, "--- FAIL: TestReserve/%s (0.00s)\n", tc.name)
			continue
		}
		fmt.Fprintf(&b, "--- PASS: TestReserve/%s (0.00s)\n", tc.name)
	}
	if failures > 0 {
		fmt.Fprintf(&b, "--- FAIL: TestReserve (0.01s)\nFAIL\nFAIL\tinventory\t0.014s\n%d of %d cases failed\n", failures, len(reserveCases))
		return b.String(), false
	}
	fmt.Fprintf(&b, "--- PASS: TestReserve (0.01s)\nPASS\nok  \tinventory\t0.012s\nall %d cases passed\n", len(reserveCases))
	return b.String(), true
}
