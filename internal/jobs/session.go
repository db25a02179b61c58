package jobs

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"toolkit/internal/proc"
)

// A session carries a shell's working directory and exported variables
// from one call to the next: each call is a fresh /bin/sh that starts in
// the directory the last one ended in, with the variables it had exported,
// and saves them when it ends (through an EXIT trap, so also after exit N).
// The saved state is a file of the state directory, sessions/NAME.json;
// the shell writes sessions/NAME.new, which toolkit takes in once the
// command has ended.

// Session is what a session carries.
type Session struct {
	Cwd string `json:"cwd"`
	// Env is the shell's export -p: lines a shell can run to export the
	// variables again.
	Env string `json:"env"`
}

// sessionEnd ends the file the shell writes, so that a file cut short (a
// kill in the middle) is never taken in.
const sessionEnd = "#toolkit-session-end"

// SessionFile is where session name's state is kept, without its suffix.
func SessionFile(name string) (string, error) {
	state, err := Dir()
	if err != nil {
		return "", err
	}
	return filepath.Join(state, "sessions", name), nil
}

// LoadSession reads a session's state: empty for a new session.
func LoadSession(file string) (Session, error) {
	var s Session
	err := readJSON(file+".json", &s)
	if errors.Is(err, os.ErrNotExist) {
		err = nil
	}
	return s, err
}

// SessionScript is command wrapped to run in session s: s's variables
// exported, then env's (the call's own win), and a trap that saves the
// directory and variables to file when the shell exits.
func SessionScript(command string, s Session, env map[string]string, file string) string {
	var b strings.Builder
	b.WriteString(s.Env)
	if s.Env != "" && !strings.HasSuffix(s.Env, "\n") {
		b.WriteByte('\n')
	}
	names := make([]string, 0, len(env))
	for k := range env {
		names = append(names, k)
	}
	slices.Sort(names)
	for _, k := range names {
		b.WriteString("export " + k + "=" + proc.Quote(env[k]) + "\n")
	}
	b.WriteString("__toolkit_save() { { pwd; export -p; echo '" + sessionEnd + "'; } >" + proc.Quote(file+".new") + " 2>/dev/null; }\n")
	b.WriteString("trap '__toolkit_status=$?; __toolkit_save; exit $__toolkit_status' EXIT\n")
	b.WriteString(command)
	b.WriteByte('\n')
	return b.String()
}

// FinishSession takes in what the shell saved, if it saved it whole, and
// returns the session's state as it now is.
func FinishSession(file string) (Session, error) {
	b, err := os.ReadFile(file + ".new")
	if err != nil {
		return LoadSession(file)
	}
	os.Remove(file + ".new")
	b, whole := bytes.CutSuffix(b, []byte(sessionEnd+"\n"))
	cwd, env, found := bytes.Cut(b, []byte("\n"))
	if !whole || !found {
		return LoadSession(file)
	}
	s := Session{Cwd: string(cwd), Env: string(env)}
	return s, writeJSON(file+".json", s)
}
