// Package collect finds the JUnit documents to read: local files,
// directories and globs, and (elsewhere in this package) artifacts of
// workflow runs. It yields sources; it does not parse XML.
package collect

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/flakegate/flakegate/pkg/history"

	globs "github.com/flakegate/flakegate/pkg/internal/glob"
	"github.com/flakegate/flakegate/pkg/internal/par"
)

// Local expands paths into JUnit sources. Each path may be a file, a
// directory (searched recursively for *.xml) or a glob, where ** matches
// any number of directories. A path that matches nothing is reported in
// the second result, not silently dropped. A malformed glob is an error.
// Only regular files are read: a FIFO, device or socket that matches is
// reported as skipped, never opened, so it cannot hang the read.
func Local(paths []string) ([]history.Source, []history.Skipped, error) {
	return LocalIn("", paths)
}

// LocalIn is Local for the action, whose workspace is root (when not
// empty): relative paths are taken from root and may not climb out of it
// (an error names the path); an absolute path is the workflow author's
// explicit choice (say, under RUNNER_TEMP) and is read as given. A file
// found under root that is a symbolic link to somewhere outside it is
// skipped with a reason: a checkout can hold symbolic links the pull
// request committed.
func LocalIn(root string, paths []string) ([]history.Source, []history.Skipped, error) {
	var files []found
	var missing []history.Skipped
	var realRoot string
	if root != "" {
		var err error
		if realRoot, err = filepath.EvalSymlinks(root); err != nil {
			return nil, nil, fmt.Errorf("workspace %s: %w", root, err)
		}
	}
	for _, p := range paths {
		if root != "" && !filepath.IsAbs(p) {
			if !within(root, filepath.Join(root, p)) {
				return nil, nil, fmt.Errorf("path %q climbs out of the workspace %s: give a path relative to it and inside it, or an absolute path", p, root)
			}
			p = filepath.Join(root, p)
		}
		got, err := expand(p)
		if err != nil {
			return nil, nil, err
		}
		if len(got) == 0 {
			why := nothingIn(p)
			if root != "" && filepath.IsAbs(p) && !within(root, filepath.Clean(p)) {
				// In the action's container, a path on the runner reads
				// nothing: the runner rewrites an input that starts
				// with its workspace or temporary directory, but not
				// the second line of a list.
				why += fmt.Sprintf(" (an absolute path is read where flakegate runs, which sees the workspace at %s: give a path relative to the workspace)", root)
			}
			missing = append(missing, history.Skipped{Path: p, Error: why})
		}
		files = append(files, got...)
	}
	// The walk lists each directory sorted, in order, so this is most
	// often a check.
	byPath := func(a, b found) int { return strings.Compare(a.path, b.path) }
	if !slices.IsSortedFunc(files, byPath) {
		slices.SortFunc(files, byPath)
	}
	files = slices.CompactFunc(files, func(a, b found) bool { return a.path == b.path })
	if len(paths) > 1 {
		files = oneNameEach(files)
	}
	files, dups := linkedTwice(files)
	missing = append(missing, dups...)
	srcs := make([]history.Source, 0, len(files))
	// Per directory: its files' leg, the workspace's real path when it is
	// in the workspace (so are its files), and then why its files are not
	// read ("" when they are). The files of one directory share all three,
	// and a class-per-file layout has thousands of files in few
	// directories.
	// They are found by the path up to its last separator, which decides
	// filepath.Dir, itself worked out once a directory.
	type dirInfo struct{ leg, confine, out string }
	dirs := map[string]dirInfo{}
	for _, fd := range files {
		f := fd.path
		prefix := f[:strings.LastIndexAny(f, sepChars)+1]
		d, ok := dirs[prefix]
		if !ok || prefix == "" { // "" may be of several volumes (C:a.xml)
			dir := filepath.Dir(f)
			d.leg = labelName(filepath.ToSlash(dir))
			if root != "" && within(root, filepath.Clean(dir)) {
				d.confine, d.out = realRoot, outside(dir, realRoot, "in a directory linked")
			}
			dirs[prefix] = d
		}
		confine := d.confine
		switch {
		case !fd.regular:
			// A link, a FIFO or a device: looked at again, and a link
			// followed out of the workspace is not read.
			if why := unreadable(f, confine); why != "" {
				missing = append(missing, history.Skipped{Path: f, Error: why})
				continue
			}
		case confine != "" && d.out != "":
			// A regular file the walk listed is where its directory is:
			// only a directory above it can be a link out.
			missing = append(missing, history.Skipped{Path: f, Error: d.out})
			continue
		}
		leg := d.leg
		if p := filepath.ToSlash(f); legPath(p) != p {
			leg = labelName(path.Dir(legPath(p)))
		}
		srcs = append(srcs, history.Source{Name: f, Leg: leg, Open: func() (io.ReadCloser, error) { return openRegular(f) }})
	}
	srcs, missing = dropCopies(srcs, missing)
	return srcs, missing, nil
}

