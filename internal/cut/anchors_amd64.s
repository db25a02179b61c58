#include "textflag.h"

// func anchorsAVX2(b []byte) int
//
// Returns the offset of the first 32-byte block of b that may hold the
// start of a failure word: where a byte and the two after it, each ORed
// with 0x20 (lower case for letters, never a letter for anything else), are
// "err", "exc", "fai", "fat", "pan" or "tra". Returns -1 when no block does.
// Only blocks whose three windows fit in b are looked at: the caller scans
// the last len(b)%32+2 bytes itself.
TEXT ·anchorsAVX2(SB), NOSPLIT, $0-32
	MOVQ b_base+0(FP), SI
	MOVQ b_len+8(FP), CX
	XORQ AX, AX
	VMOVDQU lower<>(SB), Y15

loop:
	MOVQ CX, DX
	SUBQ AX, DX
	CMPQ DX, $34
	JLT  none

	VMOVDQU (SI)(AX*1), Y0
	VMOVDQU 1(SI)(AX*1), Y1
	VMOVDQU 2(SI)(AX*1), Y2
	VPOR    Y15, Y0, Y0
	VPOR    Y15, Y1, Y1
	VPOR    Y15, Y2, Y2

	// first letters
	VPCMPEQB bytE<>(SB), Y0, Y3  // e
	VPCMPEQB bytF<>(SB), Y0, Y4  // f
	VPCMPEQB bytP<>(SB), Y0, Y5  // p
	VPCMPEQB bytT<>(SB), Y0, Y6  // t

	// second letters
	VPCMPEQB bytR<>(SB), Y1, Y7  // r
	VPCMPEQB bytA<>(SB), Y1, Y8  // a
	VPCMPEQB bytX<>(SB), Y1, Y9  // x

	// err = e r r
	VPCMPEQB bytR<>(SB), Y2, Y10
	VPAND    Y3, Y7, Y11
	VPAND    Y11, Y10, Y12
	// exc = e x c
	VPCMPEQB bytC<>(SB), Y2, Y10
	VPAND    Y3, Y9, Y11
	VPAND    Y11, Y10, Y11
	VPOR     Y11, Y12, Y12
	// fai, fat = f a i, f a t
	VPAND    Y4, Y8, Y11
	VPCMPEQB bytI<>(SB), Y2, Y10
	VPCMPEQB bytT<>(SB), Y2, Y13
	VPOR     Y10, Y13, Y10
	VPAND    Y11, Y10, Y11
	VPOR     Y11, Y12, Y12
	// pan = p a n
	VPAND    Y5, Y8, Y11
	VPCMPEQB bytN<>(SB), Y2, Y10
	VPAND    Y11, Y10, Y11
	VPOR     Y11, Y12, Y12
	// tra = t r a
	VPAND    Y6, Y7, Y11
	VPCMPEQB bytA<>(SB), Y2, Y10
	VPAND    Y11, Y10, Y11
	VPOR     Y11, Y12, Y12

	VPMOVMSKB Y12, DX
	TESTL     DX, DX
	JNZ       found
	ADDQ      $32, AX
	JMP       loop

found:
	VZEROUPPER
	MOVQ AX, ret+24(FP)
	RET

none:
	VZEROUPPER
	MOVQ $-1, ret+24(FP)
	RET

#define SPLAT(name, v) \
	DATA name<>+0x00(SB)/8, $v; \
	DATA name<>+0x08(SB)/8, $v; \
	DATA name<>+0x10(SB)/8, $v; \
	DATA name<>+0x18(SB)/8, $v; \
	GLOBL name<>(SB), RODATA|NOPTR, $32

SPLAT(lower, 0x2020202020202020)
SPLAT(bytE, 0x6565656565656565)
SPLAT(bytF, 0x6666666666666666)
SPLAT(bytP, 0x7070707070707070)
SPLAT(bytT, 0x7474747474747474)
SPLAT(bytR, 0x7272727272727272)
SPLAT(bytA, 0x6161616161616161)
SPLAT(bytX, 0x7878787878787878)
SPLAT(bytC, 0x6363636363636363)
SPLAT(bytI, 0x6969696969696969)
SPLAT(bytN, 0x6e6e6e6e6e6e6e6e)

// func anchorsAVX512(b []byte, t *[3][128]byte) int
//
// anchorsAVX2 64 bytes at a time, by table: t[k][c] has bit a set when the
// ASCII byte c is the k-th letter of anchor a (either case). Each byte and
// the two after it are looked up, and an anchor starts where the three
// lookups share a bit. A third byte of 0x80 or more looks up nothing; a
// first or second one looks up its low seven bits, which can pass for a
// letter only in a leading byte of UTF-8, and the byte after that cannot:
// a false start needs invalid UTF-8, and the caller's exact match drops it.
// One mask instead of three makes the scan twice as fast here. It returns the
// offset of the first 64-byte block that holds a start, or -1, looking only
// at blocks whose windows fit in b: the caller scans the last len(b)%64+2
// bytes itself.
TEXT ·anchorsAVX512(SB), NOSPLIT, $0-40
	MOVQ b_base+0(FP), SI
	MOVQ b_len+8(FP), CX
	MOVQ t+24(FP), DX
	XORQ AX, AX
	VMOVDQU64 0(DX), Z10
	VMOVDQU64 64(DX), Z11
	VMOVDQU64 128(DX), Z12
	VMOVDQU64 192(DX), Z13
	VMOVDQU64 256(DX), Z14
	VMOVDQU64 320(DX), Z15

loop512:
	MOVQ CX, BX
	SUBQ AX, BX
	CMPQ BX, $66
	JLT  none512

	VMOVDQU8 (SI)(AX*1), Z0
	VMOVDQU8 1(SI)(AX*1), Z1
	VMOVDQU8 2(SI)(AX*1), Z2
	VPMOVB2M Z2, K3
	KNOTQ    K3, K3
	VPERMI2B Z11, Z10, Z0       // the first letters' table
	VPERMI2B Z13, Z12, Z1       // the second
	VPERMI2B.Z Z15, Z14, K3, Z2 // the third, for bytes below 0x80
	VPTERNLOGD $0x80, Z2, Z1, Z0 // Z0 & Z1 & Z2
	VPTESTMB   Z0, Z0, K4
	KORTESTQ   K4, K4
	JNZ        found512
	ADDQ       $64, AX
	JMP        loop512

found512:
	VZEROUPPER
	MOVQ AX, ret+32(FP)
	RET

none512:
	VZEROUPPER
	MOVQ $-1, ret+32(FP)
	RET
