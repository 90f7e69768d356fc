package artifact

import (
	"archive/zip"
	"bytes"
	"fmt"
	"path"
	"sort"
	"strings"
	"time"
)

// Zip writes files (path → content) into a zip in memory, in path order,
// every entry stamped with modTime, so the same input gives the same bytes.
// Paths are slash-separated and relative; "..", absolute paths and the
// characters GitHub refuses in artifact paths are errors naming the path.
func Zip(files map[string][]byte, modTime time.Time) ([]byte, error) {
	if len(files) == 0 {
		return nil, fmt.Errorf("no files to upload")
	}
	names := make([]string, 0, len(files))
	for name := range files {
		if err := validatePath(name); err != nil {
			return nil, err
		}
		names = append(names, name)
	}
	sort.Strings(names)
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, name := range names {
		w, err := zw.CreateHeader(&zip.FileHeader{Name: name, Method: zip.Deflate, Modified: modTime.UTC()})
		if err != nil {
			return nil, fmt.Errorf("file %q: %w", name, err)
		}
		if _, err := w.Write(files[name]); err != nil {
			return nil, fmt.Errorf("file %q: %w", name, err)
		}
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func validatePath(name string) error {
	switch {
	case name == "":
		return fmt.Errorf("file path: must not be empty")
	case strings.HasPrefix(name, "/") || strings.Contains(name, "\\"):
		return fmt.Errorf("file path %q: want a relative path with forward slashes", name)
	case path.Clean(name) != name || name == "." || strings.HasPrefix(name, "../") || name == "..":
		return fmt.Errorf("file path %q: want a clean path inside the artifact", name)
	}
	if i := strings.IndexAny(name, refusedPathChars+"\r\n"); i >= 0 {
		return fmt.Errorf("file path %q: contains %s; paths may not contain %s, CR or LF",
			name, describe(rune(name[i])), strings.Join(strings.Split(refusedPathChars, ""), " "))
	}
	return nil
}
