package lsp

import (
	"encoding/json"
	"net/url"
	"path/filepath"
	"slices"
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

// TextEdit replaces a range of a document with a text.
type TextEdit struct {
	Range   Range  `json:"range"`
	NewText string `json:"newText"`
}

// workspaceEdit is a code action's change: by URI, or as document
// changes (which may also create, rename or delete files: those are not
// taken).
type workspaceEdit struct {
	Changes         map[string][]TextEdit `json:"changes"`
	DocumentChanges []json.RawMessage     `json:"documentChanges"`
}

type textDocumentEdit struct {
	TextDocument documentID `json:"textDocument"`
	Edits        []TextEdit `json:"edits"`
}

type codeAction struct {
	Title string          `json:"title"`
	Kind  string          `json:"kind"`
	Edit  *workspaceEdit  `json:"edit"`
	Data  json.RawMessage `json:"data,omitempty"`
}

type codeActionParams struct {
	TextDocument documentID `json:"textDocument"`
	Range        Range      `json:"range"`
	Context      struct {
		Diagnostics []Diagnostic `json:"diagnostics"`
		Only        []string     `json:"only"`
	} `json:"context"`
}

// edits are the text edits of a workspace edit, by path; false where it
// does more than edit files' text.
func (w *workspaceEdit) edits() (map[string][]TextEdit, bool) {
	out := map[string][]TextEdit{}
	for uri, es := range w.Changes {
		out[PathOf(uri)] = append(out[PathOf(uri)], es...)
	}
	for _, raw := range w.DocumentChanges {
		var kind struct {
			Kind string `json:"kind"`
		}
		if json.Unmarshal(raw, &kind) == nil && kind.Kind != "" {
			return nil, false // create, rename, delete
		}
		var d textDocumentEdit
		if json.Unmarshal(raw, &d) != nil {
			return nil, false
		}
		out[PathOf(d.TextDocument.URI)] = append(out[PathOf(d.TextDocument.URI)], d.Edits...)
	}
	return out, len(out) > 0
}

// Apply is text with edits made, their positions counted as the server
// counts them (utf16): the edits of one action never overlap.
func Apply(text string, edits []TextEdit, utf16 bool) (string, bool) {
	starts := []int{0}
	for i := 0; i < len(text); i++ {
		if text[i] == '\n' {
			starts = append(starts, i+1)
		}
	}
	offset := func(p Position) (int, bool) {
		if p.Line < 0 || p.Line > len(starts) {
			return 0, false
		}
		if p.Line == len(starts) {
			return len(text), p.Character == 0
		}
		end := len(text)
		if p.Line+1 < len(starts) {
			end = starts[p.Line+1] - 1
		}
		line := text[starts[p.Line]:end]
		return starts[p.Line] + ByteColumn(line, p.Character, utf16), true
	}
	type span struct {
		from, to int
		text     string
	}
	var spans []span
	for _, e := range edits {
		from, ok1 := offset(e.Range.Start)
		to, ok2 := offset(e.Range.End)
		if !ok1 || !ok2 || to < from {
			return "", false
		}
		spans = append(spans, span{from, to, e.NewText})
	}
	slices.SortStableFunc(spans, func(a, b span) int { return a.from - b.from })
	var b strings.Builder
	at := 0
	for _, sp := range spans {
		if sp.from < at {
			return "", false // overlapping
		}
		b.WriteString(text[at:sp.from])
		b.WriteString(sp.text)
		at = sp.to
	}
	b.WriteString(text[at:])
	return b.String(), true
}