// dropCopies leaves out of srcs the known copies of results another of
// them holds (findCopies), listing each in skipped with the file read
// instead. The files whose kind it needs are read (their first peekLen
// bytes) on every core.
func dropCopies(srcs []history.Source, skipped []history.Skipped) ([]history.Source, []history.Skipped) {
	paths := make([]string, len(srcs))
	for i, s := range srcs {
		paths[i] = filepath.ToSlash(s.Name)
	}
	drops := findCopies(paths, func(idx []int) []copyKind {
		kinds := make([]copyKind, len(idx))
		par.Each(len(idx), 0, func(_, k int) { kinds[k] = peekKind(srcs[idx[k]].Open) })
		return kinds
	})
	return leaveOut(srcs, drops, func(s history.Source) string { return s.Name }, skipped)
}

// outside says why p, inside the workspace by its path, is not read: it
// resolves, through symbolic links, out of realRoot, the workspace's real
// path. "" when it stays inside. what names the link in the reason.
func outside(p, realRoot, what string) string {
	real, err := filepath.EvalSymlinks(p)
	if err != nil {
		return err.Error()
	}
	if !within(realRoot, real) {
		return what + " out of the workspace (to " + real + "): not followed"
	}
	return ""
}

// within reports whether the clean path p is root or inside it.
func within(root, p string) bool {
	rel, err := filepath.Rel(filepath.Clean(root), p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}

// unreadable says why f is not read, or "": not a regular file, or (with
// realRoot) a symbolic link that leads out of it.
func unreadable(f, realRoot string) string {
	fi, err := os.Stat(f)
	if err != nil {
		return err.Error()
	}
	if !fi.Mode().IsRegular() {
		return fmt.Sprintf("not a regular file (%s): only regular files are read", fi.Mode().Type())
	}
	if realRoot != "" {
		return outside(f, realRoot, "a symbolic link")
	}
	return ""
}

// sepChars are the separators of a path here: filepath.Dir cuts at the
// last of them.
const sepChars = string(filepath.Separator) + "/"

// hasMeta reports whether p holds a wildcard or a {a,b} alternation.
func hasMeta(p string) bool { return strings.ContainsAny(p, "*?[{") }

// oneNameEach leaves out a file that two paths given name two ways
// ("reports" and "$PWD/reports", "r/1.xml" and "./r/1.xml"): read twice,
// its results would count twice. The first name in order is kept.
func oneNameEach(files []found) []found {
	wd, err := os.Getwd()
	if err != nil {
		return files
	}
	seen := make(map[string]bool, len(files))
	return slices.DeleteFunc(files, func(f found) bool {
		p := f.path
		if !filepath.IsAbs(p) {
			p = filepath.Join(wd, p)
		}
		p = filepath.Clean(p)
		dup := seen[p]
		seen[p] = true
		return dup
	})
}

// linkedTwice leaves out a symbolic link to a file that files also name
// directly, or through another link before it (a "latest.xml" beside the
// run it points at): read twice, its results would count twice. Each is
// reported, with the name it is read under. It looks at the files only
// when some are links, which a walk rarely finds.
func linkedTwice(files []found) ([]found, []history.Skipped) {
	if !slices.ContainsFunc(files, func(f found) bool { return !f.regular }) {
		return files, nil
	}
	seen := map[[2]uint64]string{}
	note := func(f found) {
		if fi, err := os.Stat(f.path); err == nil {
			if id, ok := fileID(fi); ok && seen[id] == "" {
				seen[id] = f.path
			}
		}
	}
	for _, f := range files {
		if f.regular {
			note(f)
		}
	}
	var dups []history.Skipped
	kept := files[:0]
	for _, f := range files {
		if !f.regular {
			if fi, err := os.Stat(f.path); err == nil {
				if id, ok := fileID(fi); ok {
					if other := seen[id]; other != "" && other != f.path {
						dups = append(dups, history.Skipped{Path: f.path, Error: "a symbolic link to a file read as " + other + ": read once, under that name"})
						continue
					}
					seen[id] = f.path
				}
			}
		}
		kept = append(kept, f)
	}
	return kept, dups
}

// found is a file a path named, and whether the walk saw a regular file
// (a link, a FIFO or a device is looked at again before it is read).
type found struct {
	path    string
	regular bool
}

// nothingIn says why p, which expand found empty, named no file.
func nothingIn(p string) string {
	if !strings.ContainsAny(p, "*?[{") {
		fi, err := os.Stat(p)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return "no such file or directory"
		case err != nil:
			var pe *fs.PathError
			if errors.As(err, &pe) {
				return pe.Err.Error()
			}
			return err.Error()
		case fi.IsDir():
			return "no .xml file in this directory or below it (JUnit files are read from *.xml)"
		}
	}
	return "matched no files"
}

