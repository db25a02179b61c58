package grep

// The layout of grep's answer: each line as it is shown, the groups of a
// match and its context, and the lines that say what was found and what
// was not searched.

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"toolkit/internal/outcome"
	"toolkit/internal/page"
	"toolkit/internal/walk"
)

// showLine is a line as grep shows it: without its \r, each invalid byte
// as U+FFFD, and when it is long, the part around its match (ms, me; -1
// for a context line: its start) with what was left out said.
func showLine(b []byte, ms, me int) string {
	b = trimCR(b)
	if len(b) <= MaxLine {
		return valid(b)
	}
	if ms < 0 {
		ms, me = 0, 0
	}
	from := max(0, min(ms-MaxLine/4, len(b)-MaxLine))
	to := min(len(b), max(from+MaxLine, me))
	for from > 0 && !utf8.RuneStart(b[from]) {
		from--
	}
	for to < len(b) && !utf8.RuneStart(b[to]) {
		to++
	}
	var out strings.Builder
	if from > 0 {
		out.WriteString("… ")
	}
	out.WriteString(valid(b[from:to]))
	if to < len(b) || from > 0 {
		fmt.Fprintf(&out, " … [line cut: %d characters]", utf8.RuneCount(b[:from])+utf8.RuneCount(b[to:]))
	}
	return out.String()
}

func trimCR(b []byte) []byte {
	if len(b) > 0 && b[len(b)-1] == '\r' {
		return b[:len(b)-1]
	}
	return b
}

// valid is b as text, each invalid byte as U+FFFD (read's rule).
func valid(b []byte) string {
	if utf8.Valid(b) {
		return string(b)
	}
	var out strings.Builder
	for len(b) > 0 {
		r, n := utf8.DecodeRune(b)
		if r == utf8.RuneError && n == 1 {
			out.WriteRune(utf8.RuneError)
		} else {
			out.Write(b[:n])
		}
		b = b[n:]
	}
	return out.String()
}

// result lays out what the search found.
func (s *search) result(offset, limit int, stats *walk.Stats) outcome.Outcome {
	d := Details{Matches: s.matches, Files: int64(len(s.counts)), Searched: s.searched.Load(), Skipped: SkipDetails{
		Binary: s.binary.Load(), TooLarge: s.tooLarge.Load(), Unreadable: s.unreadable.Load(),
	}}
	if stats != nil {
		d.Skipped.Ignored, d.Skipped.Hidden = stats.Ignored.Load(), stats.Hidden.Load()
		d.Skipped.Unreadable += stats.Errors.Load()
	}
	var b strings.Builder
	total := s.matches
	switch s.mode {
	case "lines":
		hits := page.Of(s.kept.sorted(), offset, limit)
		d.Shown = len(hits)
		writeHits(&b, hits, s.before > 0 || s.after > 0)
	default:
		// The files, or their counts, in the order asked for (lines are
		// always in path order: kept).
		slices.SortFunc(s.counts, func(a, b fileCount) int {
			if c := b.mtime.Compare(a.mtime); c != 0 {
				return c // newest first; all zero unless sort is mtime
			}
			return strings.Compare(a.path, b.path)
		})
		total = int64(len(s.counts))
		counts := page.Of(s.counts, offset, limit)
		d.Shown = len(counts)
		for _, c := range counts {
			if s.mode == "files" {
				b.WriteString(c.path + "\n")
			} else {
				fmt.Fprintf(&b, "%s:%d\n", c.path, c.count)
			}
		}
	}
	// The line that counts and says how to go on.
	b.WriteString("[")
	switch {
	case s.matches == 0:
		fmt.Fprintf(&b, "no matches in %d %s", d.Searched, plural(d.Searched, "file", "files"))
	case s.mode == "lines":
		fmt.Fprintf(&b, "%d %s in %d %s", s.matches, plural(s.matches, "match", "matches"), d.Files, plural(d.Files, "file", "files"))
	default:
		fmt.Fprintf(&b, "%d %s (%d %s)", d.Files, plural(d.Files, "file matches", "files match"), s.matches, plural(s.matches, "line", "lines"))
	}
	note, next := page.Note(offset, d.Shown, total)
	if next > 0 {
		d.NextOffset = &next
	}
	b.WriteString(note + "]\n")
	if skipped := skippedLine(d.Skipped); skipped != "" {
		b.WriteString(skipped + "\n")
	}
	return outcome.Success(b.String(), d)
}

func plural(n int64, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// writeHits writes the hits as path:LINE:text, and with context their
// context lines as path-LINE-text, each group of lines apart from the next
// by "--", a line shown once however many groups it is in.
func writeHits(b *strings.Builder, hits []*hit, context bool) {
	size := 0
	for _, h := range hits {
		size += len(h.path) + len(h.text) + 16
	}
	b.Grow(size)
	var path string
	var printed int64 // the last line of path written
	for i, h := range hits {
		if h.path != path {
			path, printed = h.path, 0
		}
		first := h.line
		if len(h.before) > 0 {
			first = h.before[0].line
		}
		if context && i > 0 && (printed == 0 || first > printed+1) {
			b.WriteString("--\n")
		}
		for _, c := range h.before {
			if c.line > printed {
				writeLine(b, h.path, '-', c.line, c.text)
				printed = c.line
			}
		}
		if h.line > printed {
			writeLine(b, h.path, ':', h.line, h.text)
			printed = h.line
		}
		for _, m := range h.more {
			if m.line > printed {
				writeLine(b, h.path, ':', m.line, m.text)
				printed = m.line
			}
		}
		for _, c := range h.after {
			// A later match's line is shown as a match, not as context.
			if i+1 < len(hits) && hits[i+1].path == h.path && c.line >= hits[i+1].line {
				break
			}
			if c.line > printed {
				writeLine(b, h.path, '-', c.line, c.text)
				printed = c.line
			}
		}
	}
}

// skippedLine says what was not searched, if anything was.
func skippedLine(k SkipDetails) string {
	var parts []string
	add := func(n int64, what string) {
		if n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, what))
		}
	}
	if k.Binary == 1 {
		parts = append(parts, "1 binary file that matches")
	} else {
		add(k.Binary, "binary files that match")
	}
	add(k.TooLarge, "over 10 MiB")
	add(k.Unreadable, "unreadable")
	add(k.Ignored, "ignored (.gitignore, .ignore; no_ignore to search them)")
	add(k.Hidden, "hidden (hidden to search them)")
	if len(parts) == 0 {
		return ""
	}
	return "[not searched: " + strings.Join(parts, ", ") + "]"
}

// writeLine writes "path:12:text" (sep ':') or "path-12-text" (sep '-').
func writeLine(b *strings.Builder, path string, sep byte, line int64, text string) {
	var num [24]byte
	b.WriteString(path)
	b.WriteByte(sep)
	b.Write(strconv.AppendInt(num[:0], line, 10))
	b.WriteByte(sep)
	b.WriteString(text)
	b.WriteByte('\n')
}
