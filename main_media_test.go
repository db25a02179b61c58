package main

import (
	"bytes"
	"encoding/json"
	"image"
	"os"
	"strconv"

	"github.com/rogpeppe/go-internal/testscript"

	"toolkit/testsupport/mediatest"
)

// mkmedia KIND FILE ARGS... makes a picture or a PDF for a script:
// png, alphapng, png16, jpeg, gray, gif W H; agif W H FRAMES; bomb W H (a
// PNG header that says W×H); webp W H (a header); pdf TEXT... (one page
// each, "\n" in a TEXT starting a line).
func cmdMkMedia(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) < 2 {
		ts.Fatalf("usage: mkmedia KIND FILE ARGS...")
	}
	kind, file, rest := args[0], ts.MkAbs(args[1]), args[2:]
	num := func(i int) int {
		if i >= len(rest) {
			ts.Fatalf("mkmedia %s: too few numbers", kind)
		}
		n, err := strconv.Atoi(rest[i])
		ts.Check(err)
		return n
	}
	var data []byte
	switch kind {
	case "png", "png16", "jpeg", "gray", "gif":
		data = mediatest.Encode(mediatest.Picture(num(0), num(1), false), kind)
	case "alphapng":
		data = mediatest.Encode(mediatest.Picture(num(0), num(1), true), "png")
	case "agif":
		data = mediatest.AnimatedGIF(num(0), num(1), num(2))
	case "bomb":
		data = mediatest.PNGHeader(num(0), num(1))
	case "webp":
		data = mediatest.WebP(num(0), num(1))
	case "pdf":
		var pages []string
		for _, p := range rest {
			pages = append(pages, string(bytes.ReplaceAll([]byte(p), []byte(`\n`), []byte("\n"))))
		}
		data = mediatest.PDF(pages...)
	default:
		ts.Fatalf("mkmedia: no kind %q", kind)
	}
	ts.Check(os.WriteFile(file, data, 0o644))
}

// picture FILE TYPE W H checks the picture in a --json answer saved in
// FILE: its media_type, and that its bytes decode to W×H.
func cmdPicture(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 4 {
		ts.Fatalf("usage: picture FILE TYPE W H")
	}
	raw, err := os.ReadFile(ts.MkAbs(args[0]))
	ts.Check(err)
	var o struct {
		Media struct {
			MediaType string `json:"media_type"`
			Data      []byte `json:"data"`
		} `json:"media"`
	}
	ts.Check(json.Unmarshal(raw, &o))
	cfg, _, err := image.DecodeConfig(bytes.NewReader(o.Media.Data))
	ts.Check(err)
	got := o.Media.MediaType + " " + strconv.Itoa(cfg.Width) + " " + strconv.Itoa(cfg.Height)
	if want := args[1] + " " + args[2] + " " + args[3]; (got == want) == neg {
		ts.Fatalf("the picture is %s; want %s", got, want)
	}
}
