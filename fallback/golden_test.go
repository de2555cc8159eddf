package fallback_test

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/fallback"
	"github.com/compactkit/compact/format"
	"github.com/compactkit/compact/internal/corpus"
	"github.com/compactkit/compact/internal/sample"
	"github.com/stretchr/testify/require"
)

var update = flag.Bool("update", false, "rewrite the golden handoffs in testdata/golden")

// TestGolden builds the handoff of the middle 60% of each of the
// repository's sample sessions (package internal/sample, one per format),
// as a compaction that keeps a fifth at each end would drop, and compares
// it with testdata/golden/NAME.md; go test ./fallback -update rewrites them.
func TestGolden(t *testing.T) {
	for _, f := range sample.Files(sample.DefaultSeed) {
		t.Run(f.Name, func(t *testing.T) {
			tr, err := format.Read(bytes.NewReader(f.Data), f.Name, "")
			require.NoError(t, err)
			require.Equal(t, f.Format, tr.Format, "detected format")
			n := len(tr.Messages)
			h, err := fallback.Build(tr.Messages[n/5:n-n/5], fallback.Config{})
			require.NoError(t, err)
			got := h.Message().Text() + "\n"
			golden := filepath.Join("testdata", "golden", strings.TrimSuffix(f.Name, filepath.Ext(f.Name))+".md")
			if *update {
				require.NoError(t, os.MkdirAll(filepath.Dir(golden), 0o755))
				require.NoError(t, os.WriteFile(golden, []byte(got), 0o644))
				return
			}
			want, err := os.ReadFile(golden)
			require.NoError(t, err, "run go test ./fallback/ -update to create it")
			require.Equal(t, string(want), got)
			_, err = compact.ParseHandoff(got) // a golden handoff is a well-formed one
			require.NoError(t, err)
		})
	}
}

// corpusCases are real transcripts of the shared corpus, in different
// formats. Each builds a handoff of its middle 60% of messages, as a
// compaction that keeps a fifth at each end would drop, or of all messages
// where the point is a summary at the start.
var corpusCases = []struct {
	file   string
	format format.Name
	all    bool
}{
	{"claudecode_agentcmd_full-session-two.jsonl", format.ClaudeCode, false},
	{"codex_agentcmd_rollout-2025-09-25T15-12-14-019982b8-3422-79e0-8b3b-05abaf4f3c3e.jsonl", format.Codex, false},
	{"minisweagent_deepseek_chat_test_1-100_django__django-11099.traj.json", format.MiniSWEAgent, false},
	{"sweagent_gpt4_test-repo-i1.traj", format.SWEAgent, false},
	{"sweagent_ctf_web_i_got_id_demo.traj", format.SWEAgent, false},
	{"openhands_traj_basic_gui_mode.json", format.OpenHands, false},
	{"gemini_agentcmd_session-2025-10-27T19-55-981c87cb.json", format.GeminiCLI, false},
	{"claudecode_agenthistory_session_with_compaction.synthetic.jsonl", format.ClaudeCode, true},
	{"codex_agenthistory_session_with_compaction.synthetic.jsonl", format.Codex, true},
}

// TestCorpusHandoffs builds each corpus case's handoff twice: the two must
// be the same bytes and a well-formed handoff. (The golden files are over
// the repository's own sample sessions: third-party text is not copied
// into the repository, not even as a golden file.)
func TestCorpusHandoffs(t *testing.T) {
	corpus.Dir(t, corpus.Transcripts)
	for _, tc := range corpusCases {
		t.Run(tc.file, func(t *testing.T) {
			data, err := os.ReadFile(corpus.Path(t, corpus.Transcripts, tc.file))
			require.NoError(t, err)
			tr, err := format.Read(bytes.NewReader(data), tc.file, "")
			require.NoError(t, err)
			require.Equal(t, string(tc.format), tr.Format, "detected format")
			window := tr.Messages
			if n := len(window); !tc.all {
				window = window[n/5 : n-n/5]
			}
			h, err := fallback.Build(window, fallback.Config{})
			require.NoError(t, err)
			got := h.Message().Text()
			again, err := fallback.Build(window, fallback.Config{})
			require.NoError(t, err)
			require.Equal(t, got, again.Message().Text(), "the fallback is deterministic")
			_, err = compact.ParseHandoff(got + "\n")
			require.NoError(t, err)
		})
	}
}
