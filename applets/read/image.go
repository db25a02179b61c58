package read

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/draw"
	_ "image/gif" // GIF's first frame
	"image/jpeg"
	"image/png"
	"io"
	"math"
	"path/filepath"
	"strings"

	"toolkit/internal/outcome"
	"toolkit/internal/replace"
	"toolkit/internal/text"
)

// The media types read recognises by a file's first bytes.
const (
	typePNG  = "image/png"
	typeJPEG = "image/jpeg"
	typeGIF  = "image/gif"
	typeWebP = "image/webp"
	typePDF  = "application/pdf"
)

// mediaType is the picture's or document's type of a file that begins with
// head, or "" for any other file.
func mediaType(head []byte) string {
	switch {
	case bytes.HasPrefix(head, []byte("\x89PNG\r\n\x1a\n")):
		return typePNG
	case bytes.HasPrefix(head, []byte{0xff, 0xd8, 0xff}):
		return typeJPEG
	case bytes.HasPrefix(head, []byte("GIF87a")), bytes.HasPrefix(head, []byte("GIF89a")):
		return typeGIF
	case len(head) >= 12 && string(head[:4]) == "RIFF" && string(head[8:12]) == "WEBP":
		return typeWebP
	case bytes.HasPrefix(head, []byte("%PDF-")):
		return typePDF
	}
	return ""
}

// Image limits. The host's (Options) default to Anthropic's guidance for
// a picture a model sees whole: a long edge of at most 1568 pixels, at most
// 1.15 megapixels, at most 5 MiB as sent (in base64).
const (
	DefaultImageMaxEdge   = 1568
	DefaultImageMaxPixels = 1_150_000
	DefaultImageMaxBytes  = 5 << 20
	// MaxDecodePixels bounds the pictures read decodes: a header that says
	// more is refused before any pixel is read, so a decompression bomb
	// costs nothing. 50 megapixels is a 48-megapixel phone's photo; it
	// decodes in at most 400 MiB (16-bit RGBA), a JPEG in about 150.
	MaxDecodePixels = 50_000_000
)

// imageLimits are the limits in force for one call.
type imageLimits struct {
	edge, pixels, bytes int
	decode              int64 // the most pixels decoded: MaxDecodePixels
}

func (a Args) imageLimits() imageLimits {
	l := imageLimits{a.Host.ImageMaxEdge, a.Host.ImageMaxPixels, a.Host.ImageMaxBytes, MaxDecodePixels}
	if l.edge <= 0 {
		l.edge = DefaultImageMaxEdge
	}
	if l.pixels <= 0 {
		l.pixels = DefaultImageMaxPixels
	}
	if l.bytes <= 0 {
		l.bytes = DefaultImageMaxBytes
	}
	return l
}

// fits says whether a w×h picture of n bytes is sent as it is.
func (l imageLimits) fits(w, h, n int) bool {
	return w <= l.edge && h <= l.edge && int64(w)*int64(h) <= int64(l.pixels) && base64.StdEncoding.EncodedLen(n) <= l.bytes
}

// ImageFacts are an image's facts for --json.
type ImageFacts struct {
	Format     string `json:"format"` // "PNG", "JPEG", "GIF", "WebP"
	Width      int    `json:"width"`
	Height     int    `json:"height"`
	Region     []int  `json:"region,omitempty"`
	SentType   string `json:"sent_type"`
	SentWidth  int    `json:"sent_width"`
	SentHeight int    `json:"sent_height"`
	SentBytes  int    `json:"sent_bytes"`
}

// readMedia answers a read of a picture or a PDF (typ, from mediaType),
// which is read whole.
func readMedia(ctx context.Context, a Args, src *source, typ string) outcome.Outcome {
	if src.size > MaxWhole {
		return outcome.Failure("%s: a %s of %s; toolkit shows pictures and documents of up to %d MiB", a.Path, typ, text.Bytes(src.size), MaxWhole>>20)
	}
	if o, bad := misplaced(a, typ); bad {
		return o
	}
	data := make([]byte, src.size)
	if _, err := src.r.ReadAt(data, 0); err != nil && err != io.EOF {
		return outcome.Failure("%s: %s", a.Path, err)
	}
	if typ == typePDF {
		return readPDF(ctx, a, data)
	}
	return readImage(ctx, a, data, typ)
}

