package cut

import (
	"testing"
	"time"
)

func TestSeconds(t *testing.T) {
	for d, want := range map[time.Duration]string{30 * time.Second: "30 s", 250 * time.Millisecond: "0.25 s", 1500 * time.Millisecond: "1.5 s", 2 * time.Second: "2 s"} {
		if got := Seconds(d); got != want {
			t.Errorf("Seconds(%v) = %q, want %q", d, got, want)
		}
	}
}

func TestSize(t *testing.T) {
	for n, want := range map[int64]string{812: "812 bytes", 12 << 10: "12.0 KiB", 12900000: "12.3 MiB", 3 << 30: "3.0 GiB"} {
		if got := Size(n); got != want {
			t.Errorf("Size(%d) = %q, want %q", n, got, want)
		}
	}
}
