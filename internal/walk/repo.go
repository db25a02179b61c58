package walk

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"toolkit/internal/ignore"
)

// repoExcludes are the ignore files a repository has besides its
// .gitignore files, the last deciding first: the global excludes file
// ($XDG_CONFIG_HOME/git/ignore, else ~/.config/git/ignore; git's default
// for core.excludesFile, which toolkit does not read from git's
// configuration) and the repository's info/exclude. gitPath is the
// repository's .git: a directory, or a file naming one (a worktree or a
// submodule), whose common directory's info/exclude applies. base is the
// repository's top, from the walk's top. Links are followed, as git
// follows them.
func repoExcludes(gitPath, base string) ignore.Stack {
	var stack ignore.Stack
	for _, name := range []string{globalExcludes(), filepath.Join(gitDir(gitPath), "info", "exclude")} {
		if text, ok := readFollowing(name); ok {
			stack = append(stack, ignore.Parse(base, text))
		}
	}
	return stack
}

// globalExcludes is the global excludes file's path, or "".
func globalExcludes() string {
	if x := os.Getenv("XDG_CONFIG_HOME"); x != "" {
		return filepath.Join(x, "git", "ignore")
	}
	if h := os.Getenv("HOME"); h != "" {
		return filepath.Join(h, ".config", "git", "ignore")
	}
	return ""
}

// gitDir is the directory that holds a repository's info/: gitPath itself,
// or for a .git file ("gitdir: …"), the directory it names, or that
// directory's common one (commondir, in a worktree's).
func gitDir(gitPath string) string {
	fi, err := os.Stat(gitPath)
	if err != nil || fi.IsDir() {
		return gitPath
	}
	text, ok := readFollowing(gitPath)
	dir, found := strings.CutPrefix(strings.TrimSpace(text), "gitdir: ")
	if !ok || !found {
		return gitPath
	}
	if !filepath.IsAbs(dir) {
		dir = filepath.Join(filepath.Dir(gitPath), dir)
	}
	if common, ok := readFollowing(filepath.Join(dir, "commondir")); ok {
		c := strings.TrimSpace(common)
		if !filepath.IsAbs(c) {
			c = filepath.Join(dir, c)
		}
		return c
	}
	return dir
}

// readFollowing reads a regular file of at most maxIgnoreFile bytes,
// following links.
func readFollowing(name string) (string, bool) {
	if name == "" {
		return "", false
	}
	f, err := os.Open(name)
	if err != nil {
		return "", false
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() || fi.Size() > maxIgnoreFile {
		return "", false
	}
	b, err := io.ReadAll(io.LimitReader(f, maxIgnoreFile+1))
	if err != nil || len(b) > maxIgnoreFile {
		return "", false
	}
	return string(b), true
}

// nestedRepo is the .git of the repository whose top is the directory fd,
// as a host path, if that directory has one: git takes it for a
// repository of its own, and what the ignore files above say stops at it.
func nestedRepo(fd int) (string, bool) {
	dir, err := os.Readlink(fmt.Sprintf("/proc/self/fd/%d", fd))
	if err != nil || !filepath.IsAbs(dir) {
		return "", false
	}
	fi, err := os.Lstat(dir + "/.git")
	if err != nil || !fi.IsDir() && !fi.Mode().IsRegular() {
		return "", false
	}
	return dir + "/.git", true
}