// misplaced is the usage error of a call that gives region for a file that
// is not a picture, or pages for one that is not a PDF (typ from
// mediaType, "" for neither).
func misplaced(a Args, typ string) (outcome.Outcome, bool) {
	what := "a picture"
	switch {
	case typ == "":
		what = "neither"
	case typ == typePDF:
		what = "a PDF"
	}
	if a.Region != nil && (typ == "" || typ == typePDF) || a.Pages != nil && typ != typePDF {
		return outcome.Misuse("input: region is for a picture, pages for a PDF; %s is %s", a.Path, what), true
	}
	return outcome.Outcome{}, false
}

// readImage answers a read of a picture: the picture itself, scaled down
// to the host's limits when it is over them, and one line of text.
func readImage(ctx context.Context, a Args, data []byte, typ string) outcome.Outcome {
	name := filepath.Base(a.Path)
	lim := a.imageLimits()
	facts, sent, err := picture(ctx, data, typ, a.Region, lim)
	if err != nil {
		return outcome.Failure("%s: %s", a.Path, err)
	}
	var line strings.Builder
	fmt.Fprintf(&line, "[image %s: %d×%d %s, %s", name, facts.Width, facts.Height, facts.Format, text.Bytes(int64(len(data))))
	if typ == typeGIF {
		line.WriteString(" (its first frame)")
	}
	if r := facts.Region; r != nil {
		fmt.Fprintf(&line, "; region %d,%d %d×%d", r[0], r[1], r[2], r[3])
	}
	if sent == nil {
		sent = data
		line.WriteString(", sent as it is]\n")
	} else {
		fmt.Fprintf(&line, " → %d×%d %s, %s]\n", facts.SentWidth, facts.SentHeight, strings.TrimPrefix(strings.ToUpper(facts.SentType), "IMAGE/"), text.Bytes(int64(len(sent))))
	}
	facts.SentBytes = len(sent)
	sum := replace.SHA256(data)
	o := outcome.Success(line.String(), Details{Path: a.Path, Kind: "image", SHA256: &sum, Bytes: int64(len(data)), Image: &facts})
	o.Media = &outcome.Media{Type: facts.SentType, Name: name, Data: sent}
	return o
}

// picture decodes, crops and scales a picture of type typ to the limits.
// sent is nil when data goes as it is.
func picture(ctx context.Context, data []byte, typ string, region []int, lim imageLimits) (facts ImageFacts, sent []byte, err error) {
	if typ == typeWebP {
		return webp(data, region, lim)
	}
	cfg, format, err := image.DecodeConfig(bytes.NewReader(data))
	if err != nil {
		return facts, nil, fmt.Errorf("a %s toolkit cannot read (%s); not shown", strings.ToUpper(strings.TrimPrefix(typ, "image/")), brief(err))
	}
	facts = ImageFacts{Format: strings.ToUpper(format), Width: cfg.Width, Height: cfg.Height}
	if int64(cfg.Width)*int64(cfg.Height) > lim.decode {
		return facts, nil, fmt.Errorf("a %d×%d %s is more than toolkit decodes (%d megapixels); not shown", cfg.Width, cfg.Height, facts.Format, lim.decode/1_000_000)
	}
	crop, err := cropOf(region, cfg.Width, cfg.Height)
	if err != nil {
		return facts, nil, err
	}
	if region != nil {
		facts.Region = region
	}
	// Every picture is decoded whole, the one sent as it is too: a picture
	// cut short or corrupt would make an API refuse the whole request.
	img, _, err := image.Decode(bytes.NewReader(data))
	if err != nil {
		return facts, nil, fmt.Errorf("a %s toolkit cannot read (%s); not shown", facts.Format, brief(err))
	}
	// As it is: a PNG or an RGB JPEG within the limits, not cropped.
	if region == nil && typ != typeGIF && cfg.ColorModel != color.CMYKModel && lim.fits(cfg.Width, cfg.Height, len(data)) {
		facts.SentType, facts.SentWidth, facts.SentHeight = typ, cfg.Width, cfg.Height
		return facts, nil, nil
	}
	if crop != (image.Rectangle{}) {
		crop = crop.Add(img.Bounds().Min)
		img = img.(interface {
			SubImage(image.Rectangle) image.Image
		}).SubImage(crop)
	}
	w, h := fit(img.Bounds().Dx(), img.Bounds().Dy(), lim)
	for range 6 {
		small, err := shrink(ctx, img, w, h)
		if err != nil {
			return facts, nil, err
		}
		sent, facts.SentType = encode(small, typ, lim.bytes)
		if base64.StdEncoding.EncodedLen(len(sent)) <= lim.bytes {
			facts.SentWidth, facts.SentHeight = w, h
			return facts, sent, nil
		}
		// Too many bytes still: a smaller picture, by the area the bytes
		// are over.
		f := math.Sqrt(float64(lim.bytes)/float64(base64.StdEncoding.EncodedLen(len(sent)))) * 0.9
		w, h = max(1, int(float64(w)*f)), max(1, int(float64(h)*f))
	}
	return facts, nil, fmt.Errorf("cannot make the picture fit in %s; not shown", text.Bytes(int64(lim.bytes)))
}

