package patch

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

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
