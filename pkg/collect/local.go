// Package collect finds the JUnit documents to read: local files,
// directories and globs, and (elsewhere in this package) artifacts of
// workflow runs. It yields sources; it does not parse XML.
package collect

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
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
			missing = append(missing, history.Skipped{Path: p, Error: "matched no files"})
		}
		files = append(files, got...)
	}
	slices.SortFunc(files, func(a, b found) int { return strings.Compare(a.path, b.path) })
	files = slices.CompactFunc(files, func(a, b found) bool { return a.path == b.path })
	srcs := make([]history.Source, 0, len(files))
	for _, fd := range files {
		f := fd.path
		confine := ""
		if root != "" && within(root, filepath.Clean(f)) {
			confine = realRoot
		}
		// A regular file the walk listed needs no second look, unless it
		// must be confined to the workspace (a parent may be a link).
		if !fd.regular || confine != "" {
			if why := unreadable(f, confine); why != "" {
				missing = append(missing, history.Skipped{Path: f, Error: why})
				continue
			}
		}
		srcs = append(srcs, history.Source{Name: f, Open: func() (io.ReadCloser, error) { return openRegular(f) }})
	}
	return srcs, missing, nil
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
		real, err := filepath.EvalSymlinks(f)
		if err != nil {
			return err.Error()
		}
		if !within(realRoot, real) {
			return "a symbolic link out of the workspace (to " + real + "): not followed"
		}
	}
	return ""
}

func hasMeta(p string) bool { return strings.ContainsAny(p, "*?[") }

// found is a file a path named, and whether the walk saw a regular file
// (a link, a FIFO or a device is looked at again before it is read).
type found struct {
	path    string
	regular bool
}

func expand(p string) ([]found, error) {
	if !hasMeta(p) {
		fi, err := os.Stat(p)
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		if err != nil {
			return nil, err
		}
		if !fi.IsDir() {
			return []found{{p, fi.Mode().IsRegular()}}, nil
		}
		return walkXML(p, nil)
	}
	g, root, err := splitGlob(p)
	if err != nil {
		return nil, err
	}
	var out []found
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) && path == root {
				return filepath.SkipDir
			}
			return err
		}
		if globs.Match(g, filepath.ToSlash(path)) {
			if d.IsDir() {
				more, err := walkXML(path, nil)
				out = append(out, more...)
				if err != nil {
					return err
				}
				return filepath.SkipDir
			}
			out = append(out, found{path, d.Type().IsRegular()})
		}
		return nil
	})
	return out, err
}

// isXML reports whether a file's name ends in .xml, in any case.
func isXML(path string) bool { return strings.EqualFold(filepath.Ext(path), ".xml") }

// walkXML appends the *.xml files under dir to out. The subdirectories
// of dir (a run's directory each, in a Surefire history) are walked on
// every core: listing 7,200 files one directory at a time took 16–19 ms.
func walkXML(dir string, out []found) ([]found, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return out, err
	}
	var subdirs []string
	for _, d := range entries {
		path := filepath.Join(dir, d.Name())
		if d.IsDir() {
			subdirs = append(subdirs, path)
		} else if isXML(path) {
			out = append(out, found{path, d.Type().IsRegular()})
		}
	}
	got := make([][]found, len(subdirs))
	errs := make([]error, len(subdirs))
	par.Each(len(subdirs), 0, func(_, k int) {
		errs[k] = filepath.WalkDir(subdirs[k], func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if !d.IsDir() && isXML(path) {
				got[k] = append(got[k], found{path, d.Type().IsRegular()})
			}
			return nil
		})
	})
	for k := range subdirs {
		out = append(out, got[k]...)
		if errs[k] != nil {
			return out, errs[k]
		}
	}
	return out, nil
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
