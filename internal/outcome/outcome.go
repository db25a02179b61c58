// Package outcome is the one result every toolkit applet returns, and the one
// place that turns it into output and an exit status.
//
// An Outcome is one of three kinds:
//
//	Done        the tool did its job        text on stdout                 exit 0
//	ToolError   the tool could not do it    "toolkit APPLET: MSG" on stderr exit 1
//	UsageError  the input itself is wrong   the same, with the usage        exit 2
//
// In JSON mode (--json, TOOLKIT_OUTPUT=json) all three are one JSON object on
// stdout: {"ok":true,"text":…,<details>}, {"ok":false,"error":…} and
// {"ok":false,"error":…,"usage":true}. In stream mode the same object is carried
// by the final {"type":"end","outcome":…} event.
package outcome

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/go-json-experiment/json/jsontext"
)

// Kind says which of the three results an Outcome is.
type Kind int

const (
	Done Kind = iota
	ToolError
	UsageError
)

// Exit statuses of toolkit itself.
const (
	StatusDone  = 0
	StatusTool  = 1
	StatusUsage = 2
)

// Outcome is what an applet returns.
type Outcome struct {
	Kind Kind
	// Text is the whole text of a Done outcome.
	Text string
	// Epilogue is the end of Text that a live view has not shown yet (shell's
	// bracketed end lines). With Streamed set, text mode prints only this.
	Epilogue string
	// Streamed says the body of Text already went out as it came.
	Streamed bool
	// Message says what went wrong, for the two error kinds.
	Message string
	// Usage is the applet's usage line, shown with a usage error in text mode.
	Usage string
	// Details are the facts a host wants without parsing text; a struct whose
	// JSON object is merged into the --json object.
	Details any
	// Status, when not nil, replaces the exit status of a Done outcome
	// (shell --status: exit as the command did).
	Status *int
	// Media, when not nil, is what a model is to see beside the text: a
	// picture or a document. --json carries it as {media_type, data}; MCP
	// and toolkit call as the block each protocol has for it.
	Media *Media
	// Command, for a call that ran a command (shell), is how it ended,
	// typed for the presenters that speak of it (toolkit call's
	// shell_call), which would otherwise read it back from the details.
	Command *CommandEnd
	// Wrote are the files the call changed, as write, edit and patch know
	// them; Changes what history made of the call (--json's "changes").
	Wrote   []Wrote
	Changes *Changes
	// Diagnostics are what checking the files the call changed found
	// (--json's "diagnostics").
	Diagnostics *Diagnostics
}

// CommandEnd is how a command a call ran ended.
type CommandEnd struct {
	Status   int           // as a shell gives it: its code, 128+N for signal N
	TimedOut bool          // toolkit stopped it for its time or its silence
	Running  bool          // it has not ended: it goes on as a job
	Duration time.Duration // how long the call ran it
}

// Media is a picture or a document, its bytes as they are sent.
type Media struct {
	Type string // "image/png", "image/jpeg", "image/gif", "image/webp", "application/pdf"
	Name string // the file's base name, for the APIs that take one
	Data []byte
}

// IsImage says whether m is a picture (else a document).
func (m *Media) IsImage() bool { return strings.HasPrefix(m.Type, "image/") }

func (m *Media) noun() string {
	if m.IsImage() {
		return "picture"
	}
	return "document"
}

// mediaJSON is Media in --json.
type mediaJSON struct {
	MediaType string `json:"media_type"`
	Data      []byte `json:"data"` // base64
}

// Success returns a Done outcome.
func Success(text string, details any) Outcome {
	return Outcome{Kind: Done, Text: text, Details: details}
}

// Failure returns a tool error: the tool could not do what was asked.
func Failure(format string, args ...any) Outcome {
	return Outcome{Kind: ToolError, Message: fmt.Sprintf(format, args...)}
}

// Misuse returns a usage error: the input itself is wrong.
func Misuse(format string, args ...any) Outcome {
	return Outcome{Kind: UsageError, Message: fmt.Sprintf(format, args...)}
}

// AtMost is a call's value under a ceiling: asked, or most when asked is
// more (with a note that says so: "[timeout_secs 900 is more than 600; used
// 600]"), or dflt when the call gives none. A most of 0 is no ceiling; whose
// names the ceiling's owner in the note ("the host's ", or "").
func AtMost(field string, asked *int, dflt, most int, whose string, notes *[]string) int {
	switch {
	case asked == nil:
		return dflt
	case most > 0 && *asked > most:
		*notes = append(*notes, fmt.Sprintf("[%s %d is more than %s%d; used %d]", field, *asked, whose, most, most))
		return most
	}
	return *asked
}

