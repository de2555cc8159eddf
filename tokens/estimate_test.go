package tokens

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

// contentClass sorts a corpus text into the classes the estimator is held
// to: prose, code, json, logs, cjk; and blob (base64 and other payloads
// without spaces), which is reported but has a looser bound.
func contentClass(s string) string {
	total, cjk := 0, 0
	for _, r := range s {
		total++
		if unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Hangul) {
			cjk++
		}
	}
	if cjk*5 >= total {
		return "cjk"
	}
	tr := strings.TrimSpace(s)
	if (strings.HasPrefix(tr, "{") || strings.HasPrefix(tr, "[")) && json.Valid([]byte(tr)) {
		return "json"
	}
	if !strings.ContainsAny(tr, " \n\t") && len(tr) >= 64 {
		return "blob"
	}
	logs, code, lines := 0, 0, 0
	for _, l := range strings.Split(s, "\n") {
		if strings.TrimSpace(l) == "" {
			continue
		}
		lines++
		if logLine.MatchString(l) {
			logs++
		}
		if codeLine.MatchString(l) {
			code++
		}
	}
	switch {
	case lines >= 3 && logs*10 >= lines*3:
		return "logs"
	case lines >= 2 && code*10 >= lines*4:
		return "code"
	}
	return "prose"
}

var (
	logLine  = regexp.MustCompile(`\d\d:\d\d:\d\d|\d{4}-\d\d-\d\d|\b(INFO|WARN|WARNING|ERROR|DEBUG|TRACE|FATAL|PASSED|FAILED|ok|FAIL)\b|^\s+at |line \d+|^\s*File "|^[-\w./]+:\d+`)
	codeLine = regexp.MustCompile(`[;{}]\s*$|^\s*(def|func|class|import|from|return|if|for|while|const|let|var|package|#include|public|private|fn)\b|[=!]=|\)\s*:?\s*$|^\s{2,}\S`)
)

type classTotals struct {
	texts, bytes   int
	exact, est, q4 float64
}

func (c classTotals) err(v float64) float64 { return 100 * (v/c.exact - 1) }

// TestEstimateClasses holds Estimate to o200k_base within ±10% per content
// class over the corpus text (and the CJK sample under testdata/text), and
// shows how far characters/4 is.
func TestEstimateClasses(t *testing.T) {
	e := mustEncoding(t, O200kBase)
	totals := map[string]*classTotals{}
	add := func(s string) {
		if len(s) < 100 {
			return
		}
		c := contentClass(s)
		tt := totals[c]
		if tt == nil {
			tt = &classTotals{}
			totals[c] = tt
		}
		tt.texts++
		tt.bytes += len(s)
		tt.exact += float64(e.Count(s))
		tt.est += float64(Estimate(s))
		tt.q4 += float64(utf8.RuneCountInString(s)) / 4
	}
	var files []corpusFile
	if raceEnabled && *corpusDir == "" {
		files = loadSmallCorpus(t) // the whole corpus takes minutes under -race
	} else {
		files = loadCorpus(t, transcriptDir(t))
	}
	for _, f := range files {
		for _, s := range f.strings {
			add(s)
		}
	}
	cjk, err := os.ReadFile(filepath.Join("testdata", "text", "cjk.txt"))
	if err != nil {
		t.Fatal(err)
	}
	for _, para := range strings.Split(string(cjk), "\n\n") {
		add(para)
	}
	names := make([]string, 0, len(totals))
	for c := range totals {
		names = append(names, c)
	}
	sort.Strings(names)
	for _, c := range names {
		tt := totals[c]
		t.Logf("%-6s %5d texts %9d bytes: o200k %8.0f, estimate %+6.1f%%, chars/4 %+6.1f%%",
			c, tt.texts, tt.bytes, tt.exact, tt.err(tt.est), tt.err(tt.q4))
		bound := 10.0
		if c == "blob" {
			bound = 25
		}
		if math.Abs(tt.err(tt.est)) > bound {
			t.Errorf("%s: estimate is %+.1f%% off o200k (bound ±%.0f%%)", c, tt.err(tt.est), bound)
		}
	}
	for _, c := range []string{"prose", "code", "json", "logs", "cjk"} {
		if totals[c] == nil {
			t.Errorf("no %s text in the corpus", c)
		}
	}
}
