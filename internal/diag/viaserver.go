package diag

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"toolkit/internal/diff"
	"toolkit/internal/outcome"
)

// keptFinder finds the kept server of each file a check meets, once for
// each directory and extension: its project's root, its program and its
// options are looked up on disk, and a tree's thousand files of one
// directory share them.
type keptFinder struct {
	ask  Ask
	seen map[string]*kept // by directory and extension; nil: none
}

// of is the kept server of the file named path, or nil.
func (f *keptFinder) of(path, top string) *kept {
	key := filepath.Dir(path) + "\x00" + strings.ToLower(filepath.Ext(path))
	if k, ok := f.seen[key]; ok {
		return k
	}
	var k *kept
	if sp, root, argv := serverFor(path, f.ask.servers(), top); sp != nil {
		a := f.ask
		k = &kept{Name: sp.Name, Argv: argv, Root: root, Settle: sp.Settle, Idle: a.lifetime(), Owner: a.Owner, MemoryMB: a.MemoryMB}
		if sp.Options != nil {
			k.Options = sp.Options(root, top)
		}
		k.ident = k.id()
	}
	f.seen[key] = k
	return k
}

// group are the files of one call a kept server checks, in one ask.
type group struct {
	k         kept
	files     []int // indexes in the call's changes
	elsewhere []outcome.Diagnostic
}

// serverAnswer is what a kept server said of one file, or why it said
// nothing.
type serverAnswer struct {
	name        string
	file        responseFile
	err         string // why no answer came: "loading", "timeout", "could not start: …"
	beforeAsked bool
}

// check asks the group's server for its files: each one's diagnostics
// after the call, and before it where it existed and its content is had.
func (g *group) check(ctx context.Context, changes []Change, answers []*serverAnswer, ask Ask) {
	req := request{Fixes: ask.Fixes, Dir: ask.Dir}
	for _, i := range g.files {
		ch := changes[i]
		f := requestFile{Path: ch.Path, Rel: ch.Rel, Language: languageID(strings.ToLower(filepath.Ext(ch.Path))), After: string(ch.After)}
		if ch.Existed && ch.BeforeKnown {
			before := string(ch.Before)
			f.Before = &before
		}
		req.Files = append(req.Files, f)
	}
	asked := map[string]bool{}
	for _, f := range req.Files {
		asked[f.Path] = true
	}
	for path, status := range ask.Touched {
		switch {
		case asked[path]:
		case status == "A":
			req.Created = append(req.Created, path)
		case status == "D":
			req.Deleted = append(req.Deleted, path)
		default:
			req.Changed = append(req.Changed, path)
		}
	}
	res, err := askKeeper(ctx, g.k, req)
	for n, i := range g.files {
		a := &serverAnswer{name: g.k.Name, beforeAsked: req.Files[n].Before != nil}
		switch {
		case err != nil:
			a.err = err.Error()
		case n < len(res.Files):
			a.file = res.Files[n]
			a.err = a.file.Err
		default:
			a.err = "no answer"
		}
		answers[i] = a
	}
	if err == nil {
		for _, d := range res.Elsewhere {
			d.Path = relTo(ask.Dir, d.Path)
			g.elsewhere = append(g.elsewhere, d)
		}
	}
}

// result is the file's result from the server's answer; where there is
// none, the syntax check's (tier), said to be only that, and why.
func (a *serverAnswer) result(ch Change, tier result, ask Ask) result {
	if a.err != "" {
		why := a.why(ask)
		if tier.checked != nil {
			tier.checked.Why = why
			return tier
		}
		return result{notChecked: why}
	}
	after := bySeverity(a.file.After, ask.Severity)
	r := result{checked: &outcome.Checked{Path: ch.Rel, By: a.name, Tier: "server", Baseline: true}, all: after}
	switch {
	case len(after) == 0:
	case !ch.Existed:
		r.fresh = after
	case !a.beforeAsked || a.file.BeforeErr != "":
		// Without its diagnostics before, the errors on the lines the
		// call made are new; where its content before is not had at all,
		// every one.
		r.checked.Baseline = false
		r.fresh = after
		if ch.BeforeKnown {
			r.fresh = OnChanged(after, diff.Lines(ch.Before, ch.After))
		}
	default:
		r.fresh, r.already = Compare(bySeverity(a.file.Before, ask.Severity), diff.Lines(ch.Before, ch.After), after)
	}
	return r
}

// why says why the server gave no answer, as the text says it.
func (a *serverAnswer) why(ask Ask) string {
	switch {
	case a.err == "loading":
		return fmt.Sprintf("%s still loading after %s", a.name, secs(ask.Wait))
	case a.err == "timeout" || a.err == errNoAnswer.Error():
		return fmt.Sprintf("%s did not answer in %s", a.name, secs(ask.Wait))
	}
	return a.name + " " + a.err
}

// MaxElsewhere is how many other files' new diagnostics a call is told.
const MaxElsewhere = 5

// elsewhere are ds, of files the call did not change, from at most
// MaxElsewhere files, in path order.
func elsewhere(ds []outcome.Diagnostic, changes []Change) []outcome.Diagnostic {
	var files []string
	out := ds[:0]
	for _, d := range ds {
		if slices.ContainsFunc(changes, func(c Change) bool { return c.Rel == d.Path }) {
			continue
		}
		if !slices.Contains(files, d.Path) {
			if len(files) == MaxElsewhere {
				continue
			}
			files = append(files, d.Path)
		}
		out = append(out, d)
	}
	slices.SortStableFunc(out, func(x, y outcome.Diagnostic) int { return strings.Compare(x.Path, y.Path) })
	if len(out) == 0 {
		return nil
	}
	return out
}
