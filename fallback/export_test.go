package fallback

import "github.com/compactkit/compact"

// BuildUnredacted is Build without the Redactor: extraction and bounding
// alone, so benchmarks can tell their cost from redaction's.
func BuildUnredacted(window []compact.Message, cfg Config) (compact.Handoff, error) {
	lim, err := cfg.limits()
	if err != nil {
		return compact.Handoff{}, err
	}
	return extract(newMessages(window, nil), func(s string) string { return s }, cfg, lim)
}
