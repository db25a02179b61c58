package history

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

// BenchmarkCall: a scanned call that changes nothing, on the tree
// TOOLKIT_BENCH_TREE (Go's source tree, say), with a keeper and without.
func BenchmarkCall(b *testing.B) {
	tree := os.Getenv("TOOLKIT_BENCH_TREE")
	if tree == "" {
		b.Skip("TOOLKIT_BENCH_TREE names no tree")
	}
	for _, keeper := range []bool{true, false} {
		b.Run(map[bool]string{true: "keeper", false: "scan"}[keeper], func(b *testing.B) {
			s := Defaults
			s.Keeper = keeper
			b.Setenv("TOOLKIT_STATE", filepath.Join(b.TempDir(), "state"))
			call := func() {
				c, err := Begin(context.Background(), "shell", tree, true, s)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := c.End(context.Background(), nil); err != nil {
					b.Fatal(err)
				}
			}
			call()
			if keeper {
				b.Cleanup(func() { stopKeeper(b, tree) })
				waitKeeper(b, tree, s)
				call()
			}
			b.ResetTimer()
			for b.Loop() {
				call()
			}
		})
	}
}
