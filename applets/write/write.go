// Package write replaces a file's whole content, or creates the file, so that
// a reader never sees half of it.
//
//	toolkit write [flags] PATH < content
//	echo '{"path":"notes.txt","content":"hello\n"}' | toolkit write
//
// The new content takes the file's place through internal/replace: written
// beside it, given its owner and mode, synced, if_match checked once more
// under the directory's lock, renamed over it, the directory synced. On any
// failure the old content is untouched and no temporary file is left.
//
// Parent directories are created. A symbolic link is written through: the
// link stays, its target gets the content (links are followed component by
// component, as the kernel does). A directory, FIFO, socket or device is
// refused. if_match makes the write conditional on the file's current sha256
// (read --json gives it; 12 hex digits or more of it), or with "absent" on
// there being no file. The content is written byte for byte: no line-ending
// or Unicode changes. In person mode it is stdin, raw bytes of any kind; in
// JSON mode it is text.
package write

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/urfave/cli/v2"

	"toolkit/internal/cmdline"
	"toolkit/internal/diag"
	"toolkit/internal/history/track"
	"toolkit/internal/outcome"
	"toolkit/internal/replace"
	"toolkit/internal/root"
	"toolkit/internal/text"
)

// Args is the input of one write call.
type Args struct {
	Path     string  `json:"path" flag:"PATH" check:"required,nonempty,nonul" desc:"The file to replace or create. Parent directories are created; a symbolic link is written through."`
	Content  []byte  `json:"content" flag:"stdin" check:"required" desc:"The whole new content of the file, written byte for byte."`
	Encoding *string `json:"encoding,omitempty" flag:"--encoding NAME" usage:"text (default) or base64: content is base64, decoded before it is written" check:"oneof=text base64" desc:"text (default): content is written as it is. base64: content is the file's bytes in base64 (a binary file, an image, an archive), decoded before it is written."`
	IfMatch  *string `json:"if_match,omitempty" flag:"--if-match SHA256" usage:"write only if the file's sha256 is SHA256 (\"absent\": only if there is no file)" check:"ifmatch" desc:"Write only if the file's current sha256 is this, or starts with this (12 or more hex digits; read gives it); \"absent\": only if there is no file."`
	diag.Fields

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
	// Hash computes the sha256 of the old content, for the details (--json
	// asks for it); if_match hashes it anyway. The new one's is always
	// computed on the way to the file.
	Hash bool
	// Keeps, when history follows the call, is the largest old content it
	// keeps: read before it is replaced.
	Keeps int64
}

// Details are the facts of a write for --json.
type Details struct {
	Path           string  `json:"path"`
	Bytes          int64   `json:"bytes"`
	Lines          *int64  `json:"lines"` // null for bytes that are not text (read's rule)
	Created        bool    `json:"created"`
	SHA256         string  `json:"sha256"`
	PreviousSHA256 *string `json:"previous_sha256"`
	// OwnerKept is false when the old file's owner could not be given to
	// the new one (toolkit may not chown); null for a new file.
	OwnerKept *bool `json:"owner_kept"`
	// InPlace says why the file was written in place, not atomically.
	InPlace string `json:"in_place,omitempty"`
}

const usage = "toolkit write [flags] PATH < content"