// WithLines puts bracketed lines into a done outcome's text, before its
// last line (shell's [exit N], which stays last), and into its epilogue.
func (o Outcome) WithLines(lines []string) Outcome {
	if len(lines) == 0 || o.Kind != Done {
		return o
	}
	add := strings.Join(lines, "\n") + "\n"
	o.Text = beforeLast(o.Text, add)
	if o.Epilogue != "" {
		o.Epilogue = beforeLast(o.Epilogue, add)
	}
	return o
}

// beforeLast puts add before the last line of s.
func beforeLast(s, add string) string {
	body := strings.TrimSuffix(s, "\n")
	i := strings.LastIndexByte(body, '\n') + 1
	return s[:i] + add + s[i:]
}

// ExitStatus is the exit status toolkit ends with for o.
func (o Outcome) ExitStatus() int {
	switch o.Kind {
	case ToolError:
		return StatusTool
	case UsageError:
		return StatusUsage
	}
	if o.Status != nil {
		return *o.Status
	}
	return StatusDone
}

// ModelText is what a model is shown of o: its text, or its error without
// the command line's usage, in valid UTF-8 (a byte that is not, from a file
// edit showed in its diff, is U+FFFD), as the APIs' JSON must be.
func (o Outcome) ModelText() string {
	if o.Kind != Done {
		return strings.ToValidUTF8(o.Message, "\uFFFD")
	}
	return strings.ToValidUTF8(o.Text, "\uFFFD")
}

// Mode is how an Outcome is printed.
type Mode int

const (
	TextMode Mode = iota
	JSONMode
	StreamMode
)

// Print writes o for applet in the given mode and returns toolkit's exit status.
func (o Outcome) Print(stdout, stderr io.Writer, applet string, mode Mode) int {
	switch mode {
	case JSONMode:
		b := o.JSON()
		_, _ = stdout.Write(append(b, '\n'))
	case StreamMode:
		var buf bytes.Buffer
		buf.WriteString(`{"type":"end","outcome":`)
		buf.Write(o.JSON())
		buf.WriteString("}\n")
		_, _ = stdout.Write(buf.Bytes())
	default:
		prefix := "toolkit"
		if applet != "" {
			prefix += " " + applet
		}
		switch o.Kind {
		case Done:
			text := o.Text
			if o.Streamed {
				text = o.Epilogue
			}
			_, _ = io.WriteString(stdout, text)
			if o.Media != nil && !o.Streamed {
				_, _ = io.WriteString(stdout, "[the "+o.Media.noun()+" itself comes through --json, toolkit mcp or toolkit call]\n")
			}
		default:
			// A usage error is one line, so that a host logging stderr gets
			// the whole story in it (a tool error may show lines of a file).
			msg := o.Message
			if o.Kind == UsageError {
				msg = strings.ReplaceAll(strings.TrimSpace(msg), "\n", "; ")
			}
			if o.Usage != "" {
				msg += "; usage: " + o.Usage
			}
			fmt.Fprintf(stderr, "%s: %s\n", prefix, msg)
		}
	}
	return o.ExitStatus()
}

// JSON is the --json object of o: ok, then text or error, then the details.
func (o Outcome) JSON() []byte {
	var buf bytes.Buffer
	if o.Kind == Done {
		buf.WriteString(`{"ok":true,"text":`)
		buf.Write(Marshal(o.Text))
	} else {
		buf.WriteString(`{"ok":false,"error":`)
		buf.Write(Marshal(o.Message))
		if o.Kind == UsageError {
			buf.WriteString(`,"usage":true`)
		}
	}
	if o.Media != nil {
		buf.WriteString(`,"media":`)
		buf.Write(Marshal(mediaJSON{MediaType: o.Media.Type, Data: o.Media.Data}))
	}
	if o.Details != nil {
		if d := Marshal(o.Details); len(d) > 2 && d[0] == '{' {
			buf.WriteByte(',')
			buf.Write(d[1 : len(d)-1])
		}
	}
	if o.Changes != nil {
		buf.WriteString(`,"changes":`)
		buf.Write(Marshal(o.Changes))
	}
	if o.Diagnostics != nil {
		buf.WriteString(`,"diagnostics":`)
		buf.Write(Marshal(o.Diagnostics))
	}
	buf.WriteByte('}')
	return buf.Bytes()
}

