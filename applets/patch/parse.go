package patch

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
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

// marker is a line of the envelope as its markers are compared: with blanks
// at either end taken off, as Codex's parser takes them.
func marker(line string) string { return strings.TrimSpace(line) }

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
// before. An empty line of a hunk is a blank line kept, as models write
// one; any other line without a prefix refuses the patch, as Codex's
// parser does. Markers may have blanks at either end.
func (p *parser) envelope() ([]File, error) {
	p.at++ // *** Begin Patch
	var files []File
	for {
		if p.done() {
			return nil, p.fail("the patch ends without %q", endPatch)
		}
		line := marker(p.peek())
		start := p.base + p.at + 1
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
			f := File{Op: Add, Path: path, Line: start}
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
			files = append(files, File{Op: Delete, Path: path, Line: start})
		case strings.HasPrefix(line, updateFile):
			path, err := p.path(line[len(updateFile):])
			if err != nil {
				return nil, err
			}
			p.at++
			f := File{Op: Update, Path: path, Line: start}
			if m := marker(p.peek()); strings.HasPrefix(m, moveTo) {
				if f.MoveTo, err = p.path(m[len(moveTo):]); err != nil {
					return nil, err
				}
				p.at++
			}
			hunks, err := p.envelopeHunks()
			if err != nil {
				return nil, err
			}
			if len(hunks) == 0 && f.MoveTo == "" {
				return nil, &ParseError{Line: start, Msg: fmt.Sprintf("%q has no hunk: an Update File section changes something", f.Path)}
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
// A hunk with no line at all ("@@" then "*** End of File", or the next
// header) is an error: it would say a change that is not there.
func (p *parser) envelopeHunks() ([]Hunk, error) {
	var hunks []Hunk
	var h *Hunk
	hunkAt := 0 // where h starts, for its error
	closeHunk := func() error {
		if h != nil && len(h.Lines) == 0 {
			return &ParseError{Line: hunkAt, Msg: fmt.Sprintf("the hunk %q has no line to add, remove or keep", h.Header)}
		}
		return nil
	}
	for !p.done() {
		line := p.peek()
		m := marker(line)
		switch {
		case strings.HasPrefix(m, "*** ") && m != endOfFile:
			return hunks, closeHunk() // the next file, or the end
		case m == endOfFile:
			if h == nil {
				return nil, p.fail("%q before any change", endOfFile)
			}
			if err := closeHunk(); err != nil {
				return nil, err
			}
			h.AtEnd = true
			h = nil // a hunk ends at the end of the file
			p.at++
			continue
		case strings.HasPrefix(line, "@@"):
			anchor := strings.TrimSpace(strings.TrimPrefix(line, "@@"))
			if h == nil || len(h.Lines) > 0 {
				hunks = append(hunks, Hunk{Header: strings.TrimRight(line, " \t")})
				h = &hunks[len(hunks)-1]
				hunkAt = p.base + p.at + 1
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
			hunkAt = p.base + p.at + 1
		}
		kind, text := byte(' '), ""
		switch {
		case line != "" && (line[0] == ' ' || line[0] == '-' || line[0] == '+'):
			kind, text = line[0], line[1:]
		case line != "":
			return nil, p.fail("%q is not a line of a hunk: each starts with \" \" (kept), \"-\" (removed) or \"+\" (added)", line)
		}
		h.Lines = append(h.Lines, Line{Kind: kind, Text: text})
		p.at++
	}
	return hunks, closeHunk()
}

// gitHeader is what git's extended header lines say of one file.
type gitHeader struct {
	oldName, newName     string // from "diff --git a/OLD b/NEW", when it can be split
	renameFrom, renameTo string
	copyFrom, copyTo     string
	deleted, added       bool
	mode                 uint32 // new mode, new file mode
}

// unified reads a unified diff: for each file, "--- OLD" and "+++ NEW"
// (/dev/null for a file added or deleted), with git's "diff --git" headers
// before them if any, then hunks "@@ -l,n +l,n @@" of context (" "),
// removed ("-") and added ("+") lines. Paths lose git's a/ and b/. Of
// git's extended headers, renames, copies, modes and indexes are read; a
// binary part, or a header toolkit does not know, refuses the patch.
func (p *parser) unified() ([]File, error) {
	var files []File
	for !p.done() {
		line := p.peek()
		switch {
		case strings.HasPrefix(line, "diff --git "):
			f, err := p.gitFile()
			if err != nil {
				return nil, err
			}
			files = append(files, f...)
		case strings.HasPrefix(line, "--- "):
			f, err := p.unifiedFile(nil)
			if err != nil {
				return nil, err
			}
			files = append(files, f)
		case strings.HasPrefix(line, "Binary files ") && strings.HasSuffix(line, " differ"),
			strings.TrimSpace(line) == "GIT binary patch":
			return nil, p.unsupported("a binary part (%q): toolkit applies text changes only", line)
		default:
			p.at++ // "Index:", "diff -u a b", commit text: not the diff's
		}
	}
	if len(files) == 0 {
		return nil, &ParseError{Line: 1, Msg: `neither a "*** Begin Patch" envelope nor a unified diff (no "--- " line)`}
	}
	return files, nil
}

// gitFile reads one file of a git diff, from its "diff --git" line: the
// extended headers, then the ---/+++ lines and hunks if there are any (a
// rename, copy or mode change with no change of content has none).
func (p *parser) gitFile() ([]File, error) {
	start := p.base + p.at + 1
	var g gitHeader
	g.oldName, g.newName = splitGitNames(p.peek()[len("diff --git "):])
	p.at++
	for !p.done() && !strings.HasPrefix(p.peek(), "--- ") && !strings.HasPrefix(p.peek(), "diff --git ") {
		h := p.peek()
		var mode string
		switch {
		case strings.HasPrefix(h, "rename from "):
			g.renameFrom = gitName(h[len("rename from "):])
		case strings.HasPrefix(h, "rename to "):
			g.renameTo = gitName(h[len("rename to "):])
		case strings.HasPrefix(h, "copy from "):
			g.copyFrom = gitName(h[len("copy from "):])
		case strings.HasPrefix(h, "copy to "):
			g.copyTo = gitName(h[len("copy to "):])
		case strings.HasPrefix(h, "deleted file mode "):
			g.deleted = true
		case strings.HasPrefix(h, "new file mode "):
			g.added, mode = true, h[len("new file mode "):]
		case strings.HasPrefix(h, "new mode "):
			mode = h[len("new mode "):]
		case strings.HasPrefix(h, "old mode "),
			strings.HasPrefix(h, "similarity index "),
			strings.HasPrefix(h, "dissimilarity index "),
			strings.HasPrefix(h, "index "):
		case strings.HasPrefix(h, "Binary files ") && strings.HasSuffix(h, " differ"),
			strings.TrimSpace(h) == "GIT binary patch":
			return nil, p.unsupported("a binary part (%q): toolkit applies text changes only", h)
		case strings.TrimSpace(h) == "":
		default:
			return nil, p.unsupported("a git header toolkit does not know: %q", h)
		}
		if mode != "" {
			m, err := strconv.ParseUint(strings.TrimSpace(mode), 8, 32)
			if err != nil {
				return nil, p.fail("not a file mode: %q", h)
			}
			g.mode = uint32(m)
		}
		p.at++
	}
	if !p.done() && strings.HasPrefix(p.peek(), "--- ") {
		f, err := p.unifiedFile(&g)
		if err != nil {
			return nil, err
		}
		f.Line = start
		return []File{f}, nil
	}
	// No content change: a rename, a copy, a mode change, or an empty file
	// added or deleted.
	f := File{Op: Update, Line: start, Unified: true, Mode: g.mode}
	switch {
	case g.renameFrom != "" && g.renameTo != "":
		f.Path, f.MoveTo = g.renameFrom, g.renameTo
	case g.copyFrom != "" && g.copyTo != "":
		f.Op, f.Path, f.MoveTo = Copy, g.copyFrom, g.copyTo
	case g.oldName == "":
		return nil, &ParseError{Line: start, Msg: "a git diff header whose file names cannot be read"}
	case g.added:
		f.Op, f.Path, f.Hunks = Add, g.newName, []Hunk{{Header: "new file"}}
	case g.deleted:
		f.Op, f.Path = Delete, g.oldName
	case g.mode != 0:
		f.Path = g.oldName
	default:
		return nil, &ParseError{Line: start, Msg: fmt.Sprintf("the git diff of %s changes nothing", g.oldName)}
	}
	return []File{f}, nil
}

// splitGitNames splits "a/OLD b/NEW" of a diff --git line, when it can: the
// two names are the same but for their prefixes, or quoted.
func splitGitNames(s string) (string, string) {
	if strings.HasPrefix(s, `"`) {
		old, err := strconv.QuotedPrefix(s) // git's C quoting is Go's
		if err != nil {
			return "", ""
		}
		return diffPath(old), diffPath(strings.TrimSpace(s[len(old):]))
	}
	if len(s)%2 == 1 {
		half := len(s) / 2
		old, new := s[:half], s[half+1:]
		if s[half] == ' ' && strings.TrimPrefix(old, "a/") == strings.TrimPrefix(new, "b/") {
			return diffPath(old), diffPath(new)
		}
	}
	return "", ""
}

// gitName is a name of a rename or copy header: as it is, or unquoted.
func gitName(s string) string {
	s = strings.TrimSpace(s)
	if strings.HasPrefix(s, `"`) {
		if u, err := strconv.Unquote(s); err == nil {
			return u
		}
	}
	return s
}

// unifiedFile reads one file of a unified diff, from its "--- " line, with
// git's headers when it is part of a git diff. In a git diff the file is
// the --- side's, and a new name comes only from rename or copy headers; in
// a plain diff the +++ side names the file changed (--- f.orig, +++ f).
func (p *parser) unifiedFile(g *gitHeader) (File, error) {
	start := p.base + p.at + 1
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
	f := File{Op: Update, Path: to, Line: start, Unified: true}
	switch {
	case from == "/dev/null" && to == "/dev/null":
		return File{}, p.fail("both sides are /dev/null")
	case from == "/dev/null":
		f.Op = Add
	case to == "/dev/null":
		f.Op, f.Path = Delete, from
	case g != nil:
		f.Path = from
		switch {
		case g.renameFrom != "" && g.renameTo != "":
			f.Path, f.MoveTo = g.renameFrom, g.renameTo
		case g.copyFrom != "" && g.copyTo != "":
			f.Op, f.Path, f.MoveTo = Copy, g.copyFrom, g.copyTo
		}
	}
	if g != nil {
		f.Mode = g.mode
	}
	for strings.HasPrefix(p.peek(), "@@ ") {
		h, err := p.unifiedHunk()
		if err != nil {
			return File{}, err
		}
		f.Hunks = append(f.Hunks, h)
	}
	if len(f.Hunks) == 0 && f.Op != Delete && f.MoveTo == "" {
		return File{}, p.fail("%q has no hunk", f.Path)
	}
	f.MayCreate = g == nil && f.Op == Update && len(f.Hunks) == 1 && f.Hunks[0].Old() == ""
	return f, nil
}

// diffPath is a path of a ---/+++ line: without a timestamp after a tab,
// and without git's a/ or b/. A timestamp of the epoch is GNU diff -N's way
// of saying the file is not there: /dev/null, as GNU patch reads it.
func diffPath(s string) string {
	if i := strings.IndexByte(s, '\t'); i >= 0 {
		if epoch(strings.TrimSpace(s[i+1:])) {
			return "/dev/null"
		}
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

// epoch reports whether a diff's timestamp is the Unix epoch, in any zone.
func epoch(stamp string) bool {
	for _, layout := range []string{"2006-01-02 15:04:05.999999999 -0700", "2006-01-02 15:04:05 -0700", "Mon Jan _2 15:04:05 2006"} {
		if t, err := time.Parse(layout, stamp); err == nil {
			return t.Unix() == 0
		}
	}
	return false
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
	h := Hunk{Header: header, OldLine: oldStart, Unified: true, OldStart: oldStart}
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
