//go:build !linux

package collect

import "os"

// listDir appends the *.xml files in dir to files and its subdirectories
// to dirs; dir is clean.
func listDir(dir string, files []found, dirs []string) ([]found, []string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return files, dirs, err
	}
	for _, d := range entries {
		name := d.Name()
		switch {
		case d.IsDir():
			dirs = append(dirs, join(dir, []byte(name)))
		case isXMLName([]byte(name)):
			files = append(files, found{join(dir, []byte(name)), d.Type().IsRegular()})
		}
	}
	return files, dirs, nil
}
