package lsp

import (
	"encoding/json"
	"net/url"
	"path/filepath"
	"strings"
	"unicode/utf16"
)

// The few types of the Language Server Protocol 3.17 toolkit speaks:
// https://microsoft.github.io/language-server-protocol/specifications/lsp/3.17/specification/

// Position is a place in a document: a line from 0, and a character in
// the encoding the server chose (UTF-16 code units unless it chose
// UTF-8).
type Position struct {
	Line      int `json:"line"`
	Character int `json:"character"`
}

// Range is a span of a document.
type Range struct {
	Start Position `json:"start"`
	End   Position `json:"end"`
}

// Diagnostic is one of a server's findings in a document.
type Diagnostic struct {
	Range    Range           `json:"range"`
	Severity int             `json:"severity,omitempty"` // 1 error, 2 warning, 3 information, 4 hint
	Code     json.RawMessage `json:"code,omitempty"`     // a number or a string
	Source   string          `json:"source,omitempty"`
	Message  string          `json:"message"`
}

// CodeString is d's code as text: "" where it has none.
func (d Diagnostic) CodeString() string {
	var s string
	if json.Unmarshal(d.Code, &s) == nil {
		return s
	}
	return strings.TrimSpace(string(d.Code))
}

type textDocumentItem struct {
	URI        string `json:"uri"`
	LanguageID string `json:"languageId"`
	Version    int    `json:"version"`
	Text       string `json:"text"`
}

type versionedDocument struct {
	URI     string `json:"uri"`
	Version int    `json:"version"`
}

type documentID struct {
	URI string `json:"uri"`
}

type didOpenParams struct {
	TextDocument textDocumentItem `json:"textDocument"`
}

type didChangeParams struct {
	TextDocument   versionedDocument `json:"textDocument"`
	ContentChanges []wholeText       `json:"contentChanges"`
}

type wholeText struct {
	Text string `json:"text"`
}

type didCloseParams struct {
	TextDocument documentID `json:"textDocument"`
}

type publishParams struct {
	URI         string       `json:"uri"`
	Version     *int         `json:"version,omitempty"`
	Diagnostics []Diagnostic `json:"diagnostics"`
}

type documentDiagnosticParams struct {
	TextDocument documentID `json:"textDocument"`
}

// documentDiagnosticReport is a pull's answer: "full" with its items,
// or "unchanged" (never asked for here: no previous result id is sent).
type documentDiagnosticReport struct {
	Kind  string       `json:"kind"`
	Items []Diagnostic `json:"items"`
}

type fileEvent struct {
	URI  string `json:"uri"`
	Type int    `json:"type"` // 1 created, 2 changed, 3 deleted
}

type didChangeWatchedFilesParams struct {
	Changes []fileEvent `json:"changes"`
}

// URI is the file URI of an absolute path.
func URI(path string) string {
	return (&url.URL{Scheme: "file", Path: filepath.ToSlash(path)}).String()
}

// PathOf is the path of a file URI; "" for another.
func PathOf(uri string) string {
	u, err := url.Parse(uri)
	if err != nil || u.Scheme != "file" {
		return ""
	}
	return filepath.FromSlash(u.Path)
}

// ByteColumn is the byte offset in line of character, counted in UTF-16
// code units (inUTF16) or bytes: what toolkit's columns count.
func ByteColumn(line string, character int, inUTF16 bool) int {
	if character <= 0 {
		return 0
	}
	if !inUTF16 {
		return min(character, len(line))
	}
	units := 0
	for i, r := range line {
		if units >= character {
			return i
		}
		units += utf16.RuneLen(r)
	}
	return len(line)
}
