package cut

import "golang.org/x/sys/cpu"

//go:noescape
func anchorsAVX2(b []byte) int

//go:noescape
func anchorsAVX512(b []byte, t *[3][128]byte) int

// Which of them the processor can run. Variables, so that the tests can
// turn the faster one off and check the other.
var (
	haveAVX2   = cpu.X86.HasAVX2
	haveAVX512 = cpu.X86.HasAVX512F && cpu.X86.HasAVX512BW && cpu.X86.HasAVX512VBMI
)

// anchorTables are anchorsAVX512's lookup tables.
var anchorTables = func() *[3][128]byte {
	var t [3][128]byte
	for a, anchor := range anchorWords {
		for k := range 3 {
			c := anchor[k]
			t[k][c] |= 1 << a
			t[k][c-'a'+'A'] |= 1 << a
		}
	}
	return &t
}()

// anchors returns the offset of the first block of b that may start a
// failure word, and the size of the blocks it looks at (64 with AVX-512,
// 32 with AVX2); the offset is -1 when no block does, or -2 when it cannot
// tell. Only blocks whose three windows fit in b are looked at: the caller
// scans the last len(b)%size+2 bytes itself.
func anchors(b []byte) (off, size int) {
	switch {
	case haveAVX512:
		return anchorsAVX512(b, anchorTables), 64
	case haveAVX2:
		return anchorsAVX2(b), 32
	}
	return -2, 0
}
