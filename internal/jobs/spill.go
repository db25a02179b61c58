package jobs

import (
	"fmt"
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

// TrimSpills removes the spills older than lifetime, then the oldest while
// all together hold more than their cap; keep, the one being written,
// stays. It returns what is kept, and room: the most keep may hold before
// an older one must go.
func TrimSpills(lifetime time.Duration, keep string) (kept Spills, room int64) {
	dir, err := SpillDir()
	if err != nil {
		return Spills{}, MaxSpills
	}
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
	return Spills{Dir: dir, Files: len(all), Bytes: total}, cap - (total - keepSize)
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
