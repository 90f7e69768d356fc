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
	"regexp"
	"slices"
	"strings"

	"github.com/flakegate/flakegate/pkg/history"
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
	var files []string
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
	slices.Sort(files)
	files = slices.Compact(files)
	srcs := make([]history.Source, 0, len(files))
	for _, f := range files {
		confine := ""
		if root != "" && within(root, filepath.Clean(f)) {
			confine = realRoot
		}
		if why := unreadable(f, confine); why != "" {
			missing = append(missing, history.Skipped{Path: f, Error: why})
			continue
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

// openRegular opens f and checks, on the open file, that it is still a
// regular file.
func openRegular(f string) (io.ReadCloser, error) {
	fh, err := os.Open(f)
	if err != nil {
		return nil, err
	}
	if fi, err := fh.Stat(); err != nil || !fi.Mode().IsRegular() {
		fh.Close()
		return nil, fmt.Errorf("%s: not a regular file", f)
	}
	return fh, nil
}

func hasMeta(p string) bool { return strings.ContainsAny(p, "*?[") }

func expand(p string) ([]string, error) {
	if !hasMeta(p) {
		fi, err := os.Stat(p)
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		if err != nil {
			return nil, err
		}
		if !fi.IsDir() {
			return []string{p}, nil
		}
		return walkXML(p, nil)
	}
	re, root, err := compileGlob(p)
	if err != nil {
		return nil, err
	}
	var out []string
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) && path == root {
				return filepath.SkipDir
			}
			return err
		}
		if re.MatchString(filepath.ToSlash(path)) {
			if d.IsDir() {
				more, err := walkXML(path, nil)
				out = append(out, more...)
				if err != nil {
					return err
				}
				return filepath.SkipDir
			}
			out = append(out, path)
		}
		return nil
	})
	return out, err
}

func walkXML(dir string, out []string) ([]string, error) {
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.EqualFold(filepath.Ext(path), ".xml") {
			out = append(out, path)
		}
		return nil
	})
	return out, err
}

// compileGlob turns a glob into a regular expression over slash-separated
// paths, and returns the directory to walk: the glob's longest prefix
// without wildcards. "*" and "?" do not cross "/", "**" does, and
// character classes follow path.Match.
func compileGlob(glob string) (*regexp.Regexp, string, error) {
	g := filepath.ToSlash(filepath.Clean(glob))
	if _, err := filepath.Match(strings.ReplaceAll(g, "**", "*"), ""); err != nil {
		return nil, "", fmt.Errorf("malformed glob %q: %w (accepted: *, ?, **, [class])", glob, err)
	}
	segs := strings.Split(g, "/")
	root := []string{}
	for _, s := range segs {
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
	var b strings.Builder
	b.WriteString("^")
	if !strings.HasPrefix(g, "/") && !strings.HasPrefix(g, "./") && rootDir == "." {
		b.WriteString(`(\./)?`)
	}
	for i := 0; i < len(g); i++ {
		c := g[i]
		switch {
		case c == '*' && i+1 < len(g) && g[i+1] == '*':
			i++
			if i+1 < len(g) && g[i+1] == '/' {
				i++
				b.WriteString(`(.*/)?`)
			} else {
				b.WriteString(`.*`)
			}
		case c == '*':
			b.WriteString(`[^/]*`)
		case c == '?':
			b.WriteString(`[^/]`)
		case c == '[':
			j := strings.IndexByte(g[i:], ']')
			class := g[i+1 : i+j]
			if strings.HasPrefix(class, "^") || strings.HasPrefix(class, "!") {
				class = "^" + class[1:]
			}
			b.WriteString("[" + strings.ReplaceAll(class, `\`, `\\`) + "]")
			i += j
		case c == '\\' && i+1 < len(g):
			i++
			b.WriteString(regexp.QuoteMeta(string(g[i])))
		default:
			b.WriteString(regexp.QuoteMeta(string(c)))
		}
	}
	b.WriteString("$")
	re, err := regexp.Compile(b.String())
	if err != nil {
		return nil, "", fmt.Errorf("malformed glob %q: %w", glob, err)
	}
	return re, filepath.FromSlash(rootDir), nil
}
