// Package write replaces a file's whole content, or creates the file, so that
// a reader never sees half of it.
//
//	toolkit write [flags] PATH < content
//	echo '{"path":"notes.txt","content":"hello\n"}' | toolkit write
//
// The new content goes to a temporary file in the target's directory
// (created exclusively, mode 0600 until it is ready), which gets the old
// file's mode and, where permitted, its owner; it is synced, if_match is
// checked once more, and it is renamed over the target; then the directory is
// synced. On any failure the temporary file is removed and the old content is
// untouched. (A kill -9 in the middle can leave the temporary file, named
// .NAME.toolkit-….tmp, beside an untouched target.)
//
// Parent directories are created. A symbolic link is written through: the
// link stays, its target gets the content. A directory, FIFO, socket or device
// is refused. if_match makes the write conditional on the file's current
// sha256 (read --json gives it), or with "absent" on there being no file.
// The content is written byte for byte: no line-ending or Unicode changes.
// In person mode it is stdin, raw bytes of any kind; in JSON mode it is text.
package write

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"unsafe"

	"github.com/urfave/cli/v2"
	"golang.org/x/sys/unix"

	"toolkit/internal/cmdline"
	"toolkit/internal/outcome"
	"toolkit/internal/root"
	"toolkit/internal/tempfile"
)

// Args is the input of one write call.
type Args struct {
	Path    string  `json:"path" flag:"PATH" check:"required,nonempty,nonul" desc:"The file to replace or create. Parent directories are created; a symbolic link is written through."`
	Content string  `json:"content" flag:"stdin" check:"required" desc:"The whole new content of the file, written byte for byte."`
	IfMatch *string `json:"if_match,omitempty" flag:"--if-match SHA256" usage:"write only if the file's sha256 is SHA256 (\"absent\": only if there is no file)" desc:"Write only if the file's current sha256 is this (read --json gives it); \"absent\": only if there is no file."`

	// Host holds the settings a host chooses, not the model.
	Host Options `json:"-"`
}

// Options are the host's settings for a write.
type Options struct {
	// Root, when set, confines the path.
	Root *root.Root
	// Content, when set, is read for the content instead of Args.Content:
	// person mode streams stdin.
	Content io.Reader
	// Hash computes the sha256 of the new content and of the old, for the
	// details (--json asks for it). if_match hashes the old one anyway.
	Hash bool
}

// Details are the facts of a write for --json.
type Details struct {
	Path           string  `json:"path"`
	Bytes          int64   `json:"bytes"`
	Lines          int64   `json:"lines"`
	Created        bool    `json:"created"`
	SHA256         string  `json:"sha256"`
	PreviousSHA256 *string `json:"previous_sha256"`
	// OwnerKept is false when the old file's owner could not be given to
	// the new one (toolkit may not chown); null for a new file.
	OwnerKept *bool `json:"owner_kept"`
}

const blockSize = 256 << 10

// Applet is write's command line and in-process call.
var Applet = cmdline.Applet[Args]{
	Name:     "write",
	Usage:    "replace a file's whole content, or create it, atomically",
	Synopsis: "toolkit write [flags] PATH < content",
	Example:  `{"path":"notes.txt","content":"hello\n"}`,
	Person:   fromStdin,
	Run: func(ctx context.Context, a *Args, h cmdline.Host) outcome.Outcome {
		a.Host.Root, a.Host.Hash = h.Root, h.Details
		o := Run(ctx, *a)
		o.Usage = "toolkit write [flags] PATH < content"
		return o
	},
}

// errNoContent: person mode with a terminal on stdin has nothing to write.
var errNoContent = errors.New("no content: give it on stdin (toolkit write PATH < file)")

// fromStdin takes person mode's content from stdin, as it comes.
func fromStdin(c *cli.Context, a *Args) error {
	if f, ok := c.App.Reader.(*os.File); ok && cmdline.IsTerminal(f) {
		return errNoContent
	}
	a.Host.Content = c.App.Reader
	return nil
}

