package read

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"toolkit/internal/text"
)

// source is a file's bytes: the file itself, or, for one that says it is
// empty or reads short (/proc and sysfs files say 0 or 4096 bytes whatever
// they hold), what a read of it to its end brought, up to MaxWhole.
type source struct {
	r    io.ReaderAt
	size int64
	head []byte // the first bytes, up to text.SniffSize, as read
}

func openSource(ctx context.Context, f *os.File, size int64) (*source, error) {
	head := make([]byte, text.SniffSize)
	n, err := f.ReadAt(head[:min(size, text.SniffSize)], 0)
	if err != nil && err != io.EOF {
		return nil, err
	}
	if size > 0 && int64(n) == min(size, text.SniffSize) {
		return &source{r: f, size: size, head: head[:n]}, nil
	}
	var data bytes.Buffer
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		n, err := f.Read(head)
		data.Write(head[:n])
		if data.Len() > MaxWhole {
			return nil, fmt.Errorf("says it holds %d bytes, and reads past %d MiB", size, MaxWhole>>20)
		}
		if errors.Is(err, io.EOF) || n == 0 && err == nil {
			break
		}
		if err != nil {
			return nil, err
		}
	}
	b := data.Bytes()
	return &source{r: bytes.NewReader(b), size: int64(len(b)), head: b[:min(len(b), text.SniffSize)]}, nil
}
