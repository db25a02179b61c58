package read

import (
	"bytes"
	"compress/zlib"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"toolkit/internal/outcome"
	"toolkit/internal/proc"
	"toolkit/internal/replace"
	"toolkit/internal/text"
)

// PDF limits: the host's (Options) default to Anthropic's for a document
// in a request.
const (
	DefaultPDFMaxBytes = 32 << 20
	DefaultPDFMaxPages = 100
	// pdfToolTime bounds pdfinfo and pdftotext.
	pdfToolTime = 30 * time.Second
)

// PDFFacts are a PDF's facts for --json.
type PDFFacts struct {
	Pages     int    `json:"pages"`                // 0: not counted
	TextPages string `json:"text_pages,omitempty"` // the pages given as text
}

// readPDF answers a read of a PDF: the document itself for the model, its
// size and page count said in a line; with pages, those pages as numbered
// text through pdftotext.
func readPDF(ctx context.Context, a Args, data []byte) outcome.Outcome {
	name := filepath.Base(a.Path)
	pages, err := pdfPages(ctx, data)
	if err != nil {
		return outcome.Failure("%s: not a PDF toolkit can read (%s); not shown", a.Path, err)
	}
	count := "pages not counted"
	if pages > 0 {
		count = text.Count(int64(pages), "page")
	}
	sum := replace.SHA256(data)
	d := Details{Path: a.Path, Kind: "pdf", SHA256: &sum, Bytes: int64(len(data)), PDF: &PDFFacts{Pages: pages}}
	if a.Pages != nil {
		return pdfText(ctx, a, data, pages, d)
	}
	maxBytes, maxPages := a.Host.PDFMaxBytes, a.Host.PDFMaxPages
	if maxBytes <= 0 {
		maxBytes = DefaultPDFMaxBytes
	}
	if maxPages <= 0 {
		maxPages = DefaultPDFMaxPages
	}
	if len(data) > maxBytes || pages > maxPages {
		return outcome.Failure("%s: a PDF of %s and %s is over this host's limits for a document (%s, %d pages); read some of its pages as text with pages, such as \"1-10\"", a.Path, text.Bytes(int64(len(data))), count, text.Bytes(int64(maxBytes)), maxPages)
	}
	o := outcome.Success(fmt.Sprintf("[PDF %s: %s, %s]\n", name, text.Bytes(int64(len(data))), count), d)
	o.Media = &outcome.Media{Type: typePDF, Name: name, Data: data}
	return o
}

// pdfText answers pages "3-7" (or "5") of a PDF as text, each page's lines
// numbered from 1 under a line naming the page.
func pdfText(ctx context.Context, a Args, data []byte, pages int, d Details) outcome.Outcome {
	first, last, ok := pageRange(*a.Pages)
	if !ok {
		return outcome.Misuse("input: pages must be a page (\"5\") or a range (\"3-7\"), from 1, not %q", *a.Pages)
	}
	if pages > 0 && first > pages {
		return outcome.Failure("%s: page %d is past the end (the PDF has %s)", a.Path, first, text.Count(int64(pages), "page"))
	}
	if pages > 0 {
		last = min(last, pages)
	}
	if !proc.LookPath("pdftotext") {
		return outcome.Failure("%s: pages needs pdftotext (poppler-utils), which is not installed here; without pages the PDF goes to the model as a document", a.Path)
	}
	out, err := pdfTool(ctx, data, "pdftotext", "-q", "-enc", "UTF-8", "-f", strconv.Itoa(first), "-l", strconv.Itoa(last), "/dev/fd/3", "-")
	if err != nil {
		return outcome.Failure("%s: pdftotext failed: %s", a.Path, err)
	}
	limit := maxText(a)
	var b strings.Builder
	full := false
	for i, page := range strings.Split(strings.TrimSuffix(string(out), "\f"), "\f") {
		n := first + i
		if n > last {
			break
		}
		fmt.Fprintf(&b, "[page %d]\n", n)
		for j, line := range strings.Split(strings.TrimRight(page, "\n"), "\n") {
			l := fmt.Sprintf("%6d\t%s\n", j+1, text.CutLine(strings.TrimRight(line, " \r"), 0))
			if b.Len()+len(l) > limit {
				full = true
				break
			}
			b.WriteString(l)
		}
		if full {
			fmt.Fprintf(&b, "[cut at %s of text in page %d; read on with pages \"%d-%d\"]\n", text.Bytes(int64(limit)), n, n, last)
			break
		}
	}
	d.PDF.TextPages = fmt.Sprintf("%d-%d", first, last)
	fmt.Fprintf(&b, "[PDF %s: pages %d-%d", filepath.Base(a.Path), first, last)
	if pages > 0 {
		fmt.Fprintf(&b, " of %d", pages)
	}
	b.WriteString(", as text by pdftotext]\n")
	return outcome.Success(b.String(), d)
}

