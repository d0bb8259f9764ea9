package platform

import (
	"errors"
	"fmt"
)

// Code classifies an Error. The API maps each code to one HTTP status.
type Code string

// Error codes.
const (
	CodeInvalid      Code = "invalid"      // the request is wrong; Details say where
	CodeNotFound     Code = "not_found"    // no such resource, or another tenant's
	CodeConflict     Code = "conflict"     // a unique name is taken, or a race was lost
	CodeUnauthorized Code = "unauthorized" // no valid credentials
	CodeForbidden    Code = "forbidden"    // valid credentials, not allowed
	CodeRateLimited  Code = "rate_limited" // slow down
	CodeInternal     Code = "internal"     // our fault; logged, never detailed
)

// Detail points at one wrong value of a request or config.
type Detail struct {
	// Pointer is an RFC 6901 JSON pointer into the request body (or into the
	// config for config problems).
	Pointer string `json:"pointer"`
	Message string `json:"message"`
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

func errorf(code Code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

func invalid(details ...Detail) *Error {
	msg := "the request is invalid"
	if len(details) == 1 {
		msg = details[0].Message
	}
	return &Error{Code: CodeInvalid, Message: msg, Details: details}
}

func notFound(what string) *Error { return errorf(CodeNotFound, "%s not found", what) }

func unauthorized(msg string) *Error { return &Error{Code: CodeUnauthorized, Message: msg} }
