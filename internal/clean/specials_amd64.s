#include "textflag.h"

// func specialsAVX2(p []byte) uint64
//
// Bit k of the result is set when p[k], for k < 64, is ESC, CR, or a byte
// of 0x80 or more: the bytes the cleaner must look at. len(p) >= 64.
TEXT ·specialsAVX2(SB), NOSPLIT, $0-32
	MOVQ p_base+0(FP), SI
	VMOVDQU esc<>(SB), Y14
	VMOVDQU cr<>(SB), Y15

	VMOVDQU (SI), Y0
	VPCMPEQB Y14, Y0, Y1
	VPCMPEQB Y15, Y0, Y2
	VPOR     Y1, Y2, Y1
	VPOR     Y0, Y1, Y1 // the high bit of a byte >= 0x80 is set already
	VPMOVMSKB Y1, AX

	VMOVDQU 32(SI), Y0
	VPCMPEQB Y14, Y0, Y1
	VPCMPEQB Y15, Y0, Y2
	VPOR     Y1, Y2, Y1
	VPOR     Y0, Y1, Y1
	VPMOVMSKB Y1, DX

	SHLQ $32, DX
	ORQ  DX, AX
	VZEROUPPER
	MOVQ AX, ret+24(FP)
	RET

DATA esc<>+0x00(SB)/8, $0x1b1b1b1b1b1b1b1b
DATA esc<>+0x08(SB)/8, $0x1b1b1b1b1b1b1b1b
DATA esc<>+0x10(SB)/8, $0x1b1b1b1b1b1b1b1b
DATA esc<>+0x18(SB)/8, $0x1b1b1b1b1b1b1b1b
GLOBL esc<>(SB), RODATA|NOPTR, $32

DATA cr<>+0x00(SB)/8, $0x0d0d0d0d0d0d0d0d
DATA cr<>+0x08(SB)/8, $0x0d0d0d0d0d0d0d0d
DATA cr<>+0x10(SB)/8, $0x0d0d0d0d0d0d0d0d
DATA cr<>+0x18(SB)/8, $0x0d0d0d0d0d0d0d0d
GLOBL cr<>(SB), RODATA|NOPTR, $32