func expand(p string) ([]found, error) {
	if !strings.ContainsAny(p, "*?[") {
		fi, err := os.Stat(p)
		// A brace is a glob's {a,b} unless a file or directory has that
		// name.
		if err != nil && strings.Contains(p, "{") {
			return expandGlob(p)
		}
		if err != nil {
			// Missing, a loop of links, a directory above it not
			// searchable: nothing to read, and nothingIn says why.
			return nil, nil
		}
		if !fi.IsDir() {
			return []found{{p, fi.Mode().IsRegular()}}, nil
		}
		return walkXML(p, nil)
	}
	return expandGlob(p)
}

// expandGlob lists what glob p names. A glob whose matches all end in
// ".xml" is listed from the .xml files that listDir finds; any other is
// matched against every path of the tree below its root (walkGlob).
func expandGlob(p string) ([]found, error) {
	g, root, err := splitGlob(p)
	if err != nil {
		return nil, err
	}
	var walk func() ([]found, error)
	if elem, ok := anyDepthXML(g, root); ok {
		// root/**/elem: a path matches when its name does.
		match := nameMatcher(elem)
		walk = func() ([]found, error) {
			return walkFiltered(root, func(rel string) bool { return match(rel[strings.LastIndexAny(rel, sepChars)+1:]) })
		}
	} else if strings.Contains(g, "**") && strings.HasSuffix(g, ".xml") {
		// Walked to the bottom either way.
		rel := strings.TrimPrefix(g, globPrefix(root))
		walk = func() ([]found, error) {
			return walkFiltered(root, func(p string) bool { return globs.Match(rel, filepath.ToSlash(p)) })
		}
	} else if segs, ok := levels(g, root); ok {
		walk = func() ([]found, error) { return walkLevels(root, segs) }
	}
	if walk != nil {
		fi, err := os.Stat(root)
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		if err == nil && fi.IsDir() {
			return walk()
		}
	}
	return walkGlob(g, root)
}

// globPrefix is what a glob whose literal start is root (splitGlob)
// begins with before its part below root: nothing for ".", "/" for the
// file system's root, root and "/" otherwise.
func globPrefix(root string) string {
	switch root = filepath.Clean(root); root {
	case ".":
		return ""
	case string(filepath.Separator):
		return "/"
	}
	return filepath.ToSlash(root) + "/"
}