// Run writes one file.
func Run(_ context.Context, a Args) outcome.Outcome {
	if a.IfMatch != nil && *a.IfMatch != "absent" && !isSHA256(*a.IfMatch) {
		return outcome.Misuse("if_match must be a sha256 (64 hex digits) or \"absent\", not %q", *a.IfMatch)
	}
	r := a.Host.Root
	target, viaLink, err := resolve(r, a.Path)
	if err != nil {
		return outcome.Failure("%s", describe(a.Path, err))
	}
	old, err := r.Lstat(target)
	exists := err == nil
	switch {
	case err != nil && !errors.Is(err, fs.ErrNotExist):
		return outcome.Failure("%s", describe(a.Path, err))
	case exists && old.IsDir():
		return outcome.Failure("%s: is a directory", a.Path)
	case exists && !old.Mode().IsRegular():
		return outcome.Failure("%s: not a regular file", a.Path)
	}

	var previous *string
	if exists && (a.Host.Hash || a.IfMatch != nil) {
		sum, err := hashFile(r, target)
		if err != nil {
			return outcome.Failure("%s", describe(a.Path, err))
		}
		previous = &sum
	}
	if o, ok := conflict(a, previous); !ok {
		return o
	}

	dir := filepath.Dir(target)
	if err := r.MkdirAll(dir, 0o755); err != nil {
		return outcome.Failure("%s: cannot create the directory %s: %s", a.Path, dir, root.Reason(err))
	}
	tmp, err := openTemp(r, dir, filepath.Base(target))
	if err != nil {
		return outcome.Failure("%s: cannot write: %s", a.Path, root.Reason(err))
	}
	defer tmp.close()
	committed := false
	defer func() {
		if !committed {
			tmp.abort(r)
		}
	}()

	counter := &lineCounter{}
	var w io.Writer = io.MultiWriter(tmp.f, counter)
	var h hash.Hash
	if a.Host.Hash {
		h = sha256.New()
		w = io.MultiWriter(tmp.f, counter, h)
	}
	var n int64
	if a.Host.Content != nil {
		// Hide the reader's WriteTo: *os.File's would copy through a
		// 32 KiB buffer of its own, not this one.
		n, err = io.CopyBuffer(w, struct{ io.Reader }{a.Host.Content}, make([]byte, blockSize))
	} else {
		// The content's bytes as they are: io.WriteString through a
		// MultiWriter would copy all of them first.
		var k int
		k, err = w.Write(unsafe.Slice(unsafe.StringData(a.Content), len(a.Content)))
		n = int64(k)
	}
	if err != nil {
		return outcome.Failure("%s: cannot write: %s", a.Path, root.Reason(err))
	}

	d := Details{Path: a.Path, Bytes: n, Lines: counter.lines(), Created: !exists, PreviousSHA256: previous}
	if h != nil {
		d.SHA256 = hex.EncodeToString(h.Sum(nil))
	}
	mode := 0o644 &^ umask()
	if exists {
		mode = old.Mode().Perm() | old.Mode()&(os.ModeSetuid|os.ModeSetgid|os.ModeSticky)
	}
	if err := tmp.f.Chmod(mode); err != nil {
		return outcome.Failure("%s: cannot set the mode: %s", a.Path, root.Reason(err))
	}
	if exists {
		kept := keepOwner(tmp.f, old)
		d.OwnerKept = &kept
	}
	if err := tmp.f.Sync(); err != nil {
		return outcome.Failure("%s: cannot write: %s", a.Path, root.Reason(err))
	}

	// Once more, just before the rename: the file may have changed while
	// the content was written.
	if a.IfMatch != nil {
		now, err := currentHash(r, target)
		if err != nil {
			return outcome.Failure("%s", describe(a.Path, err))
		}
		if o, ok := conflict(a, now); !ok {
			return o
		}
	}
	if err := tmp.commit(r, target); err != nil {
		return outcome.Failure("%s: cannot write: %s", a.Path, root.Reason(err))
	}
	committed = true
	if err := syncDir(r, dir); err != nil {
		return outcome.Failure("%s: written, but the directory could not be synced: %s", a.Path, root.Reason(err))
	}

	var text string
	if exists {
		text = fmt.Sprintf("wrote %d bytes (%s) to %s", n, lines(d.Lines), a.Path)
	} else {
		text = fmt.Sprintf("created %s: %d bytes (%s)", a.Path, n, lines(d.Lines))
	}
	if viaLink {
		text += " (through the link, to " + target + ")"
	}
	if exists {
		if st, ok := old.Sys().(*syscall.Stat_t); ok && st.Nlink > 1 {
			text += fmt.Sprintf("; its %d other hard links keep the old content", st.Nlink-1)
		}
	}
	return outcome.Success(text+"\n", d)
}

