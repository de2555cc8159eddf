package redact

// MaskedError returns err with its message replaced by msg, the message
// with its secrets masked, still unwrapping to err, so that errors.Is and
// errors.As see through it while printing it shows no secret. It returns
// err itself when msg is its message, and nil for a nil err.
func MaskedError(err error, msg string) error {
	if err == nil || msg == err.Error() {
		return err
	}
	return &maskedError{msg: msg, err: err}
}

type maskedError struct {
	msg string
	err error
}

func (e *maskedError) Error() string { return e.msg }
func (e *maskedError) Unwrap() error { return e.err }
