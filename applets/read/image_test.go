package read

import (
	"bytes"
	"compress/zlib"
	"context"
	"encoding/binary"
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"testing"

	"toolkit/testsupport/mediatest"
)

// TestShrinkAverages: each pixel of the result is the average of the
// pixels it covers, premultiplied by alpha, whatever the decoder's type.
func TestShrinkAverages(t *testing.T) {
	src := image.NewNRGBA(image.Rect(0, 0, 4, 2))
	// The left 2×2: red and blue, opaque; the right 2×2: white, half of
	// it transparent.
	for y := range 2 {
		src.SetNRGBA(0, y, color.NRGBA{255, 0, 0, 255})
		src.SetNRGBA(1, y, color.NRGBA{0, 0, 255, 255})
		src.SetNRGBA(2, y, color.NRGBA{255, 255, 255, 255})
		src.SetNRGBA(3, y, color.NRGBA{255, 255, 255, 0})
	}
	got, err := shrink(context.Background(), src, 2, 1)
	if err != nil {
		t.Fatal(err)
	}
	want := []uint8{128, 0, 128, 255, 128, 128, 128, 128} // premultiplied
	if !bytes.Equal(got.Pix, want) {
		t.Errorf("got %v, want %v", got.Pix, want)
	}

	// The same picture through each type a decoder gives: the same
	// result as through RGBA, within the rounding of the conversions.
	pic := mediatest.Picture(300, 200, false)
	ref, _ := shrink(context.Background(), pic, 97, 61)
	for name, img := range map[string]image.Image{
		"gray":  viaAt(pic, image.NewGray(pic.Bounds())),
		"cmyk":  viaAt(pic, image.NewCMYK(pic.Bounds())),
		"rgba":  toRGBA(pic),
		"sub":   within(pic, 50, 40),
		"ycbcr": ycbcr(pic),
	} {
		got, err := shrink(context.Background(), img, 97, 61)
		if err != nil {
			t.Fatal(err)
		}
		if got.Rect.Dx() != 97 || got.Rect.Dy() != 61 {
			t.Fatalf("%s: %v", name, got.Rect)
		}
		if name == "rgba" || name == "sub" {
			if !bytes.Equal(got.Pix, ref.Pix) {
				t.Errorf("%s: not the same pixels", name)
			}
		}
		// Against its own pixels, through image.At, averaged the same way.
		want, _ := shrink(context.Background(), toRGBA(img), 97, 61)
		for i := range want.Pix {
			if d := int(got.Pix[i]) - int(want.Pix[i]); d < -2 || d > 2 {
				t.Fatalf("%s: byte %d is %d, want %d", name, i, got.Pix[i], want.Pix[i])
			}
		}
	}
}

// within is src in a larger picture at (x, y), as the part a region crops.
func within(src image.Image, x, y int) image.Image {
	b := src.Bounds()
	big := image.NewRGBA(image.Rect(0, 0, b.Dx()+2*x, b.Dy()+2*y))
	draw.Draw(big, b.Add(image.Pt(x, y)), src, b.Min, draw.Src)
	return big.SubImage(b.Add(image.Pt(x, y)))
}

// viaAt is src copied into dst pixel by pixel, through At and Set: the
// reference the fast paths are held to.
func viaAt[T draw.Image](src image.Image, dst T) T {
	b := src.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			dst.Set(x, y, src.At(x, y))
		}
	}
	return dst
}

func toRGBA(src image.Image) *image.RGBA { return viaAt(src, image.NewRGBA(src.Bounds())) }

func ycbcr(src image.Image) *image.YCbCr {
	b := src.Bounds()
	dst := image.NewYCbCr(b, image.YCbCrSubsampleRatio420)
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bl, _ := src.At(x, y).RGBA()
			yy, cb, cr := color.RGBToYCbCr(uint8(r>>8), uint8(g>>8), uint8(bl>>8))
			dst.Y[dst.YOffset(x, y)] = yy
			dst.Cb[dst.COffset(x, y)] = cb
			dst.Cr[dst.COffset(x, y)] = cr
		}
	}
	return dst
}

