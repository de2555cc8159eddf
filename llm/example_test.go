package llm_test

import (
	"fmt"
	"log"

	"github.com/compactkit/compact/compactor"
	"github.com/compactkit/compact/llm"
)

// The summarizer talks to any OpenAI-compatible API. It never reads the
// environment: pass the key and base URL in, then hand it to the
// compactor, which falls back on the deterministic handoff when it fails
// (unless AbortOnSummaryFailure is set).
func ExampleNew() {
	cfg := llm.DefaultConfig("") // e.g. os.Getenv("OPENAI_API_KEY")
	cfg.BaseURL = "http://localhost:11434/v1"
	cfg.Model = "llama3.1"
	cfg.Retries = 2
	s, err := llm.New(cfg)
	if err != nil {
		log.Fatal(err)
	}
	ccfg := compactor.DefaultConfig()
	ccfg.Summarizer = s
	ccfg.Focus = "the database migration"
	c, err := compactor.New(ccfg)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(c.Config().Strategy, s.Model(), s.Config().Timeout)
	// Output: auto llama3.1 2m0s
}
