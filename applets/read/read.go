// Package read shows a text file as numbered lines, the way a model can quote
// them back.
//
//	toolkit read [flags] PATH
//	echo '{"path":"main.go","offset":10,"limit":20}' | toolkit read
//
// Each line is "%6d\t" and the line, as cat -n prints it, without its
// terminator; a line longer than 2000 characters is cut there and ends with
// "… [line cut: N characters]", N the characters left out. offset picks the
// first line (from 1); a negative offset counts from the end (-100: the last
// 100 lines). limit is how many lines (default 2000); at most 256 KiB of text
// is shown. A last line says what was shown, the file's sha256 when toolkit
// read all of it, and how to go on when more lines follow:
//
//	[lines 1-2000 of 53211; sha256 1a2b3c4d5e6f; next: offset 2001]
//
// A call costs what the lines it shows cost: a file of at most 64 MiB is read
// whole (for its sha256 and its count of lines); a larger one only as far as
// the lines shown, and 1 MiB on to learn the total. The end of a larger file
// is found by reading backwards, so the count of lines before it is not
// known: those lines are numbered from the end (-100 … -1), each number the
// offset that reaches it. A line is counted up to 64 MiB, then said to be
// longer than that.
//
// An empty file is "[empty file]". A UTF-8 BOM is dropped; UTF-16 and UTF-32
// with a BOM are decoded when they decode validly; CRLF lines are shown
// without "\r", noted once at the end; stray invalid bytes become U+FFFD. A
// file with a NUL in its first 8 KiB, or mostly invalid UTF-8, is refused as
// binary. A file that says it is empty or reads short (/proc, sysfs) is read
// to its end, up to 64 MiB. A directory lists its entries, sorted,
// directories with a trailing "/", control characters in names escaped as ls
// -b does. FIFOs, sockets and devices are refused before anything reads
// them, so reading never hangs.
//
// A picture (PNG, JPEG, GIF, WebP, by its first bytes) is answered as the
// picture itself, scaled down to the host's limits, and a line that says
// what was sent (image.go); a PDF as the document and a line with its size
// and pages, or, with pages, those pages as text through pdftotext
// (pdf.go).
package read

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"syscall"

	"toolkit/internal/cmdline"
	"toolkit/internal/jobs"
	"toolkit/internal/outcome"
	"toolkit/internal/replace"
	"toolkit/internal/root"
)

// Args is the input of one read call.
type Args struct {
	Path     string  `json:"path" flag:"PATH" check:"required,nonempty,nonul" desc:"The file (or directory) to show. Relative paths start at the working directory (at the root with --root); ~ is the home directory."`
	Offset   *int    `json:"offset,omitempty" flag:"--offset N" usage:"first line to show, from 1; N < 0 counts from the end" desc:"The first line to show, from 1. Negative counts from the end: -100 shows the last 100 lines."`
	Limit    *int    `json:"limit,omitempty" flag:"--limit N" usage:"show N lines (default 2000)" check:"min=1" desc:"How many lines to show; default 2000."`
	Encoding *string `json:"encoding,omitempty" flag:"--encoding NAME" usage:"text (default), or base64: the file's bytes, offset and limit in bytes" check:"oneof=text base64" desc:"text (default): numbered lines. base64: the file's bytes, any file's, base64-encoded; offset (from 0; negative from the end) and limit are then in bytes."`
	MaxBytes *int    `json:"max_bytes,omitempty" check:"min=1" desc:"The most text to show, in bytes; the last line then says where to go on. Default and ceiling: the host's (256 KiB, or 100 KiB through toolkit mcp)."`
	Region   []int   `json:"region,omitempty" flag:"--region X,Y,W,H" usage:"of a picture, show only this part (in its own pixels), before it is scaled" desc:"For a picture: [x, y, width, height] in the picture's own pixels. Only that part is shown, cropped before it is scaled down, so small text in a large screenshot can be read."`
	Pages    *string `json:"pages,omitempty" flag:"--pages RANGE" usage:"of a PDF, these pages as numbered text (\"3-7\"), through pdftotext" desc:"For a PDF: the pages to show as numbered text, such as \"3-7\" or \"5\" (needs pdftotext). Without it, the PDF itself is shown to you as a document."`

	// Host holds the settings a host chooses, not the model.
	Host Options `json:"-"`
}

// Options are the host's settings for a read.
type Options struct {
	// Root, when set, confines the path.
	Root *root.Root
	// MaxText is the most text shown, and the most a call's max_bytes may
	// ask; default MaxText.
	MaxText int
	// A picture over these is scaled down (0: the defaults,
	// DefaultImageMaxEdge and the others).
	ImageMaxEdge, ImageMaxPixels, ImageMaxBytes int
	// A PDF over these is refused as a document (0: DefaultPDFMaxBytes,
	// DefaultPDFMaxPages).
	PDFMaxBytes, PDFMaxPages int
}

