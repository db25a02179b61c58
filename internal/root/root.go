// Package root confines the paths read, write and shell's cwd use to one
// directory tree (--root DIR, TOOLKIT_ROOT), with the standard library's
// os.Root, which resolves every component itself and never follows a link out.
//
// Inside a Root, a relative path starts at the root; an absolute path is taken
// as a host path and must lie under the root; "..", an absolute path elsewhere,
// and a symbolic link (at any depth, relative or absolute) that leads out are
// all refused with ErrOutside. os.Root refuses absolute symbolic links
// altogether, even ones that point back inside.
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
	dir string // absolute and clean
	r   *os.Root
}

// Open opens dir as a root.
func Open(dir string) (*Root, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	// Links in the root's own path are the host's business: follow them,
	// so that absolute paths under the real directory are recognised.
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		abs = real
	}
	r, err := os.OpenRoot(abs)
	if err != nil {
		return nil, err
	}
	return &Root{dir: abs, r: r}, nil
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
	if filepath.IsAbs(name) {
		clean := filepath.Clean(name)
		if clean == r.dir {
			return ".", nil
		}
		rest, ok := strings.CutPrefix(clean, r.dir+string(filepath.Separator))
		if !ok && r.dir == "/" {
			rest, ok = strings.TrimPrefix(clean, "/"), true
		}
		if !ok {
			return "", ErrOutside
		}
		return rest, nil
	}
	if name == "" {
		return ".", nil
	}
	return name, nil
}

// HostPath is where name is on the host: the path to hand to a process that
// is not confined (shell's cwd). It resolves nothing; use it after a check.
func (r *Root) HostPath(name string) (string, error) {
	if r == nil {
		return name, nil
	}
	rel, err := r.Rel(name)
	if err != nil {
		return "", err
	}
	return filepath.Join(r.dir, rel), nil
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

// The operations read and write need, confined when r is not nil.

func (r *Root) OpenFile(name string, flag int, perm os.FileMode) (*os.File, error) {
	if r == nil {
		return os.OpenFile(name, flag, perm)
	}
	rel, err := r.Rel(name)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: name, Err: err}
	}
	f, err := r.r.OpenFile(rel, flag, perm)
	return f, outside(err, rel)
}

func (r *Root) Stat(name string) (os.FileInfo, error) {
	if r == nil {
		return os.Stat(name)
	}
	rel, err := r.Rel(name)
	if err != nil {
		return nil, &fs.PathError{Op: "stat", Path: name, Err: err}
	}
	fi, err := r.r.Stat(rel)
	return fi, outside(err, rel)
}

func (r *Root) Lstat(name string) (os.FileInfo, error) {
	if r == nil {
		return os.Lstat(name)
	}
	rel, err := r.Rel(name)
	if err != nil {
		return nil, &fs.PathError{Op: "lstat", Path: name, Err: err}
	}
	fi, err := r.r.Lstat(rel)
	return fi, outside(err, rel)
}

func (r *Root) Readlink(name string) (string, error) {
	if r == nil {
		return os.Readlink(name)
	}
	rel, err := r.Rel(name)
	if err != nil {
		return "", &fs.PathError{Op: "readlink", Path: name, Err: err}
	}
	s, err := r.r.Readlink(rel)
	return s, outside(err, rel)
}

func (r *Root) MkdirAll(name string, perm os.FileMode) error {
	if r == nil {
		return os.MkdirAll(name, perm)
	}
	rel, err := r.Rel(name)
	if err != nil {
		return &fs.PathError{Op: "mkdir", Path: name, Err: err}
	}
	return outside(r.r.MkdirAll(rel, perm), rel)
}

func (r *Root) Rename(from, to string) error {
	if r == nil {
		return os.Rename(from, to)
	}
	relFrom, err := r.Rel(from)
	if err != nil {
		return &fs.PathError{Op: "rename", Path: from, Err: err}
	}
	relTo, err := r.Rel(to)
	if err != nil {
		return &fs.PathError{Op: "rename", Path: to, Err: err}
	}
	return outside(r.r.Rename(relFrom, relTo), relTo)
}

func (r *Root) Remove(name string) error {
	if r == nil {
		return os.Remove(name)
	}
	rel, err := r.Rel(name)
	if err != nil {
		return &fs.PathError{Op: "remove", Path: name, Err: err}
	}
	return outside(r.r.Remove(rel), rel)
}
