package clean

import "golang.org/x/sys/cpu"

//go:noescape
func specialsAVX2(p []byte) uint64

// haveSpecials says specials can run here.
var haveSpecials = cpu.X86.HasAVX2

// specials is the mask of ESC, CR and bytes ≥ 0x80 among p[:64].
func specials(p []byte) uint64 { return specialsAVX2(p) }
