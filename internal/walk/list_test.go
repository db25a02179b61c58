package walk

import (
	"encoding/binary"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"golang.org/x/sys/unix"
)

// typesDir makes a directory with one entry of each kind a tree holds.
func typesDir(t *testing.T) (string, map[string]fs.FileMode) {
	dir := t.TempDir()
	want := map[string]fs.FileMode{"file": 0, "dir": fs.ModeDir, "link": fs.ModeSymlink, "fifo": fs.ModeNamedPipe, ".hidden": 0}
	for _, err := range []error{
		os.WriteFile(filepath.Join(dir, "file"), []byte("x"), 0o644),
		os.WriteFile(filepath.Join(dir, ".hidden"), nil, 0o644),
		os.Mkdir(filepath.Join(dir, "dir"), 0o755),
		os.Symlink("file", filepath.Join(dir, "link")),
		unix.Mkfifo(filepath.Join(dir, "fifo"), 0o644),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
	return dir, want
}

func openDirFD(t *testing.T, dir string) int {
	fd, err := unix.Open(dir, dirFlags, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Close(fd) })
	return fd
}

func asMap(entries []dirent) map[string]fs.FileMode {
	m := map[string]fs.FileMode{}
	for _, e := range entries {
		m[e.name] = e.typ
	}
	return m
}

// TestListTypes: a directory is listed with every entry's name and type,
// as os.ReadDir lists it, without "." and "..".
func TestListTypes(t *testing.T) {
	dir, want := typesDir(t)
	var l lister
	entries, err := l.list(openDirFD(t, dir))
	if err != nil {
		t.Fatal(err)
	}
	if got := asMap(entries); !maps.Equal(got, want) {
		t.Fatalf("listed %v, want %v", got, want)
	}
}

// TestListManyEntries: a directory larger than the buffer is listed in
// several reads, every entry once.
func TestListManyEntries(t *testing.T) {
	dir := t.TempDir()
	var want []string
	for i := range 3000 {
		name := filepath.Join(dir, fmt.Sprintf("a-rather-long-name-for-a-file-to-fill-the-buffer-%04d", i))
		if err := os.WriteFile(name, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		want = append(want, filepath.Base(name))
	}
	var l lister
	entries, err := l.list(openDirFD(t, dir))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range entries {
		got = append(got, e.name)
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("listed %d entries, want %d", len(got), len(want))
	}
}

// record is one struct linux_dirent64 of the name and type.
func record(ino uint64, kind byte, name string) []byte {
	size := (direntHead + len(name) + 1 + 7) &^ 7
	b := make([]byte, size)
	binary.NativeEndian.PutUint64(b, ino)
	binary.NativeEndian.PutUint16(b[16:], uint16(size))
	b[18] = kind
	copy(b[direntHead:], name)
	return b
}

// TestListUnknownTypes: where the file system says no type (DT_UNKNOWN,
// as some do), each entry's type is asked of the entry itself; one gone
// since is left out, and so is a record of inode 0.
func TestListUnknownTypes(t *testing.T) {
	dir, want := typesDir(t)
	var b []byte
	for name := range want {
		b = append(b, record(1, unix.DT_UNKNOWN, name)...)
	}
	b = append(b, record(1, unix.DT_UNKNOWN, "gone")...)
	b = append(b, record(0, unix.DT_REG, "deleted")...)
	b = append(b, record(1, unix.DT_DIR, ".")...)
	var l lister
	l.parse(openDirFD(t, dir), b)
	if got := asMap(l.entries); !maps.Equal(got, want) {
		t.Fatalf("parsed %v, want %v", got, want)
	}
}

// FuzzParseDirents: whatever the buffer holds, parsing stops within it and
// every name it gives is one the buffer holds, none empty.
func FuzzParseDirents(f *testing.F) {
	f.Add(append(record(1, unix.DT_REG, "a.go"), record(2, unix.DT_DIR, "sub")...))
	f.Add(record(1, unix.DT_UNKNOWN, "x")[:20])
	f.Add([]byte{})
	fd, err := unix.Open(f.TempDir(), dirFlags, 0)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var l lister
		l.parse(fd, b)
		for _, e := range l.entries {
			if e.name == "" || len(e.name) > len(b) {
				t.Fatalf("an entry %q from %d bytes", e.name, len(b))
			}
		}
	})
}