func lines(n int64) string {
	if n == 1 {
		return "1 line"
	}
	return strconv.FormatInt(n, 10) + " lines"
}

func isSHA256(s string) bool {
	if len(s) != 64 {
		return false
	}
	_, err := hex.DecodeString(s)
	return err == nil
}

// conflict checks if_match against the file's current sha256 (nil: no
// file), and returns the tool error when they disagree.
func conflict(a Args, current *string) (outcome.Outcome, bool) {
	if a.IfMatch == nil {
		return outcome.Outcome{}, true
	}
	want := strings.ToLower(*a.IfMatch)
	switch {
	case want == "absent" && current != nil:
		return outcome.Failure("%s: changed since it was read (it exists now, sha256 %s)", a.Path, *current), false
	case want != "absent" && current == nil:
		return outcome.Failure("%s: changed since it was read (it no longer exists)", a.Path), false
	case want != "absent" && *current != want:
		return outcome.Failure("%s: changed since it was read (sha256 now %s)", a.Path, *current), false
	}
	return outcome.Outcome{}, true
}

// temp is the new content on its way: an unnamed file (O_TMPFILE) in the
// target's directory where the file system has them, which nothing can see
// and which vanishes with toolkit should it be killed; else a named one,
// created exclusively.
type temp struct {
	f    *os.File
	dir  *os.File // the directory, for an unnamed file
	name string   // the named file's path
}

func openTemp(r *root.Root, dir, base string) (*temp, error) {
	d, err := r.OpenFile(dir, os.O_RDONLY|syscall.O_DIRECTORY, 0)
	if err != nil {
		return nil, err
	}
	if _, err := os.Stat("/proc/self/fd"); err == nil {
		if fd, err := unix.Openat(int(d.Fd()), ".", unix.O_TMPFILE|unix.O_WRONLY|unix.O_CLOEXEC, 0o600); err == nil {
			return &temp{f: os.NewFile(uintptr(fd), filepath.Join(dir, base)), dir: d}, nil
		}
	}
	d.Close()
	name := filepath.Join(dir, tempfile.Name("."+base+".toolkit-", ".tmp"))
	f, err := r.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, 0o600)
	if err != nil {
		return nil, err
	}
	return &temp{f: f, name: name}, nil
}

// commit puts the content in place of target, in one rename.
func (t *temp) commit(r *root.Root, target string) error {
	if t.dir == nil {
		if err := t.f.Close(); err != nil {
			return err
		}
		return r.Rename(t.name, target)
	}
	// Give the unnamed file a name, then rename it over the target: both
	// relative to the directory opened inside the root.
	dfd := int(t.dir.Fd())
	name := tempfile.Name("."+filepath.Base(target)+".toolkit-", ".tmp")
	err := unix.Linkat(unix.AT_FDCWD, "/proc/self/fd/"+strconv.Itoa(int(t.f.Fd())), dfd, name, unix.AT_SYMLINK_FOLLOW)
	t.f.Close()
	if err != nil {
		return &fs.PathError{Op: "link", Path: target, Err: err}
	}
	if err := unix.Renameat(dfd, name, dfd, filepath.Base(target)); err != nil {
		_ = unix.Unlinkat(dfd, name, 0)
		return &fs.PathError{Op: "rename", Path: target, Err: err}
	}
	return nil
}

// abort drops the content: an unnamed file goes with its descriptor.
func (t *temp) abort(r *root.Root) {
	t.f.Close()
	if t.dir == nil {
		_ = r.Remove(t.name)
	}
}

func (t *temp) close() {
	if t.dir != nil {
		t.dir.Close()
	}
}

