package format

import (
	"fmt"
	"strings"

	"github.com/compactkit/compact/internal/jsonscan"
)

// unknownContent looks at a message record (a JSON object) that names a
// role or a message type: when it has none of the fields its reader takes
// content from, but fields besides its role, type, id and timestamp, the
// text it carries, if any, is under one of those (a newer layout of the
// agent, or another agent's file read with --format), and reading it as an
// empty message would lose it without a word. It returns those fields
// (nil when a content field is there, or nothing else is). Keys match as
// encoding/json matches them, without regard to case.
func unknownContent(raw []byte, content ...string) []string {
	members, ok := jsonscan.Members(raw)
	if !ok {
		return nil
	}
	var other []string
	for _, m := range members {
		for _, c := range content {
			if strings.EqualFold(m.Key, c) {
				return nil
			}
		}
		switch strings.ToLower(m.Key) {
		case "role", "type", "id", "timestamp":
			continue
		}
		other = append(other, m.Key)
	}
	return other
}

// noContentWhy says why a record unknownContent flagged is not read.
func noContentWhy(fields []string, content ...string) string {
	return fmt.Sprintf("a message with none of the fields this reader reads (%s), but %s", quoteList(content), quoteList(fields))
}

func quoteList(keys []string) string {
	q := make([]string, len(keys))
	for i, k := range keys {
		q[i] = fmt.Sprintf("%q", k)
	}
	return strings.Join(q, ", ")
}
