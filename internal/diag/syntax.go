package diag

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"

	"toolkit/internal/outcome"
)

// jsonSyntax is a JSON file's first syntax error, where encoding/json
// stops: one value, then only white space.
func jsonSyntax(_ context.Context, f file) ([]outcome.Diagnostic, error) {
	dec := json.NewDecoder(bytes.NewReader(f.content))
	var v json.RawMessage
	err := dec.Decode(&v)
	var at int64
	var msg string
	var se *json.SyntaxError
	switch {
	case errors.As(err, &se):
		at, msg = se.Offset-1, se.Error() // Offset counts the byte it stopped at
	case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		at, msg = int64(len(f.content)), "unexpected end of the file"
	case err != nil:
		return nil, err
	default:
		at = dec.InputOffset()
		rest := f.content[at:]
		trimmed := bytes.TrimLeft(rest, " \t\r\n")
		if len(trimmed) == 0 {
			return nil, nil
		}
		at, msg = at+int64(len(rest)-len(trimmed)), "more after the value"
	}
	line, col := place(f.content, at)
	return []outcome.Diagnostic{{Path: f.rel, Line: line, Col: col, Severity: Error, Message: msg, Source: "json"}}, nil
}

// place is the line and column (from 1, the column in bytes) of offset
// at in content.
func place(content []byte, at int64) (int, int) {
	at = min(max(at, 0), int64(len(content)))
	head := content[:at]
	return bytes.Count(head, []byte{'\n'}) + 1, int(at) - bytes.LastIndexByte(head, '\n')
}
