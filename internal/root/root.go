// Package root confines the paths the applets use to one directory tree
// (--root DIR, TOOLKIT_ROOT), with the standard library's os.Root, which
// resolves every component itself and never follows a link out.
//
// Inside a Root, a relative path starts at the root; an absolute path is taken
// as a host path and must lie under the root, spelled with the root's real
// path or as it was given (a root given through a link, /work -> /mnt/vol,
// takes both); "..", an absolute path elsewhere, and a symbolic link (at any
// depth, relative or absolute) that leads out are all refused with
// ErrOutside. os.Root refuses absolute symbolic links altogether, even ones
// that point back inside. "~" and "~/…" are the home directory, which must
// lie under the root too.
//
// A nil *Root confines nothing: every method then works on the process's own
// paths, so the applets have one code path either way.
package root

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// ErrOutside is the error for a path that leads out of the root.
var ErrOutside = errors.New("outside the root")

// Root is a directory tree that paths are confined to.
type Root struct {
	dir   string // absolute, clean, with no link in it
	given string // absolute and clean, as it was given
	r     *os.Root
}

// Open opens dir as a root.
func Open(dir string) (*Root, error) {
	given, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	// Links in the root's own path are the host's business: follow them,
	// so that absolute paths under the real directory are recognised.
	real := given
	if p, err := filepath.EvalSymlinks(given); err == nil {
		real = p
	}
	r, err := os.OpenRoot(real)
	if err != nil {
		return nil, err
	}
	return &Root{dir: real, given: given, r: r}, nil
}

// Dir is the root's directory, absolute.
func (r *Root) Dir() string { return r.dir }

// Close releases the root.
func (r *Root) Close() error {
	if r == nil {
		return nil
	}
	return r.r.Close()
}

// Rel returns name as a path relative to the root, or ErrOutside.
func (r *Root) Rel(name string) (string, error) {
	name = Expand(name)
	if !filepath.IsAbs(name) {
		if name == "" {
			return ".", nil
		}
		return name, nil
	}
	clean := filepath.Clean(name)
	for _, dir := range []string{r.dir, r.given} {
		if clean == dir {
			return ".", nil
		}
		if dir == "/" {
			return strings.TrimPrefix(clean, "/"), nil
		}
		if rest, ok := strings.CutPrefix(clean, dir+string(filepath.Separator)); ok {
			return rest, nil
		}
	}
	return "", ErrOutside
}

// HostPath is where name is on the host: the path to hand to a process that
// is not confined (shell's cwd). It resolves nothing; use it after a check.
func (r *Root) HostPath(name string) (string, error) {
	if r == nil {
		return Expand(name), nil
	}
	rel, err := r.Rel(name)
	if err != nil {
		return "", err
	}
	return filepath.Join(r.dir, rel), nil
}

// do runs one operation on name: as the process would without a root, or
// through os.Root on the path relative to it, with a refusal to leave it
// worded as ErrOutside.
func do[T any](r *Root, op, name string, free func(string) (T, error), confined func(*os.Root, string) (T, error)) (T, error) {
	if r == nil {
		return free(Expand(name))
	}
	rel, err := r.Rel(name)
	if err != nil {
		var zero T
		return zero, &fs.PathError{Op: op, Path: name, Err: err}
	}
	v, err := confined(r.r, rel)
	return v, outside(err, rel)
}

// outside rewrites os.Root's refusal of an escaping path as ErrOutside. A
// path that os.Root found missing on its way out ("nope/../../x": "nope" is
// not there) is outside all the same when it leaves the root as written.
func outside(err error, rel string) error {
	var pe *fs.PathError
	if !errors.As(err, &pe) || pe.Err == nil {
		return err
	}
	if pe.Err.Error() == "path escapes from parent" {
		pe.Err = ErrOutside
	} else if errors.Is(pe.Err, fs.ErrNotExist) {
		if c := filepath.Clean(rel); c == ".." || strings.HasPrefix(c, "../") {
			pe.Err = ErrOutside
		}
	}
	return err
}

// The operations the applets need, confined when r is not nil.

func (r *Root) OpenFile(name string, flag int, perm os.FileMode) (*os.File, error) {
	return do(r, "open", name, func(n string) (*os.File, error) { return os.OpenFile(n, flag, perm) },
		func(or *os.Root, rel string) (*os.File, error) { return or.OpenFile(rel, flag, perm) })
}

func (r *Root) Stat(name string) (os.FileInfo, error) {
	return do(r, "stat", name, os.Stat, (*os.Root).Stat)
}

func (r *Root) Lstat(name string) (os.FileInfo, error) {
	return do(r, "lstat", name, os.Lstat, (*os.Root).Lstat)
}

func (r *Root) Readlink(name string) (string, error) {
	return do(r, "readlink", name, os.Readlink, (*os.Root).Readlink)
}

func (r *Root) MkdirAll(name string, perm os.FileMode) error {
	_, err := do(r, "mkdir", name, func(n string) (struct{}, error) { return struct{}{}, os.MkdirAll(n, perm) },
		func(or *os.Root, rel string) (struct{}, error) { return struct{}{}, or.MkdirAll(rel, perm) })
	return err
}

func (r *Root) Remove(name string) error {
	_, err := do(r, "remove", name, func(n string) (struct{}, error) { return struct{}{}, os.Remove(n) },
		func(or *os.Root, rel string) (struct{}, error) { return struct{}{}, or.Remove(rel) })
	return err
}

func (r *Root) Rename(from, to string) error {
	relFrom := Expand(from)
	if r != nil {
		var err error
		if relFrom, err = r.Rel(from); err != nil {
			return &fs.PathError{Op: "rename", Path: from, Err: err}
		}
	}
	_, err := do(r, "rename", to, func(n string) (struct{}, error) { return struct{}{}, os.Rename(from, n) },
		func(or *os.Root, rel string) (struct{}, error) { return struct{}{}, or.Rename(relFrom, rel) })
	return err
}

// OpenRoot opens the directory name as an os.Root of its own, inside r:
// grep and glob walk the tree under it, and nothing they open through it
// leaves it.
func (r *Root) OpenRoot(name string) (*os.Root, error) {
	return do(r, "open", name, os.OpenRoot, (*os.Root).OpenRoot)
}

// Within reports whether the path p is dir or a path under it.
func Within(p, dir string) bool {
	return p == dir || strings.HasPrefix(p, strings.TrimSuffix(dir, "/")+"/")
}