// Applet is write's command line and in-process call.
var Applet = cmdline.Applet[Args]{
	Name:        "write",
	Usage:       "replace a file's whole content, or create it, atomically",
	Synopsis:    usage,
	Example:     `{"path":"notes.txt","content":"hello\n"}`,
	Description: Description,
	Details:     Details{},
	Hints:       cmdline.Hints{Idempotent: true, Destructive: true},
	Person:      fromStdin,
	Settings:    cmdline.JoinSettings(track.Settings, diag.Settings),
	Around:      []cmdline.Around{diag.Around, track.Said},
	Run: func(ctx context.Context, a *Args, h cmdline.Host) outcome.Outcome {
		a.Host.Root, a.Host.Hash, a.Host.Keeps = h.Root, h.Details, h.Keeps
		return Run(ctx, *a)
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

const blockSize = 256 << 10

// Run writes one file.
func Run(_ context.Context, a Args) outcome.Outcome {
	if a.Encoding != nil && *a.Encoding == "base64" {
		if a.Host.Content != nil {
			a.Host.Content = base64.NewDecoder(base64.StdEncoding, newlineless{a.Host.Content})
		} else {
			b, err := base64.StdEncoding.DecodeString(strings.Map(dropSpace, string(a.Content)))
			if err != nil {
				return outcome.Misuse("input: content is not base64: %s; nothing was written", err)
			}
			a.Content = b
		}
	}
	r := a.Host.Root
	// The name as the lines below say it: a newline in it cannot pass for
	// a line of their own.
	name := text.Escape(a.Path)
	target, err := r.Resolve(a.Path)
	if err != nil {
		return outcome.Failure("%s", describe(name, err))
	}
	expect := replace.Expect{}
	if a.IfMatch != nil {
		expect = replace.IfMatch(*a.IfMatch)
	}
	// The old content, for history, when it keeps one of this size.
	var before []byte
	if a.Host.Keeps > 0 {
		before, _, _ = replace.ReadUpTo(r, target, a.Host.Keeps)
	}
	var previous *string
	if a.Host.Hash || a.IfMatch != nil {
		sum, err := replace.HashFile(r, target)
		switch {
		case err == nil:
			previous = &sum
		case !errors.Is(err, fs.ErrNotExist):
			return outcome.Failure("%s", describe(name, err))
		}
		// A first look, before the content is written: a stale if_match
		// costs nothing then. Commit looks once more.
		if err := expect.Check(previous); err != nil {
			return outcome.Failure("%s: %s", name, err)
		}
	}

	counter := &lineCounter{}
	h := sha256.New()
	var n int64
	staged, err := replace.Stage(r, target, func(f io.Writer) error {
		var err error
		n, err = copyContent(f, a, counter, h)
		return err
	})
	if err != nil {
		return outcome.Failure("%s", replace.CannotWrite(name, err))
	}
	res, err := staged.Commit(expect)
	var changed *replace.Changed
	switch {
	case errors.As(err, &changed):
		return outcome.Failure("%s: %s", name, changed)
	case err != nil:
		return outcome.Failure("%s", replace.CannotWrite(name, err))
	}

	exists := staged.Old != nil
	var after []byte
	if a.Host.Content == nil {
		after = a.Content
	}
	wrote := outcome.Wrote{Path: hostPath(r, target), Before: before, Existed: exists, After: after, Exists: true}
	d := Details{Path: a.Path, Bytes: n, Created: !exists, PreviousSHA256: previous, OwnerKept: staged.OwnerKept, InPlace: res.InPlace}
	d.SHA256 = hex.EncodeToString(h.Sum(nil))
	// Lines are said of text only, as read tells text from bytes.
	kind := "binary"
	if _, err := text.Binary(counter.head, n); err == nil {
		lines := counter.lines()
		d.Lines, kind = &lines, text.Count(lines, "line")
	}
	var b strings.Builder
	if exists {
		fmt.Fprintf(&b, "wrote %d bytes (%s) to %s", n, kind, name)
	} else {
		fmt.Fprintf(&b, "created %s: %d bytes (%s)", name, n, kind)
	}
	if shown := shownPath(a.Path, target, r); shown != "" {
		b.WriteString(" (through the link, to " + text.Escape(shown) + ")")
	}
	b.WriteString("; sha256 " + d.SHA256[:12])
	if exists {
		if st, ok := staged.Old.Sys().(*syscall.Stat_t); ok && st.Nlink > 1 && res.InPlace == "" {
			fmt.Fprintf(&b, "; its %d other hard links keep the old content", st.Nlink-1)
		}
	}
	b.WriteByte('\n')
	if res.InPlace != "" {
		fmt.Fprintf(&b, "[written in place: %s; not atomic]\n", res.InPlace)
	}
	if staged.OwnerKept != nil && !*staged.OwnerKept {
		if st, ok := staged.Old.Sys().(*syscall.Stat_t); ok {
			fmt.Fprintf(&b, "[the owner could not be kept: it was uid %d, gid %d; the file is toolkit's user's now]\n", st.Uid, st.Gid)
		}
	}
	o := outcome.Success(b.String(), d)
	o.Wrote = []outcome.Wrote{wrote}
	return o
}

// hostPath is where target, a path the root resolved, is on the host.
func hostPath(r *root.Root, target string) string {
	p, err := r.HostPath(target)
	if err != nil {
		return target
	}
	abs, _ := filepath.Abs(p)
	return abs
}

// dropSpace drops the blanks and line ends base64 text may be wrapped in.
func dropSpace(r rune) rune {
	if r == ' ' || r == '\t' || r == '\n' || r == '\r' {
		return -1
	}
	return r
}

// newlineless reads base64 text without the blanks and line ends it is
// wrapped in (base64 -w 76 makes them), those dropSpace drops.
type newlineless struct{ r io.Reader }

func (n newlineless) Read(p []byte) (int, error) {
	for {
		k, err := n.r.Read(p)
		j := 0
		for _, c := range p[:k] {
			if dropSpace(rune(c)) >= 0 {
				p[j] = c
				j++
			}
		}
		if j > 0 || err != nil || k == 0 {
			return j, err
		}
	}
}

// copyContent writes the content to f, counting its lines and hashing it on
// the way, and returns its size.
func copyContent(f io.Writer, a Args, counter *lineCounter, h hash.Hash) (int64, error) {
	w := io.MultiWriter(counter, h)
	if a.Host.Content != nil {
		// Hide the reader's WriteTo: *os.File's would copy through a
		// 32 KiB buffer of its own, not this one.
		return io.CopyBuffer(io.MultiWriter(f, w), struct{ io.Reader }{a.Host.Content}, make([]byte, blockSize))
	}
	k, err := f.Write(a.Content)
	if err == nil {
		_, _ = w.Write(a.Content)
	}
	return int64(k), err
}

// shownPath is where a path through links really led, for the text: relative
// to the working directory (or the root) when it is below it; "" when the
// path had no link.
func shownPath(path, target string, r *root.Root) string {
	spelled := filepath.Clean(root.Expand(path))
	if r != nil {
		if rel, err := r.Rel(path); err == nil {
			spelled = filepath.Clean(rel)
		}
	}
	if spelled == target {
		return ""
	}
	if filepath.IsAbs(target) && r == nil {
		if wd, err := os.Getwd(); err == nil {
			if rel, err := filepath.Rel(wd, target); err == nil && !strings.HasPrefix(rel, "..") {
				return rel
			}
		}
	}
	return target
}

// describe words an error for path.
func describe(path string, err error) string { return path + ": " + replace.Reason(err) }

// lineCounter counts lines as the content goes by: its line ends, and one
// more for a last line without one. It keeps the content's first
// text.SniffSize bytes, by which text is told from bytes.
type lineCounter struct {
	n    int64
	last byte
	any  bool
	head []byte
}

func (c *lineCounter) Write(p []byte) (int, error) {
	if len(c.head) < text.SniffSize {
		c.head = append(c.head, p[:min(len(p), text.SniffSize-len(c.head))]...)
	}
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

// Description tells a model when to use write and what it returns.
const Description = `Create a file in the sandbox, or replace its whole content. Use it to write new files and to save edited ones: give the complete new content, not a change.

The content is written byte for byte (no newline is added or removed) and atomically: anyone reading the file sees the old content or the new one, never a mix. Parent directories are created; a symbolic link is written through to its target. Returns the number of bytes and lines written and the new content's sha256 (its first 12 hex digits, which if_match takes).

To be sure you are not overwriting changes you have not seen, pass if_match: the sha256 the read tool gave for the file, or "absent" to only create a new file. If the file changed since, nothing is written and the error says so; read it again.`