// TestFit: the size sent is within every limit, the long edge at it
// exactly when it is what binds, and never larger than the picture.
func TestFit(t *testing.T) {
	lim := imageLimits{edge: DefaultImageMaxEdge, pixels: DefaultImageMaxPixels, bytes: DefaultImageMaxBytes}
	for _, tc := range []struct{ w, h, ww, wh int }{
		{300, 200, 300, 200},
		{4032, 3024, 1238, 928},
		{3000, 1000, 1568, 522},
		{4000, 400, 1568, 156},
		{1, 100000, 1, 1568},
		{1568, 733, 1568, 733},
		{1100, 1100, 1072, 1072},
	} {
		w, h := fit(tc.w, tc.h, lim)
		if w != tc.ww || h != tc.wh {
			t.Errorf("%d×%d: %d×%d, want %d×%d", tc.w, tc.h, w, h, tc.ww, tc.wh)
		}
		if w > lim.edge || h > lim.edge || w*h > lim.pixels {
			t.Errorf("%d×%d: %d×%d is over the limits", tc.w, tc.h, w, h)
		}
	}
}

// TestWebPSize: the canvas of each of the three first chunks RFC 9649
// lays out, and headers that are not one.
func TestWebPSize(t *testing.T) {
	riff := func(chunk string, body []byte) []byte {
		var b bytes.Buffer
		b.WriteString("RIFF")
		_ = binary.Write(&b, binary.LittleEndian, uint32(4+8+len(body)))
		b.WriteString("WEBP" + chunk)
		_ = binary.Write(&b, binary.LittleEndian, uint32(len(body)))
		b.Write(body)
		return b.Bytes()
	}
	vp8 := []byte{0x10, 0x02, 0x00, 0x9d, 0x01, 0x2a, 0x80, 0x07, 0x38, 0x04, 0, 0} // 1920×1080
	vp8x := []byte{0x10, 0, 0, 0, 0x7f, 0x0c, 0, 0xef, 0x08, 0, 0, 0}               // 3200×2288
	for name, tc := range map[string]struct {
		data []byte
		w, h int
		err  string
	}{
		"lossless": {data: mediatest.WebP(800, 600), w: 800, h: 600},
		"largest":  {data: mediatest.WebP(16384, 16384), w: 16384, h: 16384},
		"lossy":    {data: riff("VP8 ", vp8), w: 1920, h: 1080},
		"extended": {data: riff("VP8X", vp8x), w: 3200, h: 2288},
		"short":    {data: []byte("RIFF\x00\x00\x00\x00WEBPVP8L"), err: "it ends too soon"},
		"no start": {data: riff("VP8 ", make([]byte, 12)), err: "no VP8 start code"},
		"no sign":  {data: riff("VP8L", make([]byte, 12)), err: "no VP8L signature"},
		"other":    {data: riff("ALPH", make([]byte, 12)), err: `an unknown first chunk "ALPH"`},
		"empty":    {data: riff("VP8 ", []byte{0, 0, 0, 0x9d, 0x01, 0x2a, 0, 0, 0, 0, 0, 0}), err: "a picture of no pixels"},
	} {
		w, h, err := webpSize(tc.data)
		if fmt.Sprint(err) != map[bool]string{true: "<nil>", false: tc.err}[tc.err == ""] || w != tc.w || h != tc.h {
			t.Errorf("%s: %d×%d, %v; want %d×%d, %q", name, w, h, err, tc.w, tc.h, tc.err)
		}
	}
}

