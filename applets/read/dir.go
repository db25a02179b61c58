package read

import (
	"fmt"
	"os"
	"sort"
	"strings"
	"syscall"

	"toolkit/internal/outcome"
	"toolkit/internal/root"
	"toolkit/internal/text"
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
		names[i] = text.Escape(e.Name())
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