// brief is a decoder's error without its package's prefix.
func brief(err error) string {
	s := err.Error()
	for _, p := range []string{"png: ", "gif: ", "image: ", "invalid JPEG format: ", "unsupported JPEG feature: "} {
		s = strings.TrimPrefix(s, p)
	}
	if errors.Is(err, io.ErrUnexpectedEOF) || s == "EOF" {
		return "it ends too soon"
	}
	return s
}

// cropOf checks a region [x, y, width, height] (four numbers: Run checked)
// against a w×h picture and
// returns it as a rectangle, or the zero rectangle for no region.
func cropOf(region []int, w, h int) (image.Rectangle, error) {
	if region == nil {
		return image.Rectangle{}, nil
	}
	x, y, rw, rh := region[0], region[1], region[2], region[3]
	if x < 0 || y < 0 || rw < 1 || rh < 1 || x >= w || y >= h || rw > w-x || rh > h-y {
		return image.Rectangle{}, fmt.Errorf("region [%d, %d, %d, %d] is not inside the %d×%d picture", x, y, rw, rh, w, h)
	}
	return image.Rect(x, y, x+rw, y+rh), nil
}

// fit is the size a w×h picture is sent at: as it is, or scaled down to
// the limits, its proportions kept.
func fit(w, h int, lim imageLimits) (int, int) {
	f := min(1, float64(lim.edge)/float64(max(w, h)), math.Sqrt(float64(lim.pixels)/(float64(w)*float64(h))))
	if f >= 1 {
		return w, h
	}
	// 1e-9 on, so that a side the limit sets exactly (1568) is not one short
	// of it by the division's rounding.
	return max(1, min(w, int(float64(w)*f+1e-9))), max(1, min(h, int(float64(h)*f+1e-9)))
}

// shrink scales src down to w×h (at most its own size) by averaging, for
// each pixel of the result, the pixels of src it covers. The pixels are
// premultiplied by their alpha, so averaging them is exact. It reads src a
// row at a time, through image/draw's fast paths for the decoders' types.
func shrink(ctx context.Context, src image.Image, w, h int) (*image.RGBA, error) {
	b := src.Bounds()
	sw, sh := b.Dx(), b.Dy()
	w, h = min(w, sw), min(h, sh)
	dst := image.NewRGBA(image.Rect(0, 0, w, h))
	row := image.NewRGBA(image.Rect(0, 0, sw, 1))
	col := make([]int32, sw) // the column of dst each column of src falls in
	widths := make([]uint64, w)
	for x := range sw {
		col[x] = int32(x * w / sw)
		widths[col[x]]++
	}
	acc := make([]uint64, 4*w)
	for y, ty, rows := 0, 0, uint64(0); y < sh; y++ {
		if y%64 == 0 && ctx.Err() != nil {
			return nil, fmt.Errorf("stopped: %s", context.Cause(ctx))
		}
		draw.Draw(row, row.Rect, src, image.Pt(b.Min.X, b.Min.Y+y), draw.Src)
		p := row.Pix
		for x, c := range col {
			a := acc[4*c : 4*c+4 : 4*c+4]
			q := p[4*x : 4*x+4 : 4*x+4]
			a[0] += uint64(q[0])
			a[1] += uint64(q[1])
			a[2] += uint64(q[2])
			a[3] += uint64(q[3])
		}
		rows++
		if (y+1)*h/sh == ty && y+1 < sh {
			continue // the next row of src falls in the same row of dst
		}
		out := dst.Pix[ty*dst.Stride:]
		for i, n := range widths {
			n *= rows
			for k := range 4 {
				out[4*i+k] = uint8((acc[4*i+k] + n/2) / n)
				acc[4*i+k] = 0
			}
		}
		ty, rows = ty+1, 0
	}
	return dst, nil
}

