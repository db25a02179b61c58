package patch

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Op is what a patch does to a file.
type Op int

const (
	Update Op = iota
	Add
	Delete
)

// File is one file's part of a patch.
type File struct {
	Op     Op
	Path   string
	MoveTo string // Update: the file's new name; "" when it keeps it
	Hunks  []Hunk
}

// Hunk is one change to a file: the lines it expects (context and removed)
// and those it leaves (context and added).
type Hunk struct {
	Header  string   // as the patch wrote it, for messages: "@@ -40,7 +40,8 @@", "@@ def f():"
	Anchors []string // envelope: lines to find, in order, before the change
	OldLine int      // unified: the first line it expects, from 1; 0 when not given
	Lines   []Line
	AtEnd   bool // the change is at the end of the file (*** End of File)
}

// Line is a line of a hunk.
type Line struct {
	Kind byte   // ' ', '-' or '+'
	Text string // without its line end
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
	lines := strings.Split(strings.ReplaceAll(patch, "\r\n", "\n"), "\n")
	if len(lines) > 0 && lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	first := 0
	for first < len(lines) && strings.TrimSpace(lines[first]) == "" {
		first++
	}
	if first == len(lines) {
		return nil, errors.New("the patch is empty")
	}
	p := &parser{lines: lines, at: first}
	var files []File
	var err error
	if strings.TrimSpace(lines[first]) == "*** Begin Patch" {
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
}

func (p *parser) fail(format string, args ...any) error {
	return &ParseError{Line: p.at + 1, Msg: fmt.Sprintf(format, args...)}
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

// envelope reads the *** Begin Patch format (Codex's apply_patch):
//
//	Patch      := "*** Begin Patch" { FileOp } "*** End Patch"
//	FileOp     := AddFile | DeleteFile | UpdateFile
//	AddFile    := "*** Add File: " path { "+" line }
//	DeleteFile := "*** Delete File: " path
//	UpdateFile := "*** Update File: " path [ "*** Move to: " path ] { Hunk }
//	Hunk       := [ "@@" [ anchor ] ] { (" " | "-" | "+") line } [ "*** End of File" ]
//
// The first hunk of a file may leave out its "@@"; several "@@ anchor"
// lines in a row narrow where the change is, each found after the one
// before. A line of a hunk with no prefix at all is taken as context, as
// models write a blank one.
func (p *parser) envelope() ([]File, error) {
	p.at++ // *** Begin Patch
	var files []File
	for {
		if p.done() {
			return nil, p.fail("the patch ends without %q", endPatch)
		}
		line := strings.TrimRight(p.peek(), " \t")
		switch {
		case line == endPatch:
			p.at++
			for ; !p.done(); p.at++ {
				if strings.TrimSpace(p.peek()) != "" {
					return nil, p.fail("text after %q", endPatch)
				}
			}
			return files, nil
		case strings.HasPrefix(line, addFile):
			path, err := p.path(line[len(addFile):])
			if err != nil {
				return nil, err
			}
			p.at++
			f := File{Op: Add, Path: path}
			h := Hunk{Header: line}
			for !p.done() && strings.HasPrefix(p.peek(), "+") {
				h.Lines = append(h.Lines, Line{Kind: '+', Text: p.peek()[1:]})
				p.at++
			}
			f.Hunks = []Hunk{h}
			files = append(files, f)
		case strings.HasPrefix(line, deleteFile):
			path, err := p.path(line[len(deleteFile):])
			if err != nil {
				return nil, err
			}
			p.at++
			files = append(files, File{Op: Delete, Path: path})
		case strings.HasPrefix(line, updateFile):
			path, err := p.path(line[len(updateFile):])
			if err != nil {
				return nil, err
			}
			p.at++
			f := File{Op: Update, Path: path}
			if strings.HasPrefix(p.peek(), moveTo) {
				if f.MoveTo, err = p.path(p.peek()[len(moveTo):]); err != nil {
					return nil, err
				}
				p.at++
			}
			hunks, err := p.envelopeHunks()
			if err != nil {
				return nil, err
			}
			if len(hunks) == 0 && f.MoveTo == "" {
				return nil, p.fail("%q has no hunk", f.Path)
			}
			f.Hunks = hunks
			files = append(files, f)
		case line == "":
			p.at++
		default:
			return nil, p.fail("expected a file's header (%q, %q or %q), not %q", addFile, updateFile, deleteFile, line)
		}
	}
}

// envelopeHunks reads an Update File's hunks, up to the next file's header.
func (p *parser) envelopeHunks() ([]Hunk, error) {
	var hunks []Hunk
	var h *Hunk
	for !p.done() {
		line := p.peek()
		trimmed := strings.TrimRight(line, " \t")
		switch {
		case strings.HasPrefix(trimmed, "*** ") && trimmed != endOfFile:
			return hunks, nil // the next file, or the end
		case trimmed == endOfFile:
			if h == nil {
				return nil, p.fail("%q before any change", endOfFile)
			}
			h.AtEnd = true
			p.at++
			continue
		case strings.HasPrefix(line, "@@"):
			anchor := strings.TrimSpace(strings.TrimPrefix(line, "@@"))
			if h == nil || len(h.Lines) > 0 {
				hunks = append(hunks, Hunk{Header: trimmed})
				h = &hunks[len(hunks)-1]
			}
			if anchor != "" {
				h.Anchors = append(h.Anchors, anchor)
			}
			p.at++
			continue
		}
		if h == nil {
			hunks = append(hunks, Hunk{Header: "(first hunk)"})
			h = &hunks[len(hunks)-1]
		}
		kind := byte(' ')
		text := line
		if line != "" && (line[0] == ' ' || line[0] == '-' || line[0] == '+') {
			kind, text = line[0], line[1:]
		}
		h.Lines = append(h.Lines, Line{Kind: kind, Text: text})
		p.at++
	}
	return hunks, nil
}

// unified reads a unified diff: for each file, "--- OLD" and "+++ NEW"
// (/dev/null for a file added or deleted), with git's "diff --git" headers
// before them if any, then hunks "@@ -l,n +l,n @@" of context (" "),
// removed ("-") and added ("+") lines. Paths lose git's a/ and b/.
func (p *parser) unified() ([]File, error) {
	var files []File
	var git struct {
		renameFrom, renameTo string
		deleted, added       bool
	}
	for !p.done() {
		line := p.peek()
		switch {
		case strings.HasPrefix(line, "diff --git "):
			git.renameFrom, git.renameTo, git.deleted, git.added = "", "", false, false
			p.at++
			// A rename with no change has no ---/+++ lines: it is read
			// from git's own headers.
			for !p.done() && !strings.HasPrefix(p.peek(), "--- ") && !strings.HasPrefix(p.peek(), "diff --git ") {
				h := p.peek()
				switch {
				case strings.HasPrefix(h, "rename from "):
					git.renameFrom = h[len("rename from "):]
				case strings.HasPrefix(h, "rename to "):
					git.renameTo = h[len("rename to "):]
				case strings.HasPrefix(h, "deleted file mode"):
					git.deleted = true
				case strings.HasPrefix(h, "new file mode"):
					git.added = true
				}
				p.at++
			}
			if git.renameFrom != "" && git.renameTo != "" && (p.done() || !strings.HasPrefix(p.peek(), "--- ")) {
				files = append(files, File{Op: Update, Path: git.renameFrom, MoveTo: git.renameTo})
			}
		case strings.HasPrefix(line, "--- "):
			f, err := p.unifiedFile()
			if err != nil {
				return nil, err
			}
			if git.renameFrom != "" && git.renameTo != "" && f.Op == Update {
				f.Path, f.MoveTo = git.renameFrom, git.renameTo
			}
			files = append(files, f)
		default:
			p.at++ // "Index:", "index …", commit text: not the diff's
		}
	}
	if len(files) == 0 {
		return nil, &ParseError{Line: 1, Msg: `neither a "*** Begin Patch" envelope nor a unified diff (no "--- " line)`}
	}
	return files, nil
}

// unifiedFile reads one file of a unified diff, from its "--- " line.
func (p *parser) unifiedFile() (File, error) {
	from, err := p.path(diffPath(p.peek()[4:]))
	if err != nil {
		return File{}, err
	}
	p.at++
	if !strings.HasPrefix(p.peek(), "+++ ") {
		return File{}, p.fail(`expected "+++ " after "--- "`)
	}
	to, err := p.path(diffPath(p.peek()[4:]))
	if err != nil {
		return File{}, err
	}
	p.at++
	f := File{Op: Update, Path: from}
	switch {
	case from == "/dev/null" && to == "/dev/null":
		return File{}, p.fail("both sides are /dev/null")
	case from == "/dev/null":
		f.Op, f.Path = Add, to
	case to == "/dev/null":
		f.Op = Delete
	case to != from:
		f.MoveTo = to
	}
	for strings.HasPrefix(p.peek(), "@@ ") {
		h, err := p.unifiedHunk()
		if err != nil {
			return File{}, err
		}
		f.Hunks = append(f.Hunks, h)
	}
	if len(f.Hunks) == 0 && f.Op != Delete {
		return File{}, p.fail("%q has no hunk", f.Path)
	}
	return f, nil
}

// diffPath is a path of a ---/+++ line: without a timestamp after a tab,
// and without git's a/ or b/.
func diffPath(s string) string {
	if i := strings.IndexByte(s, '\t'); i >= 0 {
		s = s[:i]
	}
	s = strings.TrimSpace(s)
	if u, err := strconv.Unquote(s); err == nil && strings.HasPrefix(s, `"`) {
		s = u // git quotes names with unusual bytes
	}
	if s != "/dev/null" && (strings.HasPrefix(s, "a/") || strings.HasPrefix(s, "b/")) {
		s = s[2:]
	}
	return s
}

// unifiedHunk reads "@@ -l,n +l,n @@" and its lines: n of each side, as
// the header counts them.
func (p *parser) unifiedHunk() (Hunk, error) {
	header := p.peek()
	var oldStart, oldLen, newStart, newLen int
	if !parseRange(header, &oldStart, &oldLen, &newStart, &newLen) {
		return Hunk{}, p.fail("not a hunk header: %q", header)
	}
	p.at++
	h := Hunk{Header: header, OldLine: oldStart}
	if oldLen == 0 {
		// Lines added with no context go after the line named, and
		// "-0,0" is before the first.
		h.OldLine = oldStart + 1
	}
	for oldLen > 0 || newLen > 0 {
		if p.done() {
			return Hunk{}, p.fail("the hunk %q ends early: %d old and %d new lines missing", header, oldLen, newLen)
		}
		line := p.peek()
		kind := byte(' ')
		text := ""
		if line != "" {
			kind, text = line[0], line[1:]
		}
		switch kind {
		case ' ':
			oldLen--
			newLen--
		case '-':
			oldLen--
		case '+':
			newLen--
		case '\\':
			p.markNoEnd(&h)
			continue
		default:
			return Hunk{}, p.fail("a hunk's line starts with %q, not ' ', '-' or '+'", kind)
		}
		if oldLen < 0 || newLen < 0 {
			return Hunk{}, p.fail("the hunk %q has more lines than its header counts", header)
		}
		h.Lines = append(h.Lines, Line{Kind: kind, Text: text})
		p.at++
	}
	if strings.HasPrefix(p.peek(), `\`) {
		p.markNoEnd(&h)
	}
	return h, nil
}

// markNoEnd reads "\ No newline at end of file": the line before has no
// line end.
func (p *parser) markNoEnd(h *Hunk) {
	if n := len(h.Lines); n > 0 {
		h.Lines[n-1].NoEnd = true
	}
	p.at++
}

// parseRange reads "@@ -l[,n] +l[,n] @@…".
func parseRange(s string, os, ol, ns, nl *int) bool {
	rest, ok := strings.CutPrefix(s, "@@ -")
	if !ok {
		return false
	}
	oldPart, rest, ok := strings.Cut(rest, " +")
	if !ok {
		return false
	}
	newPart, _, ok := strings.Cut(rest, " @@")
	if !ok {
		return false
	}
	one := func(part string, start, n *int) bool {
		a, b, has := strings.Cut(part, ",")
		var err error
		if *start, err = strconv.Atoi(a); err != nil || *start < 0 {
			return false
		}
		*n = 1
		if has {
			if *n, err = strconv.Atoi(b); err != nil || *n < 0 {
				return false
			}
		}
		return true
	}
	return one(oldPart, os, ol) && one(newPart, ns, nl)
}
