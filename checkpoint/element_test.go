package checkpoint

import (
	"reflect"
	"testing"

	"github.com/compactkit/compact"
)

// The same* functions decide that an element is unchanged without
// encoding it: a field they do not compare would be saved stale. This
// test fails when a type gains a field, until the function compares it
// and the count here is raised.
func TestSameCoversEveryField(t *testing.T) {
	for typ, want := range map[reflect.Type]int{
		reflect.TypeOf(compact.Message{}):    8, // sameMessage
		reflect.TypeOf(compact.Part{}):       8,
		reflect.TypeOf(compact.ToolCall{}):   5,
		reflect.TypeOf(compact.Image{}):      3, // compared with ==
		reflect.TypeOf(compact.Source{}):     4,
		reflect.TypeOf(compact.Record{}):     5, // sameRecord
		reflect.TypeOf(compact.ToolDef{}):    3, // sameTranscriptShell
		reflect.TypeOf(compact.Transcript{}): 5,
		reflect.TypeOf(Step{}):               8,  // sameStep
		reflect.TypeOf(SideEffect{}):         4,  // sameEffect
		reflect.TypeOf(compact.Compaction{}): 13, // sameCompaction
		reflect.TypeOf(Checkpoint{}):         23, // identity, headElem, lists, State
	} {
		if got := typ.NumField(); got != want {
			t.Errorf("%s has %d fields, the comparison knows %d: compare the new field in element.go and plan (logsave.go)", typ, got, want)
		}
	}
}
