package redact_test

import (
	"errors"
	"io/fs"
	"testing"

	"github.com/compactkit/compact/redact"
)

func TestMaskedError(t *testing.T) {
	err := errors.Join(errors.New("token sk-live-123 refused"), fs.ErrPermission)
	masked := redact.MaskedError(err, "token [REDACTED] refused\npermission denied")
	if masked.Error() != "token [REDACTED] refused\npermission denied" || !errors.Is(masked, fs.ErrPermission) {
		t.Fatalf("%q, unwraps to ErrPermission: %v", masked, errors.Is(masked, fs.ErrPermission))
	}
	if redact.MaskedError(err, err.Error()) != err || redact.MaskedError(nil, "x") != nil {
		t.Fatal("an unchanged or nil error is not returned as it is")
	}
}
