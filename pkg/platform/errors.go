package platform

import (
	"errors"
	"fmt"

	"github.com/parleyhq/parley/pkg/store"
)

// Code classifies an Error. The API maps each code to one HTTP status.
type Code string

// Error codes.
const (
	CodeInvalid      Code = "invalid"       // the request is wrong; Details say where
	CodeNotFound     Code = "not_found"     // no such resource, or another tenant's
	CodeConflict     Code = "conflict"      // a unique name is taken, or a race was lost
	CodeDialogClosed Code = "dialog_closed" // the dialog is closed and takes no more messages
	CodeUnauthorized Code = "unauthorized"  // no valid credentials
	CodeForbidden    Code = "forbidden"     // valid credentials, not allowed
	CodeRateLimited  Code = "rate_limited"  // slow down
	CodeInternal     Code = "internal"      // our fault; logged, never detailed
	CodeUnavailable  Code = "unavailable"   // a part the request needs does not answer; retry
	CodeLinkExpired  Code = "link_expired"  // a signed link was valid once; ask for a new one
)

// Detail points at one wrong value of a request or config.
type Detail struct {
	// Pointer is an RFC 6901 JSON pointer into the request body (or into the
	// config for config problems).
	Pointer string
	Message string
}

// Error is the one error type the platform returns. Message is safe to show
// to the caller; the cause (kept for errors.Is/As and logs) is not.
type Error struct {
	Code    Code
	Message string
	Details []Detail
	cause   error
}

// Error returns the code and the caller-safe message; never the cause.
func (e *Error) Error() string { return string(e.Code) + ": " + e.Message }

// Unwrap exposes the cause to errors.Is/As.
func (e *Error) Unwrap() error { return e.cause }

// ErrorCode returns err's code, CodeInternal for errors that are not an
// *Error, and "" for nil.
func ErrorCode(err error) Code {
	if err == nil {
		return ""
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return CodeInternal
}

// Errorf returns an Error with code and a caller-safe message.
func Errorf(code Code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// Invalid returns an invalid Error with details, saying what is wrong
// when there is one.
func Invalid(details ...Detail) *Error {
	msg := "the request is invalid"
	if len(details) == 1 {
		msg = details[0].Message
	}
	return &Error{Code: CodeInvalid, Message: msg, Details: details}
}

// NotFound says that what does not exist (or is another tenant's).
func NotFound(what string) *Error { return Errorf(CodeNotFound, "%s not found", what) }

func unauthorized(msg string) *Error { return &Error{Code: CodeUnauthorized, Message: msg} }

// Wrap returns an Error with code and a caller-safe message that keeps
// cause for errors.Is/As and logs, never for the caller.
func Wrap(cause error, code Code, format string, args ...any) *Error {
	e := Errorf(code, format, args...)
	e.cause = cause
	return e
}

// Internal returns an internal Error that says nothing about cause, so
// database or driver text never reaches callers. Log cause where it
// happened.
func Internal(cause error) *Error {
	return &Error{Code: CodeInternal, Message: "internal error", cause: cause}
}

// StoreError maps a store error a caller can act on: ErrNotFound becomes
// not_found for what, ErrConflict a conflict saying conflictMsg (when not
// empty), ErrInvalidCursor invalid at /cursor. It returns nil for any
// other error, which is internal.
func StoreError(err error, what, conflictMsg string) *Error {
	switch {
	case errors.Is(err, store.ErrNotFound):
		return Wrap(err, CodeNotFound, "%s not found", what)
	case errors.Is(err, store.ErrConflict) && conflictMsg != "":
		return &Error{Code: CodeConflict, Message: conflictMsg, cause: err}
	case errors.Is(err, store.ErrInvalidCursor):
		return &Error{Code: CodeInvalid, Message: "invalid cursor", cause: err,
			Details: []Detail{{Pointer: "/cursor", Message: "use the next_cursor of a previous page"}}}
	}
	return nil
}