// pageRange reads "5" or "3-7".
func pageRange(s string) (first, last int, ok bool) {
	a, b, isRange := strings.Cut(strings.TrimSpace(s), "-")
	first, err1 := strconv.Atoi(strings.TrimSpace(a))
	last, err2 := first, error(nil)
	if isRange {
		last, err2 = strconv.Atoi(strings.TrimSpace(b))
	}
	return first, last, err1 == nil && err2 == nil && first >= 1 && last >= first
}

// pdfTool runs one of poppler's tools on data, given to it as /dev/fd/3 (a
// memory file it can seek in), and returns its standard output.
func pdfTool(ctx context.Context, data []byte, name string, args ...string) ([]byte, error) {
	fd, err := unix.MemfdCreate("toolkit-pdf", unix.MFD_CLOEXEC)
	if err != nil {
		return nil, err
	}
	mem := os.NewFile(uintptr(fd), "toolkit-pdf")
	defer mem.Close()
	if _, err := mem.Write(data); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, pdfToolTime)
	defer cancel()
	return proc.Output(ctx, proc.Child{Path: name, Args: append([]string{name}, args...), ExtraFiles: []*os.File{mem}})
}

// pdfPages checks a PDF and counts its pages. With pdfinfo installed, it
// is pdfinfo's check and count. Without it, a PDF must end with its %%EOF
// mark (in its last KiB, as readers look for it), and its pages are its
// page objects ("/Type /Page"), in the file and in its compressed object
// streams: 0 when none are found.
func pdfPages(ctx context.Context, data []byte) (int, error) {
	if proc.LookPath("pdfinfo") {
		out, err := pdfTool(ctx, data, "pdfinfo", "/dev/fd/3")
		if err != nil {
			return 0, fmt.Errorf("pdfinfo: %s", err)
		}
		if m := pdfinfoPages().FindSubmatch(out); m != nil {
			n, _ := strconv.Atoi(string(m[1]))
			return n, nil
		}
	}
	if !bytes.Contains(data[max(0, len(data)-1024):], []byte("%%EOF")) {
		return 0, errors.New("no %%EOF mark at its end: cut short?")
	}
	return countPages(data), nil
}

var (
	pdfinfoPages = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?m)^Pages:\s+(\d+)`) })
	pageObject   = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`/Type\s*/Page\b`) })
	objectStream = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`/Type\s*/ObjStm\b`) })
)

// maxInflate bounds what countPages inflates of a PDF's object streams.
const maxInflate = 64 << 20

// countPages counts "/Type /Page" in data and in the object streams
// (/Type /ObjStm, deflated) that PDF 1.5 and later keep objects in.
func countPages(data []byte) int {
	n := len(pageObject().FindAllIndex(data, -1))
	budget := int64(maxInflate)
	for _, at := range objectStream().FindAllIndex(data, -1) {
		rest := data[at[1]:]
		_, after, ok := bytes.Cut(rest, []byte("stream"))
		if !ok || budget <= 0 {
			break
		}
		body := bytes.TrimLeft(after, "\r\n")
		if j := bytes.Index(body, []byte("endstream")); j >= 0 {
			body = body[:j]
		}
		z, err := zlib.NewReader(bytes.NewReader(body))
		if err != nil {
			continue
		}
		var out bytes.Buffer
		m, _ := io.Copy(&out, io.LimitReader(z, budget))
		budget -= m
		n += len(pageObject().FindAllIndex(out.Bytes(), -1))
	}
	return n
}
