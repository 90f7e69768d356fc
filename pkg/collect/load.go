package collect

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/flakegate/flakegate/pkg/history"
)

// ErrNothingRead is returned by Load when no path yielded a readable JUnit
// document. The history it returns with it still lists what was skipped.
var ErrNothingRead = errors.New("no readable JUnit XML")

// Load reads the JUnit documents that paths name into one history: the
// command line's and the action's local results go through here. root is
// the workspace ("" for the command line; see LocalIn). Paths that match
// nothing and files that cannot be read are listed in the history's
// Skipped, in that order. When nothing could be read the error wraps
// ErrNothingRead and says whether files were found at all.
func Load(ctx context.Context, root string, paths []string, workers int) (*history.History, error) {
	srcs, missing, err := LocalIn(root, paths)
	if err != nil {
		return nil, err
	}
	h, err := history.Load(ctx, srcs, history.Options{Workers: workers})
	if err != nil {
		return nil, err
	}
	unread := len(h.Skipped)
	h.Skipped = append(missing, h.Skipped...)
	switch {
	case len(srcs) == 0:
		return h, fmt.Errorf("%w: no files found in %s", ErrNothingRead, strings.Join(paths, ", "))
	case unread == len(srcs):
		return h, fmt.Errorf("%w: none of the %d files could be read as JUnit XML", ErrNothingRead, len(srcs))
	}
	return h, nil
}
