package clean

import "golang.org/x/sys/cpu"

//go:noescape
func specialsAVX2(p []byte) uint64

// plainAVX2 is plain 64 bytes at a time, for long runs.
//
//go:noescape
func plainAVX2(p []byte) int

//go:noescape
func csiAVX512(dst, src []byte) (n, w int)

// haveSpecials says specials can run here; haveCSI, that csiRun can.
var (
	haveSpecials = cpu.X86.HasAVX2
	haveCSI      = cpu.X86.HasAVX512BW && cpu.X86.HasAVX512VBMI2 && cpu.X86.HasBMI1 && cpu.X86.HasBMI2 && cpu.X86.HasPOPCNT
)

// specials is the mask of ESC, CR and bytes ≥ 0x80 among p[:64].
func specials(p []byte) uint64 { return specialsAVX2(p) }

// csiRun copies src to dst[:cap(dst)] leaving out whole CSI sequences, 64
// bytes at a time, up to the first byte to look at one by one, and returns
// how many bytes of src it used and of dst it wrote.
func csiRun(dst, src []byte) (n, w int) { return csiAVX512(dst, src) }