// TestCountPages: page objects in the file and in deflated object
// streams; the pages node and other objects are not pages.
func TestCountPages(t *testing.T) {
	if n := countPages(mediatest.PDF("a", "b", "c")); n != 3 {
		t.Errorf("3 pages counted as %d", n)
	}
	var z bytes.Buffer
	w := zlib.NewWriter(&z)
	_, _ = w.Write([]byte("<< /Type /Page /Parent 2 0 R >> << /Type/Page >> << /Type /Pages /Count 2 >>"))
	_ = w.Close()
	pdf := fmt.Appendf(nil, "%%PDF-1.7\n5 0 obj\n<< /Type /ObjStm /N 3 /First 10 /Filter /FlateDecode /Length %d >>\nstream\n%s\nendstream\nendobj\n%%%%EOF\n", z.Len(), z.Bytes())
	if n := countPages(pdf); n != 2 {
		t.Errorf("2 pages in an object stream counted as %d", n)
	}
}

// FuzzPicture: whatever the bytes, a picture's path answers without a
// panic, within the limits, and decodes no more than its ceiling allows
// (set low here, so that a header that says a large picture costs
// little).
func FuzzPicture(f *testing.F) {
	pic := mediatest.Picture(40, 30, true)
	for _, seed := range [][]byte{
		mediatest.Encode(pic, "png"),
		mediatest.Encode(pic, "png16"),
		mediatest.Encode(pic, "jpeg"),
		mediatest.Encode(pic, "gray"),
		mediatest.Encode(pic, "gif"),
		mediatest.AnimatedGIF(20, 10, 3),
		mediatest.PNGHeader(50000, 50000),
		mediatest.WebP(100, 100),
		mediatest.PDF("one"),
	} {
		f.Add(seed, 0, 0, 0, 0)
		f.Add(seed, 1, 2, 10, 5)
	}
	lim := imageLimits{edge: 16, pixels: 200, bytes: 4000, decode: 1 << 20}
	f.Fuzz(func(t *testing.T, data []byte, x, y, w, h int) {
		var region []int
		if w != 0 {
			region = []int{x, y, w, h}
		}
		_ = countPages(data)
		typ := mediaType(data)
		if typ == "" || typ == typePDF {
			return
		}
		facts, sent, err := picture(context.Background(), data, typ, region, lim)
		if err != nil {
			return
		}
		n := len(data)
		if sent != nil {
			n = len(sent)
			cfg, _, err := image.DecodeConfig(bytes.NewReader(sent))
			if err != nil || cfg.Width != facts.SentWidth || cfg.Height != facts.SentHeight {
				t.Fatalf("sent %d×%d, says %d×%d: %v", cfg.Width, cfg.Height, facts.SentWidth, facts.SentHeight, err)
			}
		}
		if !lim.fits(facts.SentWidth, facts.SentHeight, n) {
			t.Fatalf("sent %d×%d in %d bytes, over the limits", facts.SentWidth, facts.SentHeight, n)
		}
	})
}

// TestEncodeKinds: a picture of noise, which JPEG keeps smaller than PNG,
// goes as a JPEG when it came as a JPEG or an opaque PNG, and as a PNG
// when it came as a GIF (drawn in a few colours: the README's rule) or
// has any transparency.
func TestEncodeKinds(t *testing.T) {
	noise := image.NewRGBA(image.Rect(0, 0, 200, 150))
	seed := uint32(1)
	for i := range noise.Pix {
		seed = seed*1664525 + 1013904223
		noise.Pix[i] = byte(seed >> 24)
		if i%4 == 3 {
			noise.Pix[i] = 255
		}
	}
	for typ, want := range map[string]string{typeJPEG: typeJPEG, typePNG: typeJPEG, typeGIF: typePNG} {
		if _, got := encode(noise, typ, 5<<20); got != want {
			t.Errorf("noise from a %s goes as %s, want %s", typ, got, want)
		}
	}
	noise.Pix[3] = 0
	if _, got := encode(noise, typeJPEG, 5<<20); got != typePNG {
		t.Errorf("a picture with transparency goes as %s, want a PNG", got)
	}
}