// belowRoot is how many bytes a path that walkXML lists under root has
// before its part below root, in the same three cases.
func belowRoot(root string) int {
	switch root = filepath.Clean(root); root {
	case ".":
		return 0
	case string(filepath.Separator):
		return 1
	}
	return len(root) + 1
}

// levels splits glob g, without "**", below root into its path elements,
// when each is a pattern of its own (no {a,b} holds a slash) and the last
// ends in ".xml", so that all it names is among the .xml files that
// listDir lists.
func levels(g, root string) ([]string, bool) {
	if strings.Contains(g, "**") || !strings.HasSuffix(g, ".xml") {
		return nil, false
	}
	rel, ok := strings.CutPrefix(g, globPrefix(root))
	if !ok {
		return nil, false
	}
	segs := strings.Split(rel, "/")
	for _, s := range segs {
		if s == "" || strings.Count(s, "{") != strings.Count(s, "}") {
			return nil, false
		}
	}
	return segs, true
}

// walkLevels lists what the path elements segs name below root, a level
// at a time, each level's directories on every core: a directory is
// walked into only when its name matches the element of its level; at
// the last level, a file whose name matches is named, and so are the
// .xml files under a directory whose name matches, as walkGlob takes them.
func walkLevels(root string, segs []string) ([]found, error) {
	dirs := []string{filepath.Clean(root)}
	var out []found
	for i, seg := range segs {
		match := nameMatcher(seg)
		last := i == len(segs)-1
		files := make([][]found, len(dirs))
		next := make([][]string, len(dirs))
		errs := make([]error, len(dirs))
		par.Each(len(dirs), 0, func(_, k int) {
			xmls, ds, err := listDir(dirs[k], nil, nil)
			if err != nil {
				errs[k] = err
				return
			}
			for _, d := range ds {
				if match(filepath.Base(d)) {
					if !last {
						next[k] = append(next[k], d)
						continue
					}
					var more []found
					more, errs[k] = walkXML(d, nil)
					files[k] = append(files[k], more...)
					if errs[k] != nil {
						return
					}
				}
			}
			if last {
				for _, f := range xmls {
					if match(filepath.Base(f.path)) {
						files[k] = append(files[k], f)
					}
				}
			}
		})
		dirs = dirs[:0]
		for k := range files {
			if errs[k] != nil {
				return out, errs[k]
			}
			out = append(out, files[k]...)
			dirs = append(dirs, next[k]...)
		}
	}
	return out, nil
}

// walkFiltered lists the .xml files under root that match, by match of
// their path below root, for a glob that names nothing that does not end
// in ".xml": a file whose path matches, and, as walkGlob takes a
// directory that matches, one under a directory between root and it
// whose path matches. The paths are matched on every core.
func walkFiltered(root string, match func(rel string) bool) ([]found, error) {
	all, err := walkXML(root, nil)
	skip := belowRoot(root)
	keep := make([]bool, len(all))
	par.Parts(len(all), 512, func(lo, hi int) {
		// Whether a directory below root matches, by its path below
		// root; "" is root itself, where the walk began.
		dirs := map[string]bool{"": false}
		var under func(dir string) bool
		under = func(dir string) bool {
			m, ok := dirs[dir]
			if !ok {
				parent := ""
				if i := strings.LastIndexAny(dir, sepChars); i >= 0 {
					parent = dir[:i]
				}
				m = match(dir) || under(parent)
				dirs[dir] = m
			}
			return m
		}
		for k := lo; k < hi; k++ {
			p := all[k].path[skip:]
			dir := ""
			if i := strings.LastIndexAny(p, sepChars); i >= 0 {
				dir = p[:i]
			}
			keep[k] = match(p) || under(dir)
		}
	})
	out := all[:0]
	for k, f := range all {
		if keep[k] {
			out = append(out, f)
		}
	}
	return out, err
}

