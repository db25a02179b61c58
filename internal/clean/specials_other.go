//go:build !amd64

package clean

// Vars, not constants, as on amd64: the tests turn them off.
var (
	haveSpecials = false
	haveCSI      = false
)

func specials([]byte) uint64 { panic("no specials here") }

func csiRun(dst, src []byte) (int, int) { panic("no csiRun here") }

func plainAVX2([]byte) int { panic("no plainAVX2 here") }