// Details are the facts of a read for --json.
type Details struct {
	Path       string      `json:"path"`
	Kind       string      `json:"kind"` // "file" or "directory"
	SHA256     *string     `json:"sha256"`
	Bytes      int64       `json:"bytes"`
	FirstLine  int64       `json:"first_line"`
	LinesShown int64       `json:"lines_shown"`
	TotalLines *int64      `json:"total_lines"`
	NextOffset *int64      `json:"next_offset"`
	Image      *ImageFacts `json:"image,omitempty"` // kind "image"
	PDF        *PDFFacts   `json:"pdf,omitempty"`   // kind "pdf"
}

// Limits.
const (
	DefaultLimit = 2000
	MaxText      = 256 << 10 // the most text shown
	// MaxWhole is the largest file read whole, for its sha256 and its
	// count of lines; and the most a line is counted, a file read from its
	// end, or a file of unknown size read.
	MaxWhole   = 64 << 20
	countAhead = 1 << 20 // read on this far to learn the total
	blockSize  = 64 << 10
)

// Applet is read's command line and in-process call.
var Applet = cmdline.Applet[Args]{
	Name:        "read",
	Usage:       "show a text file as numbered lines (or a directory's entries)",
	Synopsis:    "toolkit read [flags] PATH",
	Example:     `{"path":"main.go","offset":10,"limit":20}`,
	Description: Description,
	Details:     Details{},
	Hints:       cmdline.Hints{ReadOnly: true, Idempotent: true},
	Settings:    Settings,
	Run: func(ctx context.Context, a *Args, h cmdline.Host) outcome.Outcome {
		a.Host = Options{Root: h.Root}
		if s := h.Settings; s != nil {
			a.Host.MaxText = MaxBytes.Get(s)
			a.Host.ImageMaxEdge, a.Host.ImageMaxPixels, a.Host.ImageMaxBytes = ImageMaxEdge.Get(s), ImageMaxPixels.Get(s), ImageMaxBytes.Get(s)
			a.Host.PDFMaxBytes, a.Host.PDFMaxPages = PDFMaxBytes.Get(s), PDFMaxPages.Get(s)
		}
		return Run(ctx, *a)
	},
}

// The settings a host gives every read; toolkit mcp and toolkit call take
// them too, with a text limit of their own (MCPMaxText).
var (
	MaxBytes       = &cmdline.Setting[int]{Name: "max-bytes", Env: "TOOLKIT_MAX_BYTES", Person: MaxText, Model: MCPMaxText, Usage: "show at most `BYTES` of text; the most a call's max_bytes may ask"}
	ImageMaxEdge   = &cmdline.Setting[int]{Name: "image-max-edge", Env: "TOOLKIT_IMAGE_MAX_EDGE", Person: DefaultImageMaxEdge, Usage: "scale a picture down to at most `PIXELS` a side"}
	ImageMaxPixels = &cmdline.Setting[int]{Name: "image-max-pixels", Env: "TOOLKIT_IMAGE_MAX_PIXELS", Person: DefaultImageMaxPixels, Usage: "scale a picture down to at most `PIXELS` in all"}
	ImageMaxBytes  = &cmdline.Setting[int]{Name: "image-max-bytes", Env: "TOOLKIT_IMAGE_MAX_BYTES", Person: DefaultImageMaxBytes, Usage: "send a picture of at most `BYTES` in base64, scaling it down further if need be"}
	PDFMaxBytes    = &cmdline.Setting[int]{Name: "pdf-max-bytes", Env: "TOOLKIT_PDF_MAX_BYTES", Person: DefaultPDFMaxBytes, Usage: "send a PDF of at most `BYTES` as a document"}
	PDFMaxPages    = &cmdline.Setting[int]{Name: "pdf-max-pages", Env: "TOOLKIT_PDF_MAX_PAGES", Person: DefaultPDFMaxPages, Usage: "send a PDF of at most `PAGES` as a document"}

	Settings = []cmdline.AnySetting{MaxBytes, ImageMaxEdge, ImageMaxPixels, ImageMaxBytes, PDFMaxBytes, PDFMaxPages}
)

// MCPMaxText is toolkit mcp's default for the text of a read: about 25k
// tokens.
const MCPMaxText = 100 << 10

// maxText is the most text a call shows: its max_bytes, up to the host's
// ceiling.
func maxText(a Args) int {
	n := a.Host.MaxText
	if n <= 0 {
		n = MaxText
	}
	if a.MaxBytes != nil {
		n = min(n, *a.MaxBytes)
	}
	return n
}

