package history

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"toolkit/internal/history/pack"
)

// TestStoreKeepsLive: past its cap the store lets go of its oldest pack,
// but not of what is live there: the baseline's content of a file no call
// changed since, which the next change of it needs, is copied out first,
// and that change is restorable; what goes is said to have gone from the
// store.
func TestStoreKeepsLive(t *testing.T) {
	was := pack.MaxPack
	pack.MaxPack = 4 << 20
	t.Cleanup(func() { pack.MaxPack = was })
	s := settings()
	s.StoreCap, s.MaxFile = 2_500_000, 500_000
	dir := newTreeWith(t, map[string]string{"a.txt": "line1\nline2\n"}, s)
	random := func(seed uint64) []byte {
		b := make([]byte, 440_000)
		rand.NewChaCha8([32]byte{byte(seed)}).Read(b)
		return b
	}
	callWith(t, dir, s, func() {
		for i := range 5 {
			must(t, os.WriteFile(filepath.Join(dir, fmt.Sprintf("big%d.bin", i)), random(uint64(i)), 0o644))
		}
	})
	callWith(t, dir, s, func() { must(t, os.WriteFile(filepath.Join(dir, "more.bin"), random(9), 0o644)) })
	packs, _ := filepath.Glob(filepath.Join(os.Getenv("TOOLKIT_STATE"), "history", "packs", "*.pack"))
	if len(packs) < 1 {
		t.Fatalf("packs: %v", packs)
	}
	var total int64
	for _, p := range packs {
		fi, _ := os.Stat(p)
		total += fi.Size()
	}
	if total > s.StoreCap {
		t.Errorf("the store holds %d bytes, over its cap of %d", total, s.StoreCap)
	}
	ch := callWith(t, dir, s, func() {
		f, err := os.OpenFile(filepath.Join(dir, "a.txt"), os.O_APPEND|os.O_WRONLY, 0)
		must(t, err)
		f.WriteString("line3\n")
		f.Close()
	})
	if len(ch.Files) != 1 || !ch.Files[0].Restorable {
		t.Fatalf("the change of a file the baseline kept: %+v", ch.Files)
	}
	res, _, err := UndoCalls(context.Background(), UndoArgs{Call: ch.Call}, s)
	if err != nil || len(res.Restored) != 1 {
		t.Fatalf("undo: %+v %v", res, err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "a.txt")); string(b) != "line1\nline2\n" {
		t.Fatalf("a.txt: %q", b)
	}
}