// encode writes img, decoded from a picture of type typ, as a PNG or a
// JPEG: a picture with any transparency, and a GIF (drawn, not
// photographed, in a few colours), as a PNG; a photograph (a JPEG's pixels)
// as a JPEG; any other both ways, the smaller kept. A JPEG over maxBytes is
// tried at lower qualities.
func encode(img *image.RGBA, typ string, maxBytes int) ([]byte, string) {
	var p, j []byte
	if !img.Opaque() || typ != typeJPEG {
		var buf bytes.Buffer
		_ = (&png.Encoder{CompressionLevel: png.DefaultCompression}).Encode(&buf, img)
		p = buf.Bytes()
		if !img.Opaque() || typ == typeGIF {
			return p, typePNG
		}
	}
	for _, q := range []int{85, 70, 50} {
		var buf bytes.Buffer
		_ = jpeg.Encode(&buf, img, &jpeg.Options{Quality: q})
		j = buf.Bytes()
		if base64.StdEncoding.EncodedLen(len(j)) <= maxBytes {
			break
		}
	}
	if p != nil && len(p) <= len(j) {
		return p, typePNG
	}
	return j, typeJPEG
}

// webp answers a WebP, which toolkit does not decode: its size is read
// from its header, and it is sent as it is when that is within the
// limits, else refused.
func webp(data []byte, region []int, lim imageLimits) (ImageFacts, []byte, error) {
	w, h, err := webpSize(data)
	if err != nil {
		return ImageFacts{}, nil, fmt.Errorf("a WEBP toolkit cannot read (%s); not shown", err)
	}
	facts := ImageFacts{Format: "WebP", Width: w, Height: h, SentType: typeWebP, SentWidth: w, SentHeight: h}
	switch {
	case region != nil:
		return facts, nil, fmt.Errorf("toolkit does not crop a WebP (it does not decode them); convert it to PNG (dwebp, or convert) and read that")
	case !lim.fits(w, h, len(data)):
		return facts, nil, fmt.Errorf("a %d×%d WebP of %s is over this host's limits (%d pixels a side, %.2f megapixels, %s) and toolkit does not scale a WebP (it does not decode them); convert it to PNG (dwebp, or convert) and read that", w, h, text.Bytes(int64(len(data))), lim.edge, float64(lim.pixels)/1e6, text.Bytes(int64(lim.bytes)))
	}
	return facts, nil, nil
}

// webpSize reads a WebP's canvas size from its first chunk: VP8 (lossy),
// VP8L (lossless) or VP8X (extended), as RFC 9649 lays them out.
func webpSize(d []byte) (w, h int, err error) {
	if len(d) < 30 {
		return 0, 0, errors.New("it ends too soon")
	}
	switch string(d[12:16]) {
	case "VP8 ":
		// A key frame's start code, then 14-bit width and height.
		if d[23] != 0x9d || d[24] != 0x01 || d[25] != 0x2a {
			return 0, 0, errors.New("no VP8 start code")
		}
		w = int(binary.LittleEndian.Uint16(d[26:]) & 0x3fff)
		h = int(binary.LittleEndian.Uint16(d[28:]) & 0x3fff)
	case "VP8L":
		if d[20] != 0x2f {
			return 0, 0, errors.New("no VP8L signature")
		}
		v := binary.LittleEndian.Uint32(d[21:])
		w, h = int(v&0x3fff)+1, int(v>>14&0x3fff)+1
	case "VP8X":
		w = (int(d[24]) | int(d[25])<<8 | int(d[26])<<16) + 1
		h = (int(d[27]) | int(d[28])<<8 | int(d[29])<<16) + 1
	default:
		return 0, 0, fmt.Errorf("an unknown first chunk %q", d[12:16])
	}
	if w == 0 || h == 0 {
		return 0, 0, errors.New("a picture of no pixels")
	}
	return w, h, nil
}