// Run reads one file and returns what to show.
func Run(ctx context.Context, a Args) outcome.Outcome {
	limit := int64(DefaultLimit)
	if a.Limit != nil {
		limit = int64(*a.Limit)
	}
	offset := int64(1)
	if a.Offset != nil && *a.Offset != 0 {
		offset = int64(*a.Offset) // 0 is taken as the start, as models often mean it
	}
	// No file has that many lines: the arithmetic below cannot overflow.
	offset = max(-math.MaxInt64/4, min(offset, math.MaxInt64/4))
	limit = min(limit, math.MaxInt64/4)

	if a.Region != nil && len(a.Region) != 4 {
		return outcome.Misuse("input: region must be [x, y, width, height], not %d numbers", len(a.Region))
	}
	r := a.Host.Root
	if own, ok := ownOutput(r, a.Path); ok {
		defer own.Close()
		r = own
	}
	fi, err := r.Stat(a.Path)
	if err != nil {
		return outcome.Failure("%s", describe(r, a.Path, err))
	}
	base64 := a.Encoding != nil && *a.Encoding == "base64"
	if fi.IsDir() && base64 {
		return outcome.Failure("%s: a directory: encoding base64 reads a file's bytes", a.Path)
	}
	if fi.IsDir() {
		return listDir(a, offset, limit)
	}
	if !fi.Mode().IsRegular() {
		return outcome.Failure("%s: not a regular file", a.Path)
	}
	// Opened without waiting on anything, and checked again on the open
	// descriptor: a file swapped for a FIFO after the stat is still refused.
	f, err := r.OpenFile(a.Path, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOCTTY, 0)
	if err != nil {
		return outcome.Failure("%s", describe(r, a.Path, err))
	}
	defer f.Close()
	if fi, err = f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return outcome.Failure("%s: not a regular file", a.Path)
	}
	if base64 {
		return readBytes(a, f, fi.Size())
	}
	src, err := openSource(ctx, f, fi.Size())
	if err != nil {
		return outcome.Failure("%s: %s", a.Path, root.Reason(err))
	}
	if typ := mediaType(src.head); typ != "" {
		return readMedia(ctx, a, src, typ)
	}
	if o, bad := misplaced(a, ""); bad {
		return o
	}
	rd := &fileReader{ctx: ctx, a: a, src: src, offset: offset, limit: limit, maxText: maxText(a)}
	return rd.run()
}

// ownOutput returns, under a root, a root for the directory of a file
// toolkit named in its text for the model to read (jobs.Named): a model
// confined to the root must be able to read what it was told to read. The
// file must be a regular one of toolkit's own user, and os.Root follows no
// link out of its directory.
func ownOutput(r *root.Root, path string) (*root.Root, bool) {
	dir, ok := jobs.Named(path)
	if r == nil || !ok {
		return nil, false
	}
	own, err := root.Open(dir)
	if err != nil {
		return nil, false
	}
	if fi, err := own.Lstat(path); err == nil && fi.Mode().IsRegular() {
		if st, ok := fi.Sys().(*syscall.Stat_t); ok && int(st.Uid) == os.Geteuid() {
			return own, true
		}
	}
	own.Close()
	return nil, false
}

// describe words an error for path as write and edit do ("no such file",
// "permission denied", …), naming the part of the path that is a file.
func describe(r *root.Root, path string, err error) string {
	if errors.Is(err, syscall.ENOTDIR) {
		for dir := filepath.Dir(path); dir != "." && dir != "/" && dir != path; dir = filepath.Dir(dir) {
			if fi, err := r.Stat(dir); err == nil && !fi.IsDir() {
				return fmt.Sprintf("%s: %s is not a directory", path, dir)
			}
		}
	}
	return path + ": " + replace.Reason(err)
}

// Description tells a model when to use read and what it returns.
const Description = `Read a text file in the sandbox as numbered lines, or list a directory. Use it to look at source, logs and output files before changing or quoting them.

Each line is its number, a tab, and the line, as cat -n prints them: when you quote or edit a line, leave the number and the tab out. The first 2000 lines by default; offset (from 1) and limit choose others, and a negative offset reads from the end (offset -100: the last 100 lines). A last line in brackets says which lines were shown of how many, the file's sha256 (12 hex digits: give it as if_match to write or edit, so that changes you have not seen are never overwritten), and which offset to read next when more lines follow.

Limits: a line over 2000 characters is cut and says how much was left out; at most the host's limit of text per call (256 KiB; 100 KiB through toolkit mcp and toolkit call; max_bytes asks for less). A picture (PNG, JPEG, GIF, WebP) is shown to you as an image, scaled down to fit the host's limits; region [x, y, width, height] shows only that part of it, in its own pixels, to read small details. A PDF is shown to you as a document; pages "3-7" gives those pages as numbered text instead. Another binary file is refused with its type and size. A directory lists its entries, directories with a trailing /.`
