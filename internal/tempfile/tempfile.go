// Package tempfile names and creates files that nobody else can predict or
// open: 128 random bits in the name, created exclusively, mode 0600.
package tempfile

import (
	"crypto/rand"
	"encoding/hex"
	"os"
	"path/filepath"
	"syscall"
)

// Name returns prefix, 32 random hex digits, then suffix.
func Name(prefix, suffix string) string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails on Linux
	return prefix + hex.EncodeToString(b[:]) + suffix
}

// Create creates a new file in dir, readable and writable by its owner only.
func Create(dir, prefix, suffix string) (*os.File, error) {
	for {
		f, err := os.OpenFile(filepath.Join(dir, Name(prefix, suffix)), os.O_RDWR|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, 0o600)
		if os.IsExist(err) {
			continue // 2^-128: never, but an exclusive create must be ready for it
		}
		return f, err
	}
}
