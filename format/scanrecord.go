package format

import (
	"encoding/json"
	"strings"

	"github.com/compactkit/compact/internal/jsonscan"
)

// recordField is one field of a record that scanRecord reads: its key as
// the struct's json tag spells it, and where its value goes (the one
// pointer that is set says how it is read).
type recordField struct {
	key  string
	str  *string          // a string; null leaves it as it is
	strp **string         // a string, or null for nil
	raw  *json.RawMessage // any value, as it is in the record
	flag *bool            // true or false; null leaves it as it is
}

// scanRecord fills fields from raw, a valid JSON object, as json.Unmarshal
// fills a struct with those fields, reading it in place (strings without
// escapes share raw's bytes) instead of through reflection and a second
// check of raw's validity. It returns false, the fields partly filled, on
// anything where the two could differ or the decoder would report
// something: raw not an object, a key given twice or in another case than
// the field's, a value of another type than the field's. The caller then
// decodes raw into fresh values, which says what is wrong and where.
//
// raw must be valid JSON: records of a document or line checked with
// jsonscan.Valid, or values of a record the decoder accepted.
func scanRecord(raw []byte, fields []recordField) bool {
	members, ok := jsonscan.Members(raw)
	if !ok || len(fields) > 64 {
		return false
	}
	var seen uint64
	for _, m := range members {
		k := -1
		for i := range fields {
			if fields[i].key == m.Key {
				k = i
				break
			}
		}
		if k < 0 {
			for i := range fields {
				if strings.EqualFold(fields[i].key, m.Key) {
					return false // the decoder would fill that field with it
				}
			}
			continue
		}
		if seen&(1<<k) != 0 {
			return false
		}
		seen |= 1 << k
		v := raw[m.Value.Start:m.Value.End:m.Value.End]
		switch f := &fields[k]; {
		case f.raw != nil:
			*f.raw = v
		case f.str != nil:
			ok = scanString(v, f.str)
		case f.strp != nil:
			ok = scanStringPtr(v, f.strp)
		case f.flag != nil:
			switch string(v) {
			case "true":
				*f.flag = true
			case "false":
				*f.flag = false
			case "null":
			default:
				ok = false
			}
		}
		if !ok {
			return false
		}
	}
	return true
}
