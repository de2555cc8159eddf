package compact

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"strings"
)

// Handoffs are signed. The end marker of a handoff that Handoff.Message or
// SignedMessage writes carries a MAC of its body ("<<<compact:handoff-end
// mac=…>>>"), so that a compactor folds, as its own earlier summary, only
// a handoff compact wrote and nobody changed since: never text that merely
// looks like one (a fetched page, a pasted transcript, a tool's output),
// whose Goal, Constraints and Decisions would otherwise be carried forward
// by every later compaction as if they were the session's own.

// DefaultHandoffKey signs and verifies handoffs when no key is configured
// (a nil key). It is public, so it proves only that a handoff was written
// by compact and not edited since, and keeps the shape rule (a user message
// whose whole text is the handoff) as the defence against text from a tool
// or a web page. A deployment where someone could write whole user
// messages that compact must not trust sets a secret key of its own
// (compactor.Config.HandoffKey, the CLI's COMPACT_HANDOFF_KEY).
const DefaultHandoffKey = "github.com/compactkit/compact handoff key v1 (public)"

const (
	// handoffEndOpen starts every end marker, signed or not.
	handoffEndOpen = "<<<compact:handoff-end"
	handoffMACAttr = " mac="
	handoffMACHex  = 32 // hex digits: 128 bits of HMAC-SHA256
	markerClose    = ">>>"
)

// SignedMessage is Message signed under key (nil: DefaultHandoffKey): the
// end marker carries an HMAC-SHA256 of the handoff's body, which
// VerifyHandoff checks.
func (h Handoff) SignedMessage(key []byte) Message {
	body := "\n" + HandoffPreamble + "\n\n" + h.Render() + "\n"
	text := HandoffBegin + body + handoffEndOpen + handoffMACAttr + handoffMAC(key, body) + markerClose
	return Message{Role: RoleUser, Summary: true, Parts: []Part{{Type: PartText, Text: text}}}
}

// handoffMAC is the MAC of a handoff's body under key. The body is taken
// without surrounding space and with CRLF line ends as LF, which a format
// or an editor may change without changing what the handoff says.
func handoffMAC(key []byte, body string) string {
	if key == nil {
		key = []byte(DefaultHandoffKey)
	}
	m := hmac.New(sha256.New, key)
	m.Write([]byte("compact handoff v1\n"))
	m.Write([]byte(strings.TrimSpace(strings.ReplaceAll(body, "\r\n", "\n"))))
	return hex.EncodeToString(m.Sum(nil)[:handoffMACHex/2])
}

// splitHandoff returns the body and MAC ("" when unsigned) of s when the
// whole of s, surrounding space aside, is one handoff: HandoffBegin, a
// body holding the preamble and no other marker, and an end marker that
// closes the text.
func splitHandoff(s string) (body, mac string, ok bool) {
	rest, found := strings.CutPrefix(strings.TrimSpace(s), HandoffBegin)
	if !found {
		return "", "", false
	}
	i := strings.LastIndex(rest, handoffEndOpen)
	if i < 0 {
		return "", "", false
	}
	body, end := rest[:i], rest[i:]
	if end != HandoffEnd {
		attr, signed := strings.CutPrefix(end, handoffEndOpen+handoffMACAttr)
		var closed bool
		mac, closed = strings.CutSuffix(attr, markerClose)
		if !signed || !closed || len(mac) != handoffMACHex || !isLowerHex(mac) {
			return "", "", false
		}
	}
	if !strings.Contains(body, HandoffPreamble) || strings.Contains(body, HandoffBegin) || strings.Contains(body, handoffEndOpen) {
		return "", "", false
	}
	return body, mac, true
}

func isLowerHex(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// IsHandoffText reports whether the whole of s (surrounding space aside) is
// one handoff as Handoff.Message writes it: HandoffBegin, the preamble, the
// sections and an end marker. Text that merely opens with the marker is
// not one. It does not check the signature: VerifyHandoff does.
func IsHandoffText(s string) bool {
	_, _, ok := splitHandoff(s)
	return ok
}

// IsHandoffMessage reports whether m has the shape of a handoff: a user
// message of text alone (no tool call, tool result, image or reasoning)
// whose whole text is one handoff (IsHandoffText). A tool's output never
// is one, whatever it says. It does not check the signature.
func IsHandoffMessage(m *Message) bool {
	if m.Role != RoleUser || len(m.Parts) == 0 || len(m.ToolCallIDs) > 0 {
		return false
	}
	for _, p := range m.Parts {
		if p.Type != PartText {
			return false
		}
	}
	return IsHandoffText(m.Text())
}

// VerifyHandoff reports whether m is a handoff signed under key (nil:
// DefaultHandoffKey) and unchanged since: IsHandoffMessage, and the MAC in
// its end marker matches its body. An unsigned handoff, one edited after it
// was signed and one signed under another key do not verify.
func VerifyHandoff(m *Message, key []byte) bool {
	if !IsHandoffMessage(m) {
		return false
	}
	body, mac, _ := splitHandoff(m.Text())
	return mac != "" && hmac.Equal([]byte(mac), []byte(handoffMAC(key, body)))
}

// claimsHandoff reports whether s opens with HandoffBegin: text that
// presents itself as a handoff, signed, forged or damaged.
func claimsHandoff(s string) bool {
	return strings.HasPrefix(strings.TrimLeft(s, " \t\r\n"), HandoffBegin)
}

// ClaimsHandoff reports whether m presents itself as a compact handoff:
// its text opens with HandoffBegin. A compactor folds such a message only
// when VerifyHandoff accepts it; otherwise it is ordinary text, summarized
// like any other message.
func ClaimsHandoff(m *Message) bool {
	// The first text part that holds anything opens the message's text
	// (Text joins the parts): no copy of a long message is made.
	for _, p := range m.Parts {
		if p.Type == PartText && strings.TrimLeft(p.Text, " \t\r\n") != "" {
			return claimsHandoff(p.Text)
		}
	}
	return false
}

// stripEndMarkers removes every end marker, signed or not, from s.
func stripEndMarkers(s string) string {
	for {
		i := strings.Index(s, handoffEndOpen)
		if i < 0 {
			return s
		}
		j := i + len(handoffEndOpen)
		// A well-formed marker closes within its MAC's length.
		if k := strings.Index(s[j:], markerClose); k >= 0 && k <= len(handoffMACAttr)+handoffMACHex {
			j += k + len(markerClose)
		}
		s = s[:i] + s[j:]
	}
}
