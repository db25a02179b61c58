package patch

import (
	"fmt"
	"strings"
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
