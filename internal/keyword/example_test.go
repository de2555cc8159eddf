package keyword_test

import (
	"fmt"

	"github.com/compactkit/compact/internal/keyword"
)

func ExampleMatcher_Find() {
	m := keyword.New(keyword.Words([]string{"token", "api_key", "key"}), true)
	text := "export API_KEY=abc; TOKEN=def"
	m.Find(text, func(start, id int) {
		fmt.Println(start, m.Phrase(id).Text)
	})
	// Output:
	// 7 api_key
	// 11 key
	// 20 token
}

func ExampleMatcher_Tags() {
	const (
		failure = 1 << iota
		warning
	)
	m := keyword.New(keyword.Tagged(map[string]uint32{"error:": failure, "failed": failure, "warning:": warning}), true)
	fmt.Println(m.Tags("WARNING: deprecated") == warning)
	fmt.Println(m.Tags("build failed; error: x") == failure)
	// Output:
	// true
	// true
}
