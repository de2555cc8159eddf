package tokens

import (
	"sync"
	"testing"

	"github.com/pkoukk/tiktoken-go"
	tiktoken_loader "github.com/pkoukk/tiktoken-go-loader"
)

// The oracle is pkoukk/tiktoken-go with its offline loader, so that tests
// never download a rank file either.
var (
	oracleOnce sync.Once
	oracles    map[string]*tiktoken.Tiktoken
	oracleErr  error
)

func oracle(t testing.TB, name string) *tiktoken.Tiktoken {
	t.Helper()
	oracleOnce.Do(func() {
		tiktoken.SetBpeLoader(tiktoken_loader.NewOfflineLoader())
		oracles = map[string]*tiktoken.Tiktoken{}
		for _, n := range []string{O200kBase, Cl100kBase} {
			enc, err := tiktoken.GetEncoding(n)
			if err != nil {
				oracleErr = err
				return
			}
			oracles[n] = enc
		}
	})
	if oracleErr != nil {
		t.Fatalf("oracle: %v", oracleErr)
	}
	return oracles[name]
}

func mustEncoding(t testing.TB, name string) *Encoding {
	t.Helper()
	e, err := GetEncoding(name)
	if err != nil {
		t.Fatal(err)
	}
	return e
}