// resolve follows symbolic links at the end of path to the file they name,
// so that the link stays and its target gets the content. Under a root, a
// link's target must stay inside it, and an absolute one is refused, as
// os.Root refuses them everywhere else.
func resolve(r *root.Root, path string) (string, bool, error) {
	cur := path
	for range 40 {
		fi, err := r.Lstat(cur)
		if err != nil || fi.Mode()&fs.ModeSymlink == 0 {
			if errors.Is(err, fs.ErrNotExist) {
				err = nil
			}
			return cur, cur != path, err
		}
		link, err := r.Readlink(cur)
		if err != nil {
			return "", false, err
		}
		if filepath.IsAbs(link) {
			if r != nil {
				return "", false, &fs.PathError{Op: "readlink", Path: path, Err: root.ErrOutside}
			}
			cur = link
		} else {
			cur = filepath.Join(filepath.Dir(cur), link)
		}
	}
	return "", false, &fs.PathError{Op: "readlink", Path: path, Err: syscall.ELOOP}
}

// hashFile is the sha256 of a regular file's bytes.
func hashFile(r *root.Root, path string) (string, error) {
	f, err := r.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOCTTY, 0)
	if err != nil {
		return "", err
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return "", &fs.PathError{Op: "open", Path: path, Err: errNotRegular}
	}
	h := sha256.New()
	if _, err := io.CopyBuffer(h, struct{ io.Reader }{f}, make([]byte, blockSize)); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

var errNotRegular = errors.New("not a regular file")

// currentHash is the file's sha256 now, or nil when there is no file.
func currentHash(r *root.Root, path string) (*string, error) {
	sum, err := hashFile(r, path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return &sum, nil
}

// keepOwner gives f the old file's owner and group, and reports whether it
// could (only root, or the owner keeping its own group, may).
func keepOwner(f *os.File, old os.FileInfo) bool {
	st, ok := old.Sys().(*syscall.Stat_t)
	if !ok {
		return false
	}
	if int(st.Uid) == os.Geteuid() && int(st.Gid) == os.Getegid() {
		return true
	}
	return f.Chown(int(st.Uid), int(st.Gid)) == nil
}

func syncDir(r *root.Root, dir string) error {
	d, err := r.OpenFile(dir, os.O_RDONLY|syscall.O_DIRECTORY, 0)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// lineCounter counts lines as the content goes by: its line ends, and one
// more for a last line without one.
type lineCounter struct {
	n    int64
	last byte
	any  bool
}

func (c *lineCounter) Write(p []byte) (int, error) {
	if len(p) > 0 {
		c.n += int64(bytes.Count(p, []byte{'\n'}))
		c.last, c.any = p[len(p)-1], true
	}
	return len(p), nil
}

func (c *lineCounter) lines() int64 {
	if c.any && c.last != '\n' {
		return c.n + 1
	}
	return c.n
}

// umask is the process's file mode creation mask, read once from /proc
// (setting it to read it back would race with other goroutines' creates).
func umask() os.FileMode {
	umaskOnce.Do(func() {
		umaskValue = 0o022
		b, err := os.ReadFile("/proc/self/status")
		if err != nil {
			return
		}
		for _, l := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(l, "Umask:"); ok {
				if n, err := strconv.ParseUint(strings.TrimSpace(v), 8, 32); err == nil {
					umaskValue = os.FileMode(n)
				}
			}
		}
	})
	return umaskValue
}

var (
	umaskOnce  sync.Once
	umaskValue os.FileMode
)

// describe words an error for path.
func describe(path string, err error) string {
	if errors.Is(err, errNotRegular) {
		return path + ": not a regular file"
	}
	return path + ": " + root.Reason(err)
}

// Description tells a model when to use write and what it returns.
const Description = `Create a file in the sandbox, or replace its whole content. Use it to write new files and to save edited ones: give the complete new content, not a change.

The content is written byte for byte (no newline is added or removed) and atomically: anyone reading the file sees the old content or the new one, never a mix. Parent directories are created; a symbolic link is written through to its target. Returns the number of bytes and lines written.

To be sure you are not overwriting changes you have not seen, pass if_match: the sha256 the read tool gave for the file, or "absent" to only create a new file. If the file changed since, nothing is written and the error says so; read it again.`
