package tokens_test

import (
	"fmt"
	"strings"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/tokens"
)

func ExampleForModel() {
	c, err := tokens.ForModel("gpt-4o-2024-08-06")
	if err != nil {
		panic(err)
	}
	t := compact.Transcript{Messages: []compact.Message{
		{Role: compact.RoleSystem, Parts: []compact.Part{{Type: compact.PartText, Text: "You are a helpful assistant."}}},
		{Role: compact.RoleUser, Parts: []compact.Part{{Type: compact.PartText, Text: "What's the weather like in San Francisco?"}}},
	}}
	m := c.Model()
	n := c.Transcript(t)
	fmt.Printf("%s (%s): %d tokens, %.2f%% of %d\n", m.Name, m.Encoding, n, 100*float64(n)/float64(m.Window), m.Window)
	// Output: gpt-4o (o200k_base): 25 tokens, 0.02% of 128000
}

func ExampleEncoding_Count() {
	enc, err := tokens.GetEncoding(tokens.Cl100kBase)
	if err != nil {
		panic(err)
	}
	fmt.Println(enc.Count("tiktoken is great!"), enc.Encode("tiktoken is great!"))
	// Output: 6 [83 1609 5963 374 2294 0]
}

func ExampleCalibrate() {
	const model = "claude-sonnet-4-5"
	c, _ := tokens.ForModel(model)
	prompt := strings.Repeat("Counting tokens without the provider's tokenizer. ", 40)
	estimated := c.Text(prompt)
	// The provider's usage figures said the prompt was 10% longer.
	reported := estimated * 11 / 10
	tokens.Calibrate(model, reported, estimated)
	fmt.Println(c.Model().Estimated, c.Text(prompt) == reported)
	// Output: true true
}

func ExampleModels_Load() {
	models := tokens.NewModels()
	err := models.Load(strings.NewReader(`
[[models]]
name = "my-finetune"
encoding = "o200k_base"
window = 32000
output_reserve = 4000
`), "models.toml")
	if err != nil {
		panic(err)
	}
	c, _ := tokens.ForModel("my-finetune-v2", tokens.WithModels(models))
	fmt.Println(c.Model().Name, c.Model().Window, c.Exact())
	// Output: my-finetune 32000 true
}