// walkGlob lists what glob g names under root, its directory without
// wildcards: a file it matches, and the .xml files under a directory it
// matches.
func walkGlob(g, root string) ([]found, error) {
	// Without "**" a glob matches paths of at most as many elements as it
	// has (its slashes count those of every alternative of a {a,b}): a
	// directory that deep is not walked into.
	depth := -1
	if !strings.Contains(g, "**") {
		depth = strings.Count(g, "/")
	}
	var out []found
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) && path == root {
				return filepath.SkipDir
			}
			return err
		}
		p := filepath.ToSlash(path)
		if globs.Match(g, p) {
			if d.IsDir() {
				more, err := walkXML(path, nil)
				out = append(out, more...)
				if err != nil {
					return err
				}
				return filepath.SkipDir
			}
			out = append(out, found{path, d.Type().IsRegular()})
			return nil
		}
		if depth >= 0 && d.IsDir() && path != root && strings.Count(p, "/") >= depth {
			return filepath.SkipDir
		}
		return nil
	})
	return out, err
}

// anyDepthXML reports whether glob g is root/**/elem (or **/elem when
// root is "."), with elem one path element that ends in ".xml": the
// common "**/TEST-*.xml". It returns elem.
func anyDepthXML(g, root string) (string, bool) {
	elem, ok := strings.CutPrefix(g, globPrefix(root)+"**/")
	return elem, ok && strings.HasSuffix(elem, ".xml") && !strings.Contains(elem, "/") && !strings.Contains(elem, "**")
}

