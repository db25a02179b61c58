package patch

import (
	"errors"
	"fmt"
	"strings"
)

// Op is what a patch does to a file.
type Op int

const (
	Update Op = iota
	Add
	Delete
	Copy // Update onto a new name, keeping the old file (git's copy from/copy to)
)

// File is one section of a patch: what it does to one file. A patch may
// have several sections for one file; they apply in order.
type File struct {
	Op     Op
	Path   string
	MoveTo string // Update: the file's new name; "" when it keeps it. Copy: the copy's name
	Hunks  []Hunk
	// Mode is the file's new mode from git's headers (new mode, new file
	// mode), 0 when they give none.
	Mode uint32
	// Line is where the section starts in the patch, from 1.
	Line int
	// Unified: the section is from a unified diff, applied as git apply
	// does; else from the envelope, applied as Codex's apply_patch does.
	Unified bool
	// MayCreate: a plain (not git) diff of one hunk that expects no line
	// creates its file where there is none, as git apply and GNU patch
	// take it (git's t4126 "apply create": --- f.orig, +++ f, @@ -0,0 …).
	MayCreate bool
}

// Hunk is one change to a file: the lines it expects (context and removed)
// and those it leaves (context and added).
type Hunk struct {
	Header  string   // as the patch wrote it, for messages: "@@ -40,7 +40,8 @@", "@@ def f():"
	Anchors []string // envelope: lines to find, in order, before the change
	OldLine int      // unified: the first line it expects, from 1; 0 when not given
	Lines   []Line
	AtEnd   bool // the change is at the end of the file (*** End of File)
	// Unified: from a unified diff, whose OldStart is the first line its
	// header names ("@@ -OldStart,…"), kept for where it must match.
	Unified  bool
	OldStart int
}

// Line is a line of a hunk.
type Line struct {
	Text string // without its line end
	Kind byte   // ' ', '-' or '+'
	// NoEnd: "\ No newline at end of file" followed it: it has no line end.
	NoEnd bool
}

// Old and New are the text a hunk expects and the one it leaves.
func (h Hunk) Old() string { return h.side('+') }
func (h Hunk) New() string { return h.side('-') }

func (h Hunk) side(skip byte) string {
	var b strings.Builder
	for _, l := range h.Lines {
		if l.Kind == skip {
			continue
		}
		b.WriteString(l.Text)
		if !l.NoEnd {
			b.WriteByte('\n')
		}
	}
	return b.String()
}

// ParseError is a patch that cannot be read, with the line where.
type ParseError struct {
	Line int // from 1
	Msg  string
}

func (e *ParseError) Error() string { return fmt.Sprintf("line %d of the patch: %s", e.Line, e.Msg) }

// Parse reads a patch in either format, told apart by its first line that is
// not blank: the "*** Begin Patch" envelope models trained on Codex write,
// or a unified diff (git diff's, diff -u's).
func Parse(patch string) ([]File, error) {
	lines := strings.Split(patch, "\n")
	if len(lines) > 0 && lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	// A line's \r before its \n, or at the patch's end, is part of its line
	// end, however many there are (a CRLF patch converted twice): an added
	// line takes the file's own line end.
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, "\r")
	}
	first := 0
	for first < len(lines) && strings.TrimSpace(lines[first]) == "" {
		first++
	}
	if first == len(lines) {
		return nil, errors.New("the patch is empty")
	}
	lines, skipped := heredoc(lines[first:])
	if len(lines) == 0 {
		return nil, errors.New("the patch is empty")
	}
	p := &parser{lines: lines, at: 0, base: first + skipped}
	var files []File
	var err error
	if strings.TrimSpace(lines[0]) == beginPatch {
		files, err = p.envelope()
	} else {
		files, err = p.unified()
	}
	if err == nil && len(files) == 0 {
		err = errors.New("the patch changes no file")
	}
	return files, err
}

type parser struct {
	lines []string
	at    int // the next line to read
	base  int // lines before lines[0] in the patch
}

func (p *parser) fail(format string, args ...any) error {
	return &ParseError{Line: p.base + p.at + 1, Msg: fmt.Sprintf(format, args...)}
}

// heredoc takes off the <<'EOF' … EOF a model wraps the envelope in when it
// copies the shell form Codex is trained on (apply_patch <<'EOF'), as Codex's
// own lenient parser does.
func heredoc(lines []string) ([]string, int) {
	first := strings.TrimSpace(lines[0])
	last := len(lines) - 1
	for last > 0 && strings.TrimSpace(lines[last]) == "" {
		last--
	}
	for _, q := range []string{"", "'", `"`} {
		if first == "<<"+q+"EOF"+q && last > 0 && strings.TrimSpace(lines[last]) == "EOF" {
			return lines[1:last], 1
		}
	}
	return lines, 0
}

// UnsupportedError is a patch that is well formed but holds a part toolkit
// does not apply (a binary diff, an unknown git header): the whole patch is
// refused.
type UnsupportedError struct {
	Line int // from 1
	Msg  string
}

func (e *UnsupportedError) Error() string {
	return fmt.Sprintf("line %d of the patch: %s", e.Line, e.Msg)
}

func (p *parser) unsupported(format string, args ...any) error {
	return &UnsupportedError{Line: p.base + p.at + 1, Msg: fmt.Sprintf(format, args...)}
}

// path is the path a header line names, or an error at that line when it
// names none.
func (p *parser) path(s string) (string, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return "", p.fail("a file's header without a path")
	}
	return s, nil
}

func (p *parser) done() bool { return p.at >= len(p.lines) }
func (p *parser) peek() string {
	if p.done() {
		return ""
	}
	return p.lines[p.at]
}

// The envelope's markers.
const (
	beginPatch = "*** Begin Patch"
	endPatch   = "*** End Patch"
	addFile    = "*** Add File: "
	deleteFile = "*** Delete File: "
	updateFile = "*** Update File: "
	moveTo     = "*** Move to: "
	endOfFile  = "*** End of File"
)
