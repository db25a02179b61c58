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

// func csiAVX512(dst, src []byte) (n, w int)
//
// Copies src to dst 64 bytes at a time, leaving out each whole CSI
// sequence (ESC [ bytes 0x20-0x3f final 0x40-0x7e) in a window, and stops at
// the first byte the cleaner must look at one by one: a CR, a byte of 0x80
// or more, an ESC that does not start such a sequence within the window.
// It returns the bytes of src used and of dst written. It reads and writes
// whole windows: it goes on only while 64 bytes of src are left and 64
// bytes of room in dst.
//
// Per window, with one bit per byte:
//
//	G = ESC followed by "[", at bits 0-61     the sequences' starts
//	Z = (P + G<<2) &^ P                      the first non-parameter byte after each
//	hard = CR | high | ESC &^ G | Z &^ F      where the window stops, h = tz(hard)
//
// The last start below h whose end is not below h straddles h: the window
// stops at that start instead. Then the bits from each start to its end,
// (Z - G) | Z, are left out of the h bytes.
// SPLAT fills z with the byte imm.
#define SPLAT(imm, z) MOVL imm, AX; VPBROADCASTB AX, z

TEXT ·csiAVX512(SB), NOSPLIT, $0-64
	MOVQ dst_base+0(FP), DI
	MOVQ dst_cap+16(FP), R8
	MOVQ src_base+24(FP), SI
	MOVQ src_len+32(FP), R9
	XORQ R10, R10 // n
	XORQ R11, R11 // w

	SPLAT($0x1b, Z20) // ESC
	SPLAT($0x5b, Z21) // [
	SPLAT($0x0d, Z22) // CR
	SPLAT($0xe0, Z23)
	SPLAT($0x20, Z24)
	SPLAT($0xc0, Z25)
	SPLAT($0x40, Z26)
	SPLAT($0x7f, Z27) // DEL
	MOVQ $0x3fffffffffffffff, R15

loop:
	MOVQ R9, AX
	SUBQ R10, AX
	CMPQ AX, $64
	JLT  done
	MOVQ R8, AX
	SUBQ R11, AX
	CMPQ AX, $64
	JLT  done

	VMOVDQU8 (SI)(R10*1), Z0
	VPCMPEQB Z20, Z0, K1
	KMOVQ    K1, AX          // E
	VPCMPEQB Z21, Z0, K2
	KMOVQ    K2, BX          // B
	VPCMPEQB Z22, Z0, K3
	KMOVQ    K3, CX          // CR
	VPMOVB2M Z0, K4
	KMOVQ    K4, DX          // high
	VPANDD   Z23, Z0, Z1
	VPCMPEQB Z24, Z1, K5
	KMOVQ    K5, R12         // P
	VPANDD   Z25, Z0, Z2
	VPCMPEQB Z26, Z2, K6
	KMOVQ    K6, R13         // 0x40-0x7f
	VPCMPEQB Z27, Z0, K7
	KMOVQ    K7, R14         // DEL
	ANDNQ    R13, R14, R13   // F = R13 &^ DEL

	SHRQ $1, BX
	ANDQ AX, BX
	ANDQ R15, BX             // G
	ORQ  DX, CX              // CR | high
	ANDNQ AX, BX, AX         // E &^ G
	ORQ  AX, CX
	MOVQ BX, AX
	SHLQ $2, AX
	ADDQ R12, AX
	ANDNQ AX, R12, AX        // Z
	ANDNQ AX, R13, DX        // Z &^ F
	ORQ  DX, CX              // hard
	TZCNTQ CX, CX            // h, 64 when none

	MOVQ  $-1, DX
	BZHIQ CX, DX, DX         // below h
	ANDQ  DX, BX             // G below h
	ANDQ  DX, AX             // Z below h
	TESTQ BX, BX
	JZ    keep
	LZCNTQ BX, R14
	XORQ   $63, R14          // the last start below h
	SHRXQ  R14, AX, R12
	TESTQ  R12, R12
	JNZ    keep
	// It ends at h or later: stop at its start.
	MOVQ  R14, CX
	BTRQ  R14, BX
	MOVQ  $-1, DX
	BZHIQ CX, DX, DX

keep:
	MOVQ AX, R12
	SUBQ BX, R12
	ORQ  AX, R12             // left out
	ANDNQ DX, R12, DX        // kept: below h &^ left out
	CMPQ  DX, $-1
	JNE   compress
	// Plain text, all kept.
	VMOVDQU8 Z0, (DI)(R11*1)
	ADDQ  $64, R11
	ADDQ  $64, R10
	JMP   loop

compress:
	KMOVQ DX, K1
	VPCOMPRESSB Z0, K1, Z1
	VMOVDQU8 Z1, (DI)(R11*1)
	POPCNTQ DX, DX
	ADDQ DX, R11
	ADDQ CX, R10
	CMPQ CX, $64
	JEQ  loop

done:
	VZEROUPPER
	MOVQ R10, n+48(FP)
	MOVQ R11, w+56(FP)
	RET

// func plainAVX2(p []byte) int
//
// The length of the run at the start of p without ESC, CR or a byte of 0x80
// or more, 64 bytes at a time, then a byte at a time for the last few.
TEXT ·plainAVX2(SB), NOSPLIT, $0-32
	MOVQ p_base+0(FP), SI
	MOVQ p_len+8(FP), BX
	XORQ AX, AX
	VMOVDQU esc<>(SB), Y14
	VMOVDQU cr<>(SB), Y15

block:
	LEAQ 64(AX), DX
	CMPQ DX, BX
	JHI  tail
	VMOVDQU  (SI)(AX*1), Y0
	VMOVDQU  32(SI)(AX*1), Y3
	VPCMPEQB Y14, Y0, Y1
	VPCMPEQB Y15, Y0, Y2
	VPOR     Y1, Y2, Y1
	VPOR     Y0, Y1, Y1
	VPCMPEQB Y14, Y3, Y4
	VPCMPEQB Y15, Y3, Y5
	VPOR     Y4, Y5, Y4
	VPOR     Y3, Y4, Y4
	VPOR     Y1, Y4, Y6
	VPMOVMSKB Y6, CX
	TESTL    CX, CX
	JNZ      found
	MOVQ     DX, AX
	JMP      block

found:
	VPMOVMSKB Y1, CX
	VPMOVMSKB Y4, DX
	SHLQ $32, DX
	ORQ  DX, CX
	BSFQ CX, CX
	ADDQ CX, AX
	JMP  done

tail:
	CMPQ AX, BX
	JAE  done
	MOVBLZX (SI)(AX*1), CX
	CMPB CL, $0x1b
	JEQ  done
	CMPB CL, $0x0d
	JEQ  done
	TESTB $0x80, CL
	JNE  done
	INCQ AX
	JMP  tail

done:
	VZEROUPPER
	MOVQ AX, ret+24(FP)
	RET
