package replace

import (
	"fmt"
	"os"
)

// WriteFile writes a small file of toolkit's own state whole (history's
// index parts, its call log, a pack's sorted records): a temporary file,
// renamed, or removed if the write failed; synced first where a machine's
// crash must not lose it. A kill never leaves it half written either way:
// the page cache outlives the process.
func WriteFile(path string, b []byte, sync bool) error {
	tmp := path + ".tmp"
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	_, err = f.Write(b)
	if err == nil && sync {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
	}
	return err
}

// lineWidth is the width WriteLine pads a line to.
const lineWidth = 64

// WriteLine writes a small file of one line in place, padded with spaces
// to 64 bytes: no truncation and no rename, each of which ext4
// (auto_da_alloc) follows with a flush of the file's data (0.2 ms a
// rewrite on the machine the figures come from, against 8 µs in place).
// One write of 64 bytes at its start is whole or not made for a kill; a
// crash of the machine may leave the file as it was, or unreadable. Its
// readers trim the spaces.
func WriteLine(path, line string) error {
	if len(line) >= lineWidth {
		return fmt.Errorf("%s: a line of %d bytes is over %d", path, len(line), lineWidth-1)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE, 0o600)
	if err != nil {
		return err
	}
	b := make([]byte, lineWidth)
	copy(b, line)
	for i := len(line); i < lineWidth-1; i++ {
		b[i] = ' '
	}
	b[lineWidth-1] = '\n'
	_, err = f.WriteAt(b, 0)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}