// nameMatcher returns a test of a path element against elem. One "*"
// and no other wildcard, as in "TEST-*.xml", is a prefix and a suffix:
// tested without the general matcher, which takes 40 times as long.
func nameMatcher(elem string) func(string) bool {
	if strings.Count(elem, "*") == 1 && !strings.ContainsAny(elem, `?[]{}\`) {
		pre, suf, _ := strings.Cut(elem, "*")
		return func(name string) bool {
			return len(name) >= len(pre)+len(suf) && strings.HasPrefix(name, pre) && strings.HasSuffix(name, suf)
		}
	}
	return func(name string) bool { return globs.Match(elem, name) }
}

// isXMLName reports whether a file's name ends in .xml, in any case.
func isXMLName(name []byte) bool {
	n := len(name)
	return n >= 4 && name[n-4] == '.' && bytes.EqualFold(name[n-3:], []byte("xml"))
}

// join is filepath.Join(dir, name) for a clean dir and a name from it.
func join(dir string, name []byte) string {
	switch dir {
	case ".":
		return string(name)
	case string(filepath.Separator):
		return dir + string(name)
	}
	return dir + string(filepath.Separator) + string(name)
}

// walkXML appends the *.xml files under dir to out. The subdirectories
// of dir (a run's directory each, in a Surefire history) are walked on
// every core.
func walkXML(dir string, out []found) ([]found, error) {
	dir = filepath.Clean(dir)
	start := len(out)
	out, subdirs, err := listDir(dir, out, nil)
	if err != nil {
		return out, err
	}
	// Each subtree's files are sorted where they are found, and the
	// subtrees taken in the order of their paths with a separator after
	// them, which is where their files fall among all paths: LocalIn's
	// sort then finds the list sorted, unless files sit beside
	// subdirectories.
	sortPaths(out[start:])
	slices.SortFunc(subdirs, compareDirs)
	got := make([][]found, len(subdirs))
	errs := make([]error, len(subdirs))
	par.Each(len(subdirs), 0, func(_, k int) {
		stack := []string{subdirs[k]}
		for len(stack) > 0 && errs[k] == nil {
			d := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			got[k], stack, errs[k] = listDir(d, got[k], stack)
		}
		sortPaths(got[k])
	})
	n := len(out)
	for k := range got {
		n += len(got[k])
	}
	out = slices.Grow(out, n-len(out))
	for k := range subdirs {
		out = append(out, got[k]...)
		if errs[k] != nil {
			return out, errs[k]
		}
	}
	return out, nil
}

// compareDirs orders directories as strings.Compare orders them with a
// separator after each, without building those strings: "a-b" before "a",
// as "a-b/" sorts before "a/".
func compareDirs(a, b string) int {
	n := min(len(a), len(b))
	if c := strings.Compare(a[:n], b[:n]); c != 0 || len(a) == len(b) {
		return c
	}
	if len(a) < len(b) {
		return -compareDirs(b, a)
	}
	// b is a proper prefix of a: b's separator meets a[n].
	if a[n] == filepath.Separator {
		return 1 // a goes on after its separator; b's ends there
	}
	return cmp.Compare(a[n], filepath.Separator)
}

func sortPaths(fs []found) {
	slices.SortFunc(fs, func(a, b found) int { return strings.Compare(a.path, b.path) })
}

// splitGlob cleans a glob to slash form and returns it with the directory
// to walk: its longest prefix without wildcards.
func splitGlob(glob string) (string, string, error) {
	g := filepath.ToSlash(filepath.Clean(glob))
	if err := globs.Validate(g); err != nil {
		return "", "", err
	}
	var root []string
	for _, s := range strings.Split(g, "/") {
		if hasMeta(s) {
			break
		}
		root = append(root, s)
	}
	rootDir := strings.Join(root, "/")
	if rootDir == "" {
		rootDir = "."
		if strings.HasPrefix(g, "/") {
			rootDir = "/"
		}
	}
	return g, filepath.FromSlash(rootDir), nil
}

// ReadSmall reads one small file that a checkout holds (CODEOWNERS, the
// ledger), refusing what a pull request could commit to reach other
// files: a symbolic link (GitHub reads such a file as the link's text, and
// the target can be the checkout's credentials in .git/config), a path
// that leads out of root through a linked directory (when root is not
// empty), anything but a regular file (a FIFO would hang the read,
// /dev/zero never ends), and more than max bytes. name is relative to
// root. An absent file gives an error that errors.Is(err, fs.ErrNotExist)
// tells.
func ReadSmall(root, name string, max int64) ([]byte, error) {
	p := name
	if root != "" {
		p = filepath.Join(root, name)
	}
	fi, err := os.Lstat(p)
	if err != nil {
		return nil, err
	}
	if fi.Mode()&fs.ModeSymlink != 0 {
		return nil, fmt.Errorf("%s: a symbolic link: not followed (GitHub reads the link, not the file it names)", name)
	}
	if root != "" {
		realRoot, err := filepath.EvalSymlinks(root)
		if err != nil {
			return nil, fmt.Errorf("workspace %s: %w", root, err)
		}
		if why := outside(p, realRoot, "a path through a symbolic link"); why != "" {
			return nil, fmt.Errorf("%s: %s", name, why)
		}
	}
	f, err := openRegular(p)
	if err != nil {
		return nil, err
	}
	return readCapped(f, name, max, "not read")
}

// readCapped reads at most max bytes of f and closes it; more is an error
// naming the file and the cap, ending with over.
func readCapped(f io.ReadCloser, name string, max int64, over string) ([]byte, error) {
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if int64(len(b)) > max {
		return nil, fmt.Errorf("%s: larger than %d bytes: %s", name, max, over)
	}
	return b, nil
}

// ReadRegular reads a file a user named on the command line, following
// symbolic links, refusing what is neither a regular file nor a pipe (a
// device such as /dev/zero, a directory) before it reads, and reading at
// most max bytes: a file longer than that is an error, not read whole to
// be refused after. A pipe is read as a shell's process substitution
// gives one (--base-ledger <(git show origin/main:.github/flaky-ledger.yml)).
func ReadRegular(name string, max int64) ([]byte, error) {
	var f io.ReadCloser
	var err error
	if fi, serr := os.Stat(name); serr == nil && fi.Mode()&fs.ModeNamedPipe != 0 {
		f, err = os.Open(name)
	} else {
		f, err = openRegular(name)
	}
	if err != nil {
		return nil, err
	}
	return readCapped(f, name, max, fmt.Sprintf("at most %d bytes are accepted", max))
}