// Marshal is v as JSON, with <, > and & left as they are.
func Marshal(v any) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		// Details are plain structs of strings and numbers; this cannot happen
		// short of a programming error, and even then the output stays JSON.
		return []byte(`null`)
	}
	return bytes.TrimRight(buf.Bytes(), "\n")
}

// Parse reads an Outcome back from its --json object (JSON), as toolkit
// mcp reads the answer of a call it ran as a child toolkit: ok, text or
// error, usage and media, and the details, the object's other members in
// their order, kept as they were written.
func Parse(b []byte) (Outcome, error) {
	dec := jsontext.NewDecoder(bytes.NewReader(b))
	if tok, err := dec.ReadToken(); err != nil || tok.Kind() != '{' {
		return Outcome{}, fmt.Errorf("not a JSON object")
	}
	var o Outcome
	var ok, usage bool
	details := []byte{'{'}
	for dec.PeekKind() != '}' {
		tok, err := dec.ReadToken()
		if err != nil {
			return Outcome{}, err
		}
		name := tok.String() // before the next read voids tok
		val, err := dec.ReadValue()
		if err != nil {
			return Outcome{}, err
		}
		switch name {
		case "ok":
			err = json.Unmarshal(val, &ok)
		case "text":
			err = json.Unmarshal(val, &o.Text)
		case "error":
			err = json.Unmarshal(val, &o.Message)
		case "usage":
			err = json.Unmarshal(val, &usage)
		case "media":
			var m mediaJSON
			if err = json.Unmarshal(val, &m); err == nil {
				o.Media = &Media{Type: m.MediaType, Data: m.Data}
			}
		case "changes":
			o.Changes = new(Changes)
			err = json.Unmarshal(val, o.Changes)
		case "diagnostics":
			o.Diagnostics = new(Diagnostics)
			err = json.Unmarshal(val, o.Diagnostics)
		default:
			if len(details) > 1 {
				details = append(details, ',')
			}
			details = append(append(append(details, Marshal(name)...), ':'), val...)
		}
		if err != nil {
			return Outcome{}, fmt.Errorf("%s: %w", name, err)
		}
	}
	switch {
	case ok:
		o.Kind = Done
	case usage:
		o.Kind = UsageError
	default:
		o.Kind = ToolError
	}
	if len(details) > 1 {
		o.Details = json.RawMessage(append(details, '}'))
	}
	return o, nil
}

// Changes are what a call changed under the tracked tree, as history found
// them (the JSON field "changes"; the text says them in bracketed lines).
type Changes struct {
	Call  int64         `json:"call"`
	Files []ChangedFile `json:"files"`
	// During names the other calls on the tree whose time overlapped this
	// one's: the changes happened during all of them.
	During []int64 `json:"during,omitempty"`
	// Outside are the changes made between calls (a job, the user, another
	// process), found before this call ran; never given to it.
	Outside *Outside `json:"outside,omitempty"`
	// Git says a moved HEAD ("HEAD main 1a2b3c → 4d5e6f"): .git is never
	// tracked.
	Git string `json:"git,omitempty"`
	// Interrupted is set on what a later call found of a call killed before
	// its end.
	Interrupted bool `json:"interrupted,omitempty"`
	// Also are the calls of the other trees a call wrote in (a patch across
	// two repositories): each tree records its own files, as a call of its
	// own.
	Also []TreeCall `json:"also,omitempty"`
}

// Said says whether there is anything to say: files changed by the call
// or outside it, a moved HEAD.
func (c *Changes) Said() bool {
	return c != nil && (len(c.Files) > 0 || c.Outside != nil && len(c.Outside.Files) > 0 || c.Git != "" || len(c.Also) > 0)
}

// TreeCall is what a call that wrote in several trees changed in one of
// the others: its number there, and its files.
type TreeCall struct {
	Call   int64         `json:"call"`
	Files  []ChangedFile `json:"files"`
	During []int64       `json:"during,omitempty"`
}

