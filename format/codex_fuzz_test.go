package format

import "testing"

func FuzzCodex(f *testing.F) {
	seedAgent(f, "codex_",
		cxSessionMetaLine+"\n"+cxUser("01", "hi")+"\n"+cxLine("02", "response_item", `{"type":"reasoning","summary":[]}`)+"\n"+
			cxLine("02", "response_item", `{"type":"local_shell_call","call_id":"l","status":"completed","action":{"type":"exec","command":["ls"]}}`)+"\n"+
			cxLine("03", "response_item", `{"type":"function_call_output","call_id":"l","output":{"content":"x","success":true}}`)+"\n",
		cxLine("01", "compacted", `{"message":"m","replacement_history":[{"type":"message","role":"user","content":[{"type":"input_text","text":"a"}]},{"type":"ghost_snapshot"}]}`)+"\n"+cxUser("02", "b"),
		cxLine("01", "compacted", `{"message":"legacy"}`),
		"{\"type\":\"response_item\",\"payload\":{\"type\":\"message\"", "")
	f.Fuzz(func(t *testing.T, data []byte) { fuzzAgent(t, data, Codex) })
}
