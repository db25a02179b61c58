package read

import (
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"unicode"
	"unicode/utf8"

	"toolkit/internal/outcome"
	"toolkit/internal/root"
)

// listDir shows a directory's entries as numbered lines.
func listDir(a Args, offset, limit int64) outcome.Outcome {
	f, err := a.Host.Root.OpenFile(a.Path, os.O_RDONLY|syscall.O_DIRECTORY, 0)
	if err != nil {
		return outcome.Failure("%s", describe(a.Host.Root, a.Path, err))
	}
	entries, err := f.ReadDir(-1)
	f.Close()
	if err != nil {
		return outcome.Failure("%s: %s", a.Path, root.Reason(err))
	}
	names := make([]string, len(entries))
	for i, e := range entries {
		names[i] = Escape(e.Name())
		if e.IsDir() {
			names[i] += "/"
		}
	}
	sort.Strings(names)
	total := int64(len(names))
	d := Details{Path: a.Path, Kind: "directory", TotalLines: &total}
	if total == 0 {
		return outcome.Success("[empty directory]\n", d)
	}
	first := offset
	if offset < 0 {
		first = max(1, total+offset+1)
	}
	if first > total {
		return outcome.Failure("%s: offset %d is past the end (the directory has %d entries)", a.Path, offset, total)
	}
	last := min(total, first+limit-1)
	var b strings.Builder
	for i := first; i <= last; i++ {
		fmt.Fprintf(&b, "%6d\t%s\n", i, names[i-1])
	}
	if last < total {
		fmt.Fprintf(&b, "[entries %d-%d of %d; next: offset %d]\n", first, last, total, last+1)
		n := last + 1
		d.NextOffset = &n
	}
	d.FirstLine, d.LinesShown = first, last-first+1
	return outcome.Success(b.String(), d)
}

// Escape writes a name so that no byte of it can pass for the layout
// around it, as ls -b does: a backslash, control characters and bytes that
// are not UTF-8 as C escapes (\n, \t, \\, \033).
func Escape(name string) string {
	clean := true
	for _, r := range name {
		if r == '\\' || r == utf8.RuneError || unicode.IsControl(r) {
			clean = false
			break
		}
	}
	if clean {
		return name
	}
	var b strings.Builder
	for i := 0; i < len(name); {
		r, n := utf8.DecodeRuneInString(name[i:])
		switch {
		case r == '\\':
			b.WriteString(`\\`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == utf8.RuneError && n == 1, unicode.IsControl(r):
			for _, c := range []byte(name[i : i+n]) {
				b.WriteString(`\` + strconv.FormatInt(int64(c)|0o1000, 8)[1:])
			}
		default:
			b.WriteString(name[i : i+n])
		}
		i += n
	}
	return b.String()
}