// ChangedFile is one path a call changed.
type ChangedFile struct {
	Path string `json:"path"`
	// RawPath is Path's bytes (base64 in JSON), where they are not UTF-8:
	// JSON holds UTF-8 only, and Path has U+FFFD where they were not.
	RawPath []byte `json:"raw_path,omitempty"`
	Status  string `json:"status"` // "A" added, "M" modified, "D" deleted
	Added   *int   `json:"added,omitempty"`
	Removed *int   `json:"removed,omitempty"`
	Bytes   int64  `json:"bytes"`
	// Restorable says undo can take the change back: the content before it
	// is kept. Why says why not: "too large", "not captured yet", ….
	Restorable bool   `json:"restorable"`
	Why        string `json:"why,omitempty"`
	// Files is how many files a directory made or removed whole held
	// (its Path ends in /).
	Files int `json:"files,omitempty"`
	// Mode says permissions that changed: "644 → 600".
	Mode string `json:"mode,omitempty"`
	// Kind says a path that became another kind of thing: "link → file".
	Kind string `json:"kind,omitempty"`
	// SaidBy is the call (a write, edit or patch that ran meanwhile) whose
	// change this is: named here too, never left unsaid, and taken back by
	// that call's undo, not this one's.
	SaidBy int64 `json:"said_by,omitempty"`
}

// Outside are changes made between calls, since the call Since.
type Outside struct {
	Since int64         `json:"since,omitempty"`
	Files []ChangedFile `json:"files"`
	// Jobs are the jobs that ran in the tree meanwhile: the changes may
	// be theirs.
	Jobs []string `json:"jobs,omitempty"`
}

// Wrote is a file a call changed as it knows it: write, edit and patch hold
// its bytes before and after, which history keeps without a scan.
type Wrote struct {
	Path          string // the host path
	Before, After []byte
	Existed       bool // Before is its content; else there was none
	Exists        bool // After is its content; else it is gone
}

// Status is the change's letter, as history says it: A added, D deleted,
// M modified.
func (w Wrote) Status() string {
	switch {
	case !w.Existed:
		return "A"
	case !w.Exists:
		return "D"
	}
	return "M"
}

// Diagnostics are what checking the files a call changed found (the JSON
// field "diagnostics"; the text says them in a bracketed block).
type Diagnostics struct {
	// Checked are the files checked, each with what checked it.
	Checked []Checked `json:"checked"`
	// New are the diagnostics the call brought: not in the file's content
	// before it, moved through the call's line changes.
	New []Diagnostic `json:"new"`
	// Already counts those that were there before it.
	Already int `json:"already"`
	// All, when the call asked for all, are every current diagnostic.
	All []Diagnostic `json:"all,omitempty"`
	// Elsewhere are new diagnostics in files the call did not change.
	Elsewhere []Diagnostic `json:"elsewhere,omitempty"`
	// NotChecked are the files no check answered for, each with why.
	NotChecked []NotChecked `json:"not_checked,omitempty"`
	// TooMany, for a call that changed more source files than one call
	// checks, is how many: none was checked.
	TooMany int `json:"too_many,omitempty"`
	// Seconds is how long the checks took.
	Seconds float64 `json:"seconds"`
}

// Checked is a file checked, by what (a language server, "gofmt",
// "bash -n"), at which tier ("server", "syntax", "command"); Baseline
// says its content before the call was checked too, so that "new" is
// exact, not only the errors on its changed lines.
type Checked struct {
	Path     string `json:"path"`
	By       string `json:"by"`
	Tier     string `json:"tier"`
	Baseline bool   `json:"baseline"`
	// Why, for a file a language server is kept for that was checked by
	// another tier, says why the server did not answer: "gopls still
	// loading after 5 s".
	Why string `json:"why,omitempty"`
}

// Diagnostic is one error or warning in a file: lines and columns from 1,
// columns in bytes; End is 0 where its checker gives no end.
type Diagnostic struct {
	Path     string `json:"path"`
	Line     int    `json:"line"`
	Col      int    `json:"col,omitempty"`
	EndLine  int    `json:"end_line,omitempty"`
	EndCol   int    `json:"end_col,omitempty"`
	Severity string `json:"severity"` // error, warning, info, hint
	Message  string `json:"message"`
	Code     string `json:"code,omitempty"`
	Source   string `json:"source,omitempty"`
	// Fix is a language server's quick fix for it, where toolkit
	// diagnostics asked for one and the server has one.
	Fix *Fix `json:"fix,omitempty"`
}

// Fix is a quick fix: what it does, and its change as a unified diff,
// which toolkit patch applies.
type Fix struct {
	Title string `json:"title"`
	Diff  string `json:"diff"`
}

// NotChecked is a file no check answered for, and why.
type NotChecked struct {
	Path string `json:"path"`
	Why  string `json:"why"`
}
