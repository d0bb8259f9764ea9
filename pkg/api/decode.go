package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"

	"github.com/gin-gonic/gin"
	"github.com/parleyhq/parley/pkg/api/apiclient"
)

// decodeJSON reads the request body into dst strictly: unknown fields are
// errors because they are almost always typos that would otherwise be
// silently ignored. Errors are API errors ready to write.
func decodeJSON(c *gin.Context, dst any) error {
	body, err := io.ReadAll(c.Request.Body)
	if err != nil {
		return decodeError(err)
	}
	return decodeBytes(body, dst)
}

// decodeBytes decodes an already read body with decodeJSON's strictness.
func decodeBytes(body []byte, dst any) error {
	if err := checkBody(body); err != nil {
		return err
	}
	if err := checkObject(body); err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(dst); err != nil {
		return decodeError(err)
	}
	if dec.More() {
		return badRequest("", "request body must be a single JSON object")
	}
	return nil
}

// checkObject refuses a body that is JSON but not an object. Every route
// reads an object, and encoding/json would decode `null` into a struct as
// a no-op, taking it for `{}`; an array, string, number or boolean would
// be refused with the name of a Go type.
func checkObject(body []byte) error {
	body = bytes.TrimLeft(body, " \t\r\n")
	if len(body) > 0 && body[0] != '{' && json.Valid(body) {
		return badRequest("", "request body must be a JSON object")
	}
	return nil
}

// decodeError turns a failure to read or decode a body into an API error.
func decodeError(err error) error {
	var tooLarge *http.MaxBytesError
	var syntax *json.SyntaxError
	var typeErr *json.UnmarshalTypeError
	switch {
	case errors.As(err, &tooLarge):
		return &apiclient.Error{Code: apiclient.CodeTooLarge, Message: fmt.Sprintf("request body is larger than %d bytes", tooLarge.Limit)}
	case errors.Is(err, io.EOF):
		return badRequest("", "request body is empty; send a JSON object")
	case errors.As(err, &syntax):
		return badRequest("", fmt.Sprintf("request body is not valid JSON (at byte %d)", syntax.Offset))
	case errors.As(err, &typeErr):
		return badRequest(jsonPointer(typeErr.Field), fmt.Sprintf("must be %s, not %s", typeErr.Type, typeErr.Value))
	default:
		// DisallowUnknownFields reports `json: unknown field "x"`; it is safe to
		// show, since it only echoes the client's own input.
		return badRequest("", "request body: "+trimJSONPrefix(err.Error()))
	}
}

// badRequest is a 400 with one detail.
func badRequest(pointer, message string) *apiclient.Error {
	return &apiclient.Error{
		Code:    apiclient.CodeBadRequest,
		Message: "the request is malformed",
		Details: []apiclient.Detail{{Pointer: pointer, Message: message}},
	}
}

// invalid is a 422 for a single field.
func invalid(pointer, message string) *apiclient.Error {
	return &apiclient.Error{
		Code:    apiclient.CodeInvalid,
		Message: "the request is invalid",
		Details: []apiclient.Detail{{Pointer: pointer, Message: message}},
	}
}

// jsonPointer turns encoding/json's dotted field path into a JSON pointer.
func jsonPointer(field string) string {
	if field == "" {
		return ""
	}
	out := ""
	start := 0
	for i := 0; i <= len(field); i++ {
		if i == len(field) || field[i] == '.' {
			out += "/" + field[start:i]
			start = i + 1
		}
	}
	return out
}

func trimJSONPrefix(s string) string {
	const p = "json: "
	if len(s) >= len(p) && s[:len(p)] == p {
		return s[len(p):]
	}
	return s
}

// pathInt reads a positive integer path parameter.
func pathInt(c *gin.Context, name string) (int, error) {
	n, err := strconv.Atoi(c.Param(name))
	if err != nil || n < 1 {
		return 0, &apiclient.Error{Code: apiclient.CodeNotFound, Message: name + " not found"}
	}
	return n, nil
}
