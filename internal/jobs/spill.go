package jobs

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"toolkit/internal/cut"
	"toolkit/internal/state"
	"toolkit/internal/text"
)

// Spills are the whole outputs of cut shell calls, kept where one agent's
// state is (TOOLKIT_STATE/spill), for the model to read: bounded all
// together by SpillCap, the oldest going first, and none kept longer than
// the job lifetime.

// SpillDir is the directory the spills are kept in.
func SpillDir() (string, error) {
	st, err := state.Dir("spill")
	if err != nil {
		return "", err
	}
	return filepath.Join(st, "spill"), nil
}

// MaxSpills bounds the spills all together, whatever the free space.
const MaxSpills = 1 << 30

// SpillCap is what the spills in dir may hold all together: min(1 GiB,
// 10 % of its file system's free space, the spills counted as free).
func SpillCap(dir string, kept int64) int64 {
	var fs unix.Statfs_t
	if unix.Statfs(dir, &fs) != nil {
		return MaxSpills
	}
	free := int64(fs.Bavail)*fs.Bsize + kept
	return min(MaxSpills, free/10)
}

// SpillBound says the bound where a spill's path is printed: "kept for 1 h
// or until 1 GiB of newer output".
func SpillBound(lifetime time.Duration, cap int64) string {
	return fmt.Sprintf("kept for %s or until %s of newer output", words(lifetime), cut.Size(cap))
}

// Spills is what is kept: how many spills, and their bytes.
type Spills struct {
	Dir   string `json:"dir"`
	Files int    `json:"files"`
	Bytes int64  `json:"bytes"`
}

func (s Spills) String() string {
	return fmt.Sprintf("%s of whole outputs (%s) kept in %s", text.Count(int64(s.Files), "file"), cut.Size(s.Bytes), s.Dir)
}

// ExpireSpills removes the spills older than lifetime, as TrimSpills does,
// but reads the directory only when one of them may be that old: the
// stamp the last trim left says when the oldest spill it kept was written,
// so a call before that time and lifetime have passed costs one stat,
// however many spills are kept. The cap needs no look here: only a spill
// being written adds to them, and it trims them as it grows.
func ExpireSpills(lifetime time.Duration) {
	dir, err := SpillDir()
	if err != nil || lifetime <= 0 {
		return
	}
	if fi, err := os.Stat(filepath.Join(dir, sweptStamp)); err == nil && time.Since(fi.ModTime()) <= lifetime {
		return
	}
	trimSpills(dir, lifetime, "")
}

// sweptStamp is the file in the spill directory whose modification time is
// that of the oldest spill the last trim kept, or the trim's start if it
// kept none: no spill there was written earlier, as a spill's time only
// grows and a newer one is made after it.
const sweptStamp = ".swept"

// TrimSpills removes the spills older than lifetime, then the oldest while
// all together hold more than their cap; keep, the one being written,
// stays. It returns what is kept, and room: the most keep may hold before
// an older one must go.
func TrimSpills(lifetime time.Duration, keep string) (kept Spills, room int64) {
	dir, err := SpillDir()
	if err != nil {
		return Spills{}, MaxSpills
	}
	return trimSpills(dir, lifetime, keep)
}

// trimSpills is TrimSpills on the spill directory dir.
func trimSpills(dir string, lifetime time.Duration, keep string) (kept Spills, room int64) {
	oldest := time.Now() // before the directory is read: a spill it misses is newer
	type spill struct {
		path string
		mod  time.Time
		size int64
	}
	var all []spill
	var total, keepSize int64
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), SpillPrefix) {
			continue
		}
		fi, err := e.Info()
		if err != nil {
			continue
		}
		p := filepath.Join(dir, e.Name())
		if lifetime > 0 && time.Since(fi.ModTime()) > lifetime && p != keep {
			os.Remove(p)
			continue
		}
		all = append(all, spill{p, fi.ModTime(), fi.Size()})
		total += fi.Size()
		if p == keep {
			keepSize = fi.Size()
		}
	}
	slices.SortFunc(all, func(a, b spill) int { return a.mod.Compare(b.mod) })
	cap := SpillCap(dir, total)
	for len(all) > 0 && total > cap {
		if all[0].path != keep {
			os.Remove(all[0].path)
			total -= all[0].size
		}
		all = all[1:]
	}
	if len(all) > 0 && all[0].mod.Before(oldest) {
		oldest = all[0].mod
	}
	stamp(filepath.Join(dir, sweptStamp), oldest)
	return Spills{Dir: dir, Files: len(all), Bytes: total}, cap - (total - keepSize)
}

// stamp sets the modification time of the file at path, made empty if it
// is not there.
func stamp(path string, at time.Time) {
	if err := os.Chtimes(path, at, at); errors.Is(err, fs.ErrNotExist) {
		if f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600); err == nil {
			f.Close()
			_ = os.Chtimes(path, at, at)
		}
	}
}

// KeptSpills is what the spills hold now.
func KeptSpills() Spills {
	kept, _ := TrimSpills(0, "")
	return kept
}

// words says a duration as a person does: "1 h", "30 min", "45 s".
func words(d time.Duration) string {
	switch {
	case d >= time.Hour && d%time.Hour == 0:
		return fmt.Sprintf("%d h", d/time.Hour)
	case d >= time.Minute && d%time.Minute == 0:
		return fmt.Sprintf("%d min", d/time.Minute)
	}
	return fmt.Sprintf("%d s", max(1, d/time.Second))
}
