package root

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// maxLinks is how many symbolic links a path may go through, as Linux has it.
const maxLinks = 40

// Resolve follows the symbolic links in name component by component, as the
// kernel does, and returns the path of the file it names with no link left
// in it: relative to the root under one, else relative or absolute as name
// is. A link's target is taken from the directory the link is really in,
// not from the way the path spelled it. Components that do not exist are
// kept as they are (a file about to be created). A link that leads out of
// the root is ErrOutside; under a root an absolute link is refused, as
// os.Root refuses them.
func (r *Root) Resolve(name string) (string, error) {
	var cur string // the part resolved so far
	if r != nil {
		rel, err := r.Rel(name)
		if err != nil {
			return "", &fs.PathError{Op: "resolve", Path: name, Err: err}
		}
		name = rel
	} else {
		name = Expand(name)
		if filepath.IsAbs(name) {
			cur = "/"
		}
	}
	rest := strings.Split(name, "/")
	for links := 0; len(rest) > 0; {
		c := rest[0]
		rest = rest[1:]
		switch {
		case c == "" || c == ".":
			continue
		case c == "..":
			up, err := parent(r, cur)
			if err != nil {
				return "", &fs.PathError{Op: "resolve", Path: name, Err: err}
			}
			cur = up
			continue
		}
		next := filepath.Join(cur, c)
		fi, err := r.Lstat(next)
		if errors.Is(err, fs.ErrNotExist) && !errors.Is(err, ErrOutside) {
			// The rest does not exist yet: it is what it says, but it may
			// not climb out either.
			tail := filepath.Join(append([]string{next}, rest...)...)
			if r != nil && (tail == ".." || strings.HasPrefix(tail, "../")) {
				return "", &fs.PathError{Op: "resolve", Path: name, Err: ErrOutside}
			}
			return tail, nil
		}
		if err != nil {
			return "", err
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			cur = next
			continue
		}
		if links++; links > maxLinks {
			return "", &fs.PathError{Op: "resolve", Path: name, Err: syscall.ELOOP}
		}
		target, err := r.Readlink(next)
		if err != nil {
			return "", err
		}
		if filepath.IsAbs(target) {
			if r != nil {
				return "", &fs.PathError{Op: "resolve", Path: name, Err: ErrOutside}
			}
			cur = "/"
		}
		rest = append(strings.Split(target, "/"), rest...)
	}
	if cur == "" {
		cur = "."
	}
	return cur, nil
}

// parent is the directory above cur, a path with no links in it. Above the
// root there is nothing (ErrOutside); above a relative path's start there
// is "..".
func parent(r *Root, cur string) (string, error) {
	switch {
	case cur == "/":
		return "/", nil
	case cur == "" || cur == ".." || strings.HasSuffix(cur, "/.."):
		if r != nil {
			return "", ErrOutside
		}
		return filepath.Join(cur, ".."), nil
	}
	up := filepath.Dir(cur)
	if up == "." {
		up = ""
	}
	return up, nil
}

// Expand makes "~" and "~/…" the home directory ($HOME) and what is below
// it; any other path is returned as it is.
func Expand(name string) string {
	if name != "~" && !strings.HasPrefix(name, "~/") {
		return name
	}
	home := os.Getenv("HOME")
	if home == "" {
		return name
	}
	return filepath.Join(home, name[1:])
}
