// Package mediatest makes the pictures and PDFs toolkit's tests read:
// made here, byte for byte the same each run, none downloaded.
package mediatest

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"image/gif"
	"image/jpeg"
	"image/png"
	"strings"
)

// Picture is a w×h picture with a pattern in every channel (gradients
// and a grid, so that scaling has something to average), opaque unless
// alpha.
func Picture(w, h int, alpha bool) *image.NRGBA {
	img := image.NewNRGBA(image.Rect(0, 0, w, h))
	for y := range h {
		for x := range w {
			a := uint8(255)
			if alpha {
				a = uint8(x * 255 / max(1, w-1))
			}
			g := uint8(0)
			if x%16 == 0 || y%16 == 0 {
				g = 255
			}
			img.SetNRGBA(x, y, color.NRGBA{uint8(x * 255 / max(1, w-1)), g, uint8(y * 255 / max(1, h-1)), a})
		}
	}
	return img
}

// Encode writes img in format: "png", "png16" (16 bits a channel),
// "jpeg", "gray" (a one-channel JPEG) or "gif".
func Encode(img image.Image, format string) []byte {
	var buf bytes.Buffer
	var err error
	switch format {
	case "png":
		err = png.Encode(&buf, img)
	case "png16":
		deep := image.NewRGBA64(img.Bounds())
		draw.Draw(deep, deep.Rect, img, img.Bounds().Min, draw.Src)
		err = png.Encode(&buf, deep)
	case "jpeg":
		err = jpeg.Encode(&buf, img, &jpeg.Options{Quality: 90})
	case "gray":
		g := image.NewGray(img.Bounds())
		draw.Draw(g, g.Rect, img, img.Bounds().Min, draw.Src)
		err = jpeg.Encode(&buf, g, nil)
	case "gif":
		err = gif.Encode(&buf, img, &gif.Options{NumColors: 64})
	default:
		panic("mediatest: no format " + format)
	}
	if err != nil {
		panic(err)
	}
	return buf.Bytes()
}

// AnimatedGIF is a GIF of frames w×h frames, each a different colour.
func AnimatedGIF(w, h, frames int) []byte {
	palette := color.Palette{color.Black, color.White, color.RGBA{255, 0, 0, 255}, color.RGBA{0, 0, 255, 255}}
	g := &gif.GIF{}
	for i := range frames {
		f := image.NewPaletted(image.Rect(0, 0, w, h), palette)
		for p := range f.Pix {
			f.Pix[p] = uint8(i % len(palette))
		}
		g.Image = append(g.Image, f)
		g.Delay = append(g.Delay, 10)
	}
	var buf bytes.Buffer
	if err := gif.EncodeAll(&buf, g); err != nil {
		panic(err)
	}
	return buf.Bytes()
}

// PNGHeader is the start of a PNG that says it is w×h: its signature and
// IHDR chunk (CRC and all), then an IDAT chunk with nothing in it. What a
// decompression bomb shows a reader before its pixels.
func PNGHeader(w, h int) []byte {
	good := Encode(image.NewGray(image.Rect(0, 0, 1, 1)), "png")
	// The 1×1 PNG's IHDR, its width and height changed, its CRC recomputed.
	out := bytes.Clone(good[:33])
	binary.BigEndian.PutUint32(out[16:], uint32(w))
	binary.BigEndian.PutUint32(out[20:], uint32(h))
	binary.BigEndian.PutUint32(out[29:], crc(out[12:29]))
	return append(out, good[33:]...)
}

func crc(b []byte) uint32 {
	c := ^uint32(0)
	for _, x := range b {
		c ^= uint32(x)
		for range 8 {
			if c&1 != 0 {
				c = c>>1 ^ 0xedb88320
			} else {
				c >>= 1
			}
		}
	}
	return ^c
}

// WebP is the header of a lossless WebP (VP8L) that says it is w×h; the
// picture's data after it is not real: toolkit reads only the header.
func WebP(w, h int) []byte {
	var b bytes.Buffer
	b.WriteString("RIFF")
	_ = binary.Write(&b, binary.LittleEndian, uint32(4+8+5+8))
	b.WriteString("WEBPVP8L")
	_ = binary.Write(&b, binary.LittleEndian, uint32(5+8))
	b.WriteByte(0x2f)
	_ = binary.Write(&b, binary.LittleEndian, uint32(w-1)|uint32(h-1)<<14)
	b.Write(make([]byte, 8))
	return b.Bytes()
}

// PDF is a PDF of len(pages) pages, each the lines of its text in
// Helvetica, with a correct cross-reference table.
func PDF(pages ...string) []byte {
	var objs []string
	n := len(pages)
	kids := make([]string, n)
	for i := range n {
		kids[i] = fmt.Sprintf("%d 0 R", 4+2*i)
	}
	objs = append(objs, "<< /Type /Catalog /Pages 2 0 R >>")
	objs = append(objs, fmt.Sprintf("<< /Type /Pages /Kids [%s] /Count %d >>", strings.Join(kids, " "), n))
	objs = append(objs, "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>")
	for i, text := range pages {
		var s strings.Builder
		s.WriteString("BT /F1 12 Tf 72 720 Td 14 TL\n")
		for line := range strings.SplitSeq(text, "\n") {
			r := strings.NewReplacer(`\`, `\\`, "(", `\(`, ")", `\)`)
			fmt.Fprintf(&s, "(%s) '\n", r.Replace(line))
		}
		s.WriteString("ET")
		objs = append(objs, fmt.Sprintf("<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 3 0 R >> >> /Contents %d 0 R >>", 5+2*i))
		objs = append(objs, fmt.Sprintf("<< /Length %d >>\nstream\n%s\nendstream", s.Len(), s.String()))
	}
	var b bytes.Buffer
	b.WriteString("%PDF-1.4\n")
	offsets := make([]int, len(objs))
	for i, o := range objs {
		offsets[i] = b.Len()
		fmt.Fprintf(&b, "%d 0 obj\n%s\nendobj\n", i+1, o)
	}
	xref := b.Len()
	fmt.Fprintf(&b, "xref\n0 %d\n0000000000 65535 f \n", len(objs)+1)
	for _, off := range offsets {
		fmt.Fprintf(&b, "%010d 00000 n \n", off)
	}
	fmt.Fprintf(&b, "trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n", len(objs)+1, xref)
	return b.Bytes()
}
