package checkpoint

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Errors of resume tokens, one per reason a token is refused.
var (
	// ErrTokenInvalid: the token is malformed or its signature does not
	// verify (forged, altered, or signed with another key).
	ErrTokenInvalid = errors.New("resume token invalid")
	// ErrTokenExpired: the token's time is up.
	ErrTokenExpired = errors.New("resume token expired")
	// ErrTokenSession: the token was issued for another session.
	ErrTokenSession = errors.New("resume token is for another session")
	// ErrTokenUser: the token was issued to another user.
	ErrTokenUser = errors.New("resume token is for another user")
	// ErrTokenParams: the pending action's params changed since the token
	// was issued; the approval was for something else.
	ErrTokenParams = errors.New("resume token is for other params")
	// ErrTokenUsed: the token already approved an action. A token approves
	// one pending action, once.
	ErrTokenUsed = errors.New("resume token already used")
)

// Tokens issues and verifies resume tokens: HMAC-SHA256-signed approvals
// bound to a session, a user and the params hash of the pending action,
// valid until they expire.
type Tokens struct {
	// Key signs tokens; at least 16 bytes.
	Key []byte
	// Now returns the current time; nil means time.Now.
	Now func() time.Time
}

type tokenClaims struct {
	Version int    `json:"v"`
	Session string `json:"s"`
	User    string `json:"u"`
	Params  string `json:"p"`
	Expires int64  `json:"e"` // unix seconds
	Nonce   string `json:"n"`
}

func (t Tokens) now() time.Time {
	if t.Now != nil {
		return t.Now()
	}
	return time.Now()
}

func (t Tokens) sign(payload []byte) []byte {
	m := hmac.New(sha256.New, t.Key)
	m.Write([]byte("compact-resume-token-v1\x00"))
	m.Write(payload)
	return m.Sum(nil)
}

// Issue returns a token approving the pending action with the given params
// hash in session, for user, valid for ttl.
func (t Tokens) Issue(session, user, paramsHash string, ttl time.Duration) (string, error) {
	if len(t.Key) < 16 {
		return "", fmt.Errorf("resume token: key of %d bytes, want at least 16", len(t.Key))
	}
	if session == "" || user == "" || paramsHash == "" || ttl <= 0 {
		return "", fmt.Errorf("resume token: session, user, params hash and a positive ttl are required")
	}
	var nonce [8]byte
	rand.Read(nonce[:])
	payload, err := json.Marshal(tokenClaims{Version: 1, Session: session, User: user, Params: paramsHash,
		Expires: t.now().Add(ttl).Unix(), Nonce: hex.EncodeToString(nonce[:])})
	if err != nil {
		return "", fmt.Errorf("resume token: %w", err)
	}
	enc := base64.RawURLEncoding
	return enc.EncodeToString(payload) + "." + enc.EncodeToString(t.sign(payload)), nil
}

// Verify checks that token approves the action with paramsHash in session
// for user, now. The signature is checked first, so nothing in a forged
// token is believed.
func (t Tokens) Verify(token, session, user, paramsHash string) error {
	_, err := t.verify(token, session, user, paramsHash)
	return err
}

func (t Tokens) claims(token string) (tokenClaims, error) {
	var c tokenClaims
	if len(t.Key) < 16 {
		return c, fmt.Errorf("resume token: key of %d bytes, want at least 16", len(t.Key))
	}
	p, s, ok := strings.Cut(token, ".")
	enc := base64.RawURLEncoding.Strict() // one spelling per token
	payload, perr := enc.DecodeString(p)
	sig, serr := enc.DecodeString(s)
	if !ok || perr != nil || serr != nil {
		return c, fmt.Errorf("%w: malformed", ErrTokenInvalid)
	}
	if !hmac.Equal(sig, t.sign(payload)) {
		return c, fmt.Errorf("%w: signature does not verify", ErrTokenInvalid)
	}
	if err := json.Unmarshal(payload, &c); err != nil || c.Version != 1 || c.Nonce == "" {
		return c, fmt.Errorf("%w: unreadable claims", ErrTokenInvalid)
	}
	return c, nil
}

func (t Tokens) verify(token, session, user, paramsHash string) (tokenClaims, error) {
	c, err := t.claims(token)
	if err != nil {
		return c, err
	}
	if exp := time.Unix(c.Expires, 0); !t.now().Before(exp) {
		return c, fmt.Errorf("%w at %s", ErrTokenExpired, exp.UTC().Format(time.RFC3339))
	}
	if !hmac.Equal([]byte(c.Session), []byte(session)) {
		return c, fmt.Errorf("%w (%s)", ErrTokenSession, c.Session)
	}
	if !hmac.Equal([]byte(c.User), []byte(user)) {
		return c, ErrTokenUser
	}
	if !hmac.Equal([]byte(c.Params), []byte(paramsHash)) {
		return c, ErrTokenParams
	}
	return c, nil
}
