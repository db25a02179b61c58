package shell

import (
	"bytes"
	"fmt"
	"os"
	"strings"
	"testing"
)

// BenchmarkOutput is the work toolkit does for each byte of output, without
// the pipe: 64 KiB reads of zeros and of a log, cleaned or raw, cut, and
// spilled whole (256 MiB) or hardly (1 MiB: the rest of the work alone).
func BenchmarkOutput(b *testing.B) {
	line := []byte("2026-12-02T10:00:00.000Z INFO http request handled method=GET path=/api/v1/items/1234 status=200 dur=12ms\n")
	inputs := map[string][]byte{
		"zeros": make([]byte, 64<<10),
		"log":   bytes.Repeat(line, (64<<10)/len(line)),
	}
	for _, name := range []string{"zeros", "log"} {
		for _, raw := range []bool{false, true} {
			for _, spill := range []int64{MaxSpill, 1 << 20} {
				chunk := inputs[name]
				b.Run(fmt.Sprintf("%s/raw=%v/spill=%dMiB", name, raw, spill>>20), func(b *testing.B) {
					dir := b.TempDir()
					const total = 1 << 30
					b.SetBytes(total)
					for b.Loop() {
						o := newOutput(Options{MaxOutput: 1 << 20, Raw: raw, SpillDir: dir, MaxSpill: spill}.withDefaults())
						for n := 0; n < total; n += len(chunk) {
							o.write(chunk)
						}
						var sb strings.Builder
						r := o.finish(&sb)
						os.Remove(r.spillPath)
					}
				})
			}
		}
	}
}
