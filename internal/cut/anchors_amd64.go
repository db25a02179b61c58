package cut

import "golang.org/x/sys/cpu"

//go:noescape
func anchorsAVX2(b []byte) int

// haveAVX2 says the processor can run anchorsAVX2.
var haveAVX2 = cpu.X86.HasAVX2

// anchors returns the offset of the first 32-byte block of b that may start
// a failure word, -1 when none does, or -2 when it cannot tell (no AVX2):
// see anchorsAVX2.
func anchors(b []byte) int {
	if !haveAVX2 {
		return -2
	}
	return anchorsAVX2(b)
}
