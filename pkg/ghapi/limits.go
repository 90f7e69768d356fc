package ghapi

// GitHub's limits, each defined here once (see GITHUB.md for where they
// come from). Check run limits are in checks.go beside the code that
// enforces them.
const (
	// MaxCommentChars is the longest comment or issue body GitHub takes.
	MaxCommentChars = 65536 // GitHub: "Body is too long (maximum is 65536 characters)"
	// MaxSummaryBytes: a step summary over 1 MiB is dropped with an error
	// (the runner: "$GITHUB_STEP_SUMMARY ... can be up to 1 MiB").
	MaxSummaryBytes = 1 << 20
	// MaxStepAnnotationsPerKind and MaxJobAnnotations: the runner shows 10
	// warnings, 10 errors and 10 notices per step, and 50 per job.
	MaxStepAnnotationsPerKind = 10
	MaxJobAnnotations         = 50
	// MaxAnnotationMessageChars: workflow-command annotation messages are
	// cut at 4,096 characters.
	MaxAnnotationMessageChars = 4096
)
