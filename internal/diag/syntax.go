package diag

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"go/parser"
	"go/scanner"
	"go/token"
	"io"

	"toolkit/internal/outcome"
)

// goSyntax is Go's own parser over the file: its syntax errors, each at
// its place, in microseconds. It stops at ten, as the parser does.
func goSyntax(_ context.Context, f file) ([]outcome.Diagnostic, error) {
	_, err := parser.ParseFile(token.NewFileSet(), f.path, f.content, parser.SkipObjectResolution)
	var list scanner.ErrorList
	if !errors.As(err, &list) {
		return nil, nil
	}
	out := make([]outcome.Diagnostic, 0, len(list))
	for _, e := range list {
		out = append(out, outcome.Diagnostic{Path: f.rel, Line: e.Pos.Line, Col: e.Pos.Column, Severity: Error, Message: e.Msg, Source: "go/parser"})
	}
	return out, nil
}

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
