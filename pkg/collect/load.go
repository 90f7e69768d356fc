package collect

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/flakegate/flakegate/pkg/history"
	"github.com/flakegate/flakegate/pkg/model"
)

// ErrNothingRead is returned by Load when no path yielded a readable JUnit
// document. The history it returns with it still lists what was skipped.
var ErrNothingRead = errors.New("no readable JUnit XML")

// ErrPaths is a path or glob Load cannot take (malformed, or climbing out
// of the workspace): the user's input is at fault.
var ErrPaths = errors.New("bad path")

// said is an error that matches a sentinel but reads as its own message.
type said struct {
	msg  string
	kind error
}

func (e said) Error() string        { return e.msg }
func (e said) Is(target error) bool { return target == e.kind }

// Load reads the JUnit documents that paths name into one history: the
// command line's and the action's local results go through here. root is
// the workspace ("" for the command line; see LocalIn). Paths that match
// nothing and files that cannot be read are listed in the history's
// Skipped, in that order. When nothing could be read the error wraps
// ErrNothingRead and says whether files were found at all.
func Load(ctx context.Context, root string, paths []string, workers int) (*history.History, error) {
	return LoadAs(ctx, root, paths, workers, nil)
}

// LoadAs is Load, with the commit and run id of def for documents that
// state none (nil: none).
func LoadAs(ctx context.Context, root string, paths []string, workers int, def *model.Run) (*history.History, error) {
	srcs, missing, err := LocalIn(root, paths)
	if err != nil {
		return nil, said{err.Error(), ErrPaths}
	}
	for i := range srcs {
		srcs[i].Default = def
	}
	h, err := history.Load(ctx, srcs, history.Options{Workers: workers})
	if err != nil {
		return nil, err
	}
	unread := len(h.Skipped)
	h.Skipped = append(missing, h.Skipped...)
	switch {
	case len(srcs) == 0:
		return h, said{"no JUnit XML files found in " + strings.Join(paths, ", "), ErrNothingRead}
	case unread == len(srcs):
		return h, said{fmt.Sprintf("none of the %d files could be read as JUnit XML (reasons above)", len(srcs)), ErrNothingRead}
	}
	return h, nil
}
