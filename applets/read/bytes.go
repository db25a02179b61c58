package read

import (
	"encoding/base64"
	"fmt"
	"io"
	"os"
	"strings"

	"toolkit/internal/outcome"
)

// readBytes answers a read with encoding base64: the file's bytes from
// offset (from 0; negative counts from the end) for limit bytes, at most
// what the call's text may hold once encoded, in base64, then a line that
// says which bytes they are, the file's sha256 and where to go on. Any
// regular file, text or not: a host moves a build's artefact out this way.
func readBytes(a Args, f *os.File, size int64) outcome.Outcome {
	start := int64(0)
	if a.Offset != nil {
		start = int64(*a.Offset)
		if start < 0 {
			start = max(0, size+start)
		}
	}
	start = min(start, size)
	room := int64(maxText(a)) / 4 * 3 // base64 is 4 characters for every 3 bytes
	n := min(size-start, room)
	if a.Limit != nil {
		n = min(n, int64(*a.Limit))
	}
	buf := make([]byte, n)
	if _, err := f.ReadAt(buf, start); err != nil && err != io.EOF {
		return outcome.Failure("%s: %s", a.Path, err)
	}
	d := Details{Path: a.Path, Kind: "bytes", Bytes: size}
	var sum string
	if size <= MaxWhole {
		if s, err := hashOf(f, size); err == nil {
			sum = s
			d.SHA256 = &sum
		}
	}
	var b strings.Builder
	b.WriteString(base64.StdEncoding.EncodeToString(buf))
	b.WriteByte('\n')
	end := start + n
	switch {
	case size == 0:
		b.WriteString("[empty file")
	case n == 0:
		fmt.Fprintf(&b, "[no bytes from offset %d of %d", start, size)
	default:
		fmt.Fprintf(&b, "[bytes %d-%d of %d, base64", start, end-1, size)
	}
	if sum != "" {
		b.WriteString("; sha256 " + sum[:12])
	}
	if end < size {
		next := end
		d.NextOffset = &next
		fmt.Fprintf(&b, "; next: offset %d", end)
	}
	b.WriteString("]\n")
	return outcome.Success(b.String(), d)
}
