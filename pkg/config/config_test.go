package config

import (
	"encoding/json"
	"errors"
	"fmt"
	"github.com/flakegate/flakegate/pkg/collect"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/flakegate/flakegate/pkg/gate"
	"github.com/flakegate/flakegate/pkg/publish"
)

const schedulePayload = `{"schedule": "17 4 * * 1", "repository": {"full_name": "octo/widgets"}}`

// pullRequestPayload is a trimmed pull_request payload; headRepo is a JSON
// value: an object or null.
func pullRequestPayload(headRepo, body string) string {
	return `{
  "action": "synchronize",
  "number": 42,
  "pull_request": {
    "number": 42,
    "state": "open",
    "draft": false,
    "title": "Cache the widget index",
    "body": ` + body + `,
    "labels": [{"id": 1, "name": "bug"}, {"id": 2, "name": "Test-Changes-Declared"}],
    "head": {"label": "x:fix-cache", "ref": "fix-cache", "sha": "` + headSHA + `", "repo": ` + headRepo + `},
    "base": {"label": "octo:main", "ref": "main", "sha": "` + baseSHA + `",
             "repo": {"id": 1, "name": "widgets", "full_name": "octo/widgets", "fork": false}}
  },
  "repository": {"full_name": "octo/widgets", "default_branch": "trunk"},
  "sender": {"login": "someone"}
}`
}

// workflowRunPayload is a trimmed workflow_run payload.
func workflowRunPayload(event, headRepo, pullRequests string) string {
	return `{
  "action": "completed",
  "workflow_run": {
    "id": 7000000123,
    "name": "CI",
    "workflow_id": 555,
    "run_attempt": 3,
    "event": "` + event + `",
    "status": "completed",
    "conclusion": "failure",
    "head_sha": "` + headSHA + `",
    "head_branch": "fix-cache",
    "head_repository": ` + headRepo + `,
    "repository": {"id": 1, "full_name": "octo/widgets"},
    "pull_requests": ` + pullRequests + `
  },
  "repository": {"full_name": "octo/widgets", "default_branch": "trunk"}
}`
}

// samePRs lists two PRs on the run's branch; only #42 has the run's head.
var samePRs = `[
  {"id": 8, "number": 41, "url": "https://api.github.com/repos/octo/widgets/pulls/41",
   "head": {"ref": "fix-cache", "sha": "3333333333333333333333333333333333333333", "repo": {"id": 1, "name": "widgets"}},
   "base": {"ref": "release", "sha": "4444444444444444444444444444444444444444", "repo": {"id": 1, "name": "widgets"}}},
  {"id": 9, "number": 42, "url": "https://api.github.com/repos/octo/widgets/pulls/42",
   "head": {"ref": "fix-cache", "sha": "` + headSHA + `", "repo": {"id": 1, "name": "widgets"}},
   "base": {"ref": "main", "sha": "` + baseSHA + `", "repo": {"id": 1, "name": "widgets"}}}
]`

func TestLoad(t *testing.T) {
	tests := []struct {
		name   string
		runner runner
		want   func(c *Config) // edits wantDefaults()
	}{
		{
			name:   "schedule with action.yml defaults reports",
			runner: runner{event: EventSchedule, payload: schedulePayload},
			want:   func(c *Config) {},
		},
		{
			name:   "every input empty means its default",
			runner: runner{event: EventSchedule, payload: schedulePayload, emptyInputs: true},
			want:   func(c *Config) {},
		},
		{
			name: "values are parsed, trimmed and split on newlines and commas",
			runner: runner{event: EventSchedule, payload: schedulePayload, inputs: map[string]string{
				"mode":                   "report",
				"workflows":              "ci.yml\n.github/workflows/nightly.yaml, 1234\n\n",
				"branch":                 "refs/heads/release/1.x",
				"lookback-days":          " 30 ",
				"max-runs":               "1000",
				"artifact-pattern":       "junit-*",
				"results":                "results/**/*.xml,\n  other/*.xml",
				"threshold":              "0",
				"min-commits":            "1",
				"infra-threshold":        "1",
				"p1":                     "0.95",
				"alpha":                  "0.01",
				"beta":                   "0.2",
				"alpha-pr":               "0.1",
				"on-inconclusive":        "fail",
				"ledger-path":            "./ci/../ci/ledger.yml",
				"protected-paths":        "spec/**",
				"protected-new-files":    "allow",
				"comment":                "False",
				"check-run":              "TRUE",
				"upload-artifact":        "FALSE",
				"tracking-issue":         "True",
				"fail-on-expired-ledger": "false",
				"artifact-name":          "flaky report",
				"report-dir":             "/github/runner_temp/out",
				"gemini-api-key":         testGeminiKey,
				"gemini-model":           "models/gemini-2.5-pro",
				"approval-label":         "ledger ok",
				"declaration-label":      "tests changed",
			}},
			want: func(c *Config) {
				c.RequestedMode = ModeReport
				c.Workflows = []string{"ci.yml", "nightly.yaml", "1234"}
				c.Branch = "release/1.x"
				c.LookbackDays = 30
				c.MaxRuns = 1000
				c.ArtifactPatterns = []string{"junit-*"}
				c.Results = []string{"results/**/*.xml", "other/*.xml"}
				c.Threshold = 0
				c.MinCommits = 1
				c.InfraThreshold = 1
				c.P1, c.Alpha, c.Beta = 0.95, 0.01, 0.2
				c.AlphaPR = 0.1
				c.OnInconclusive = gate.PolicyFail
				c.LedgerPath = "ci/ledger.yml"
				c.ProtectedPaths = []string{"spec/**"}
				c.AllowNewProtected = true
				c.Comment, c.CheckRun, c.UploadArtifact, c.TrackingIssue, c.FailOnExpiredLedger = publish.CommentOff, true, false, true, false
				c.ArtifactName = "flaky report"
				c.ReportDir = "/github/runner_temp/out"
				c.GeminiAPIKey = NewSecret(testGeminiKey)
				c.GeminiModel = "gemini-2.5-pro"
				c.ApprovalLabel = "ledger ok"
				c.DeclarationLabel = "tests changed"
			},
		},
		{
			name: "same-repo pull_request gates the head commit, not the merge commit",
			runner: runner{event: EventPullRequest, payload: pullRequestPayload(
				`{"id": 1, "full_name": "octo/widgets", "fork": false}`, `"Fixes the cache."`),
				env: map[string]string{"GITHUB_HEAD_REF": "fix-cache", "GITHUB_BASE_REF": "main", "GITHUB_REF": "refs/pull/42/merge", "GITHUB_REF_NAME": "42/merge"}},
			want: func(c *Config) {
				c.Mode = ModeGate
				c.GitHub.EventName = EventPullRequest
				c.GitHub.HeadRef, c.GitHub.BaseRef = "fix-cache", "main"
				c.GitHub.Ref, c.GitHub.RefName = "refs/pull/42/merge", "42/merge"
				pr := &PullRequest{
					Number: 42, HeadSHA: headSHA, HeadRef: "fix-cache", HeadRepo: "octo/widgets",
					BaseSHA: baseSHA, BaseRef: "main", BaseRepo: "octo/widgets",
					Body: "Fixes the cache.", Labels: []string{"bug", "Test-Changes-Declared"},
				}
				c.Event = Event{Name: EventPullRequest, Action: "synchronize", PullRequest: pr, DefaultBranch: "trunk"}
				c.DefaultBranch = "trunk"
				c.PullRequest = pr
				c.HeadSHA = headSHA
			},
		},
		{
			name: "fork pull_request whose head repository was deleted (head.repo null, body null)",
			runner: runner{event: EventPullRequest, payload: pullRequestPayload(`null`, `null`),
				inputs: map[string]string{"github-token": "ghs_readonly"}},
			want: func(c *Config) {
				c.Mode = ModeGate
				c.GitHubToken = NewSecret("ghs_readonly")
				c.GitHub.EventName = EventPullRequest
				pr := &PullRequest{
					Number: 42, HeadSHA: headSHA, HeadRef: "fix-cache",
					BaseSHA: baseSHA, BaseRef: "main", BaseRepo: "octo/widgets",
					Labels: []string{"bug", "Test-Changes-Declared"}, Fork: true,
				}
				c.Event = Event{Name: EventPullRequest, Action: "synchronize", PullRequest: pr, DefaultBranch: "trunk"}
				c.DefaultBranch = "trunk"
				c.PullRequest = pr
				c.HeadSHA = headSHA
			},
		},
		{
			name: "fork pull_request_target from another owner",
			runner: runner{event: EventPullRequestTarget, payload: pullRequestPayload(
				`{"id": 7, "full_name": "stranger/widgets", "fork": true}`, `""`)},
			want: func(c *Config) {
				c.Mode = ModeGate
				c.GitHub.EventName = EventPullRequestTarget
				pr := &PullRequest{
					Number: 42, HeadSHA: headSHA, HeadRef: "fix-cache", HeadRepo: "stranger/widgets",
					BaseSHA: baseSHA, BaseRef: "main", BaseRepo: "octo/widgets",
					Labels: []string{"bug", "Test-Changes-Declared"}, Fork: true,
				}
				c.Event = Event{Name: EventPullRequestTarget, Action: "synchronize", PullRequest: pr, DefaultBranch: "trunk"}
				c.DefaultBranch = "trunk"
				c.PullRequest = pr
				c.HeadSHA = headSHA
			},
		},
		{
			name: "workflow_run from a same-repo PR picks the PR whose head is the run's commit",
			runner: runner{event: EventWorkflowRun, payload: workflowRunPayload(
				EventPullRequest, `{"id": 1, "full_name": "octo/widgets"}`, samePRs)},
			want: func(c *Config) {
				c.Mode = ModeGate
				c.GitHub.EventName = EventWorkflowRun
				c.DefaultBranch = "trunk"
				c.Event = Event{Name: EventWorkflowRun, Action: "completed", DefaultBranch: "trunk", WorkflowRun: &WorkflowRun{
					ID: 7000000123, Name: "CI", WorkflowID: 555, RunAttempt: 3, Event: EventPullRequest,
					Conclusion: "failure", HeadSHA: headSHA, HeadBranch: "fix-cache",
					HeadRepo: "octo/widgets", Repo: "octo/widgets",
					PullRequests: []RunPullRequest{
						{Number: 41, HeadSHA: "3333333333333333333333333333333333333333", HeadRef: "fix-cache", BaseSHA: "4444444444444444444444444444444444444444", BaseRef: "release"},
						{Number: 42, HeadSHA: headSHA, HeadRef: "fix-cache", BaseSHA: baseSHA, BaseRef: "main"},
					},
				}}
				c.PullRequest = &PullRequest{
					Number: 42, HeadSHA: headSHA, HeadRef: "fix-cache", HeadRepo: "octo/widgets",
					BaseSHA: baseSHA, BaseRef: "main", BaseRepo: "octo/widgets",
				}
				c.HeadSHA = headSHA
			},
		},
		{
			name: "workflow_run from a fork PR: empty pull_requests, PR to be found by head SHA",
			runner: runner{event: EventWorkflowRun, payload: workflowRunPayload(
				EventPullRequest, `{"id": 7, "full_name": "stranger/widgets"}`, `[]`)},
			want: func(c *Config) {
				c.Mode = ModeGate
				c.GitHub.EventName = EventWorkflowRun
				c.DefaultBranch = "trunk"
				c.Event = Event{Name: EventWorkflowRun, Action: "completed", DefaultBranch: "trunk", WorkflowRun: &WorkflowRun{
					ID: 7000000123, Name: "CI", WorkflowID: 555, RunAttempt: 3, Event: EventPullRequest,
					Conclusion: "failure", HeadSHA: headSHA, HeadBranch: "fix-cache",
					HeadRepo: "stranger/widgets", Repo: "octo/widgets", Fork: true,
				}}
				c.PullRequest = &PullRequest{
					HeadSHA: headSHA, HeadRef: "fix-cache", HeadRepo: "stranger/widgets",
					BaseRepo: "octo/widgets", Fork: true,
				}
				c.HeadSHA = headSHA
			},
		},
		{
			name: "workflow_run from a push reports on the triggering run's commit",
			runner: runner{event: EventWorkflowRun, payload: workflowRunPayload(
				EventPush, `{"id": 1, "full_name": "octo/widgets"}`, `[]`)},
			want: func(c *Config) {
				c.GitHub.EventName = EventWorkflowRun
				c.DefaultBranch = "trunk"
				c.Event = Event{Name: EventWorkflowRun, Action: "completed", DefaultBranch: "trunk", WorkflowRun: &WorkflowRun{
					ID: 7000000123, Name: "CI", WorkflowID: 555, RunAttempt: 3, Event: EventPush,
					Conclusion: "failure", HeadSHA: headSHA, HeadBranch: "fix-cache",
					HeadRepo: "octo/widgets", Repo: "octo/widgets",
				}}
				c.HeadSHA = headSHA
			},
		},
		{
			name: "push reports",
			runner: runner{event: EventPush, payload: `{"ref": "refs/heads/main", "before": "` + baseSHA +
				`", "after": "` + mergeSHA + `", "commits": []}`},
			want: func(c *Config) {
				c.GitHub.EventName = EventPush
				c.Event = Event{Name: EventPush, Push: &Push{Ref: "refs/heads/main", Before: baseSHA, After: mergeSHA}}
				c.DefaultBranch = "" // not in this payload; only a schedule's ref is the default branch
			},
		},
		{
			name: "explicit gate on workflow_dispatch with local base and head results needs no token",
			runner: runner{event: EventWorkflowDispatch, payload: `{"inputs": {"k": "5"}, "ref": "refs/heads/main"}`,
				inputs: map[string]string{"github-token": "", "mode": "gate",
					"base-results": "base/*.xml", "head-results": "head/*.xml", "history": "hist/**/*.xml"}},
			want: func(c *Config) {
				c.RequestedMode, c.Mode = ModeGate, ModeGate
				c.GitHubToken = Secret{}
				c.BaseResults, c.HeadResults, c.History = []string{"base/*.xml"}, []string{"head/*.xml"}, []string{"hist/**/*.xml"}
				c.GitHub.EventName = EventWorkflowDispatch
				c.Event = Event{Name: EventWorkflowDispatch}
				c.DefaultBranch = ""
				c.Warnings = []string{"github-token is empty: the history carried in the last report is not read; leave github-token at its default (${{ github.token }}) or pass a token"}
			},
		},
		{
			name: "report on local results needs neither token nor repository nor event file",
			runner: runner{event: EventWorkflowDispatch,
				inputs: map[string]string{"github-token": "", "results": "junit/*.xml"},
				env:    map[string]string{"GITHUB_REPOSITORY": ""}},
			want: func(c *Config) {
				c.GitHubToken = Secret{}
				c.Results = []string{"junit/*.xml"}
				c.GitHub.EventName = EventWorkflowDispatch
				c.GitHub.Repository, c.GitHub.Owner, c.GitHub.Repo = "", "", ""
				c.Event = Event{Name: EventWorkflowDispatch}
				c.DefaultBranch = ""
				c.Warnings = []string{"github-token is empty: the last report is not read, so this report has no trend, and its artifact carries only the runs of results: " +
					"the history the last report carried is not carried on, and the next report does without it; leave github-token at its default (${{ github.token }}) or pass a token"}
			},
		},
		{
			name: "inputs of the other mode are noticed, not silently ignored",
			runner: runner{event: EventSchedule, payload: schedulePayload,
				inputs: map[string]string{"base-results": "base/*.xml", "history": "h/*.xml"}},
			want: func(c *Config) {
				c.BaseResults, c.History = []string{"base/*.xml"}, []string{"h/*.xml"}
				c.Notices = []string{"base-results, head-results and history are used in gate mode only; the mode is report"}
			},
		},
		{
			name: "report-mode inputs on a pull request gate are noticed",
			runner: runner{event: EventPullRequest, payload: pullRequestPayload(`null`, `""`),
				inputs: map[string]string{"results": "junit/*.xml", "tracking-issue": "true"}},
			want: func(c *Config) {
				c.Mode = ModeGate
				c.Results = []string{"junit/*.xml"}
				c.TrackingIssue = true
				c.GitHub.EventName = EventPullRequest
				pr := &PullRequest{
					Number: 42, HeadSHA: headSHA, HeadRef: "fix-cache",
					BaseSHA: baseSHA, BaseRef: "main", BaseRepo: "octo/widgets",
					Labels: []string{"bug", "Test-Changes-Declared"}, Fork: true,
				}
				c.Event = Event{Name: EventPullRequest, Action: "synchronize", PullRequest: pr, DefaultBranch: "trunk"}
				c.DefaultBranch = "trunk"
				c.PullRequest = pr
				c.HeadSHA = headSHA
				c.Notices = []string{
					"results is used in report mode only; the mode is gate, which reads base-results and head-results",
					"tracking-issue is used in report mode only; the mode is gate",
				}
			},
		},
		{
			name: "runner defaults for unset URLs",
			runner: runner{event: EventSchedule, payload: schedulePayload, env: map[string]string{
				"GITHUB_API_URL": "", "GITHUB_SERVER_URL": "", "GITHUB_GRAPHQL_URL": "", "ACTIONS_RESULTS_URL": ""}},
			want: func(c *Config) { c.GitHub.ResultsURL = "" },
		},
		{
			name: "GitHub Enterprise Server URLs",
			runner: runner{event: EventSchedule, payload: schedulePayload, env: map[string]string{
				"GITHUB_API_URL": "https://ghe.example.com/api/v3", "GITHUB_SERVER_URL": "https://ghe.example.com",
				"GITHUB_GRAPHQL_URL": "https://ghe.example.com/api/graphql"}},
			want: func(c *Config) {
				c.GitHub.APIURL = "https://ghe.example.com/api/v3"
				c.GitHub.ServerURL = "https://ghe.example.com"
				c.GitHub.GraphQLURL = "https://ghe.example.com/api/graphql"
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Load(tc.runner.getenv(t))
			if err != nil {
				t.Fatalf("Load: %v", err)
			}
			want := wantDefaults()
			tc.want(want)
			if tc.runner.payload != "" {
				if got.GitHub.EventPath == "" {
					t.Error("GitHub.EventPath is empty")
				}
				want.GitHub.EventPath = got.GitHub.EventPath
			}
			if diff := cmp.Diff(want, got, cmpSecrets); diff != "" {
				t.Errorf("Load mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestLoadErrors(t *testing.T) {
	sched := func(inputs map[string]string) runner {
		return runner{event: EventSchedule, payload: schedulePayload, inputs: inputs}
	}
	tests := []struct {
		name   string
		runner runner
		want   []string // every error message, in order
	}{
		{"unknown mode", sched(map[string]string{"mode": "fast"}),
			[]string{`input mode: got "fast"; want one of auto, report, gate`}},
		{"mode is case-sensitive", sched(map[string]string{"mode": "Gate"}),
			[]string{`input mode: got "Gate"; want one of auto, report, gate`}},
		{"threshold above 1", sched(map[string]string{"threshold": "1.5"}),
			[]string{`input threshold: got "1.5"; threshold must be between 0 and 1`}},
		{"threshold negative", sched(map[string]string{"threshold": "-0.1"}),
			[]string{`input threshold: got "-0.1"; threshold must be between 0 and 1`}},
		{"threshold not a number", sched(map[string]string{"threshold": "ten percent"}),
			[]string{`input threshold: got "ten percent"; threshold must be between 0 and 1`}},
		{"threshold NaN", sched(map[string]string{"threshold": "NaN"}),
			[]string{`input threshold: got "NaN"; threshold must be between 0 and 1`}},
		{"infra-threshold zero", sched(map[string]string{"infra-threshold": "0"}),
			[]string{`input infra-threshold: got "0"; infra threshold must be greater than 0 and at most 1`}},
		{"alpha and beta at the bounds", sched(map[string]string{"alpha": "0", "beta": "1"}),
			[]string{
				`input alpha: got "0"; want a number strictly between 0 and 1`,
				`input beta: got "1"; want a number strictly between 0 and 1`,
			}},
		{"alpha + beta reaching 1", sched(map[string]string{"alpha": "0.6", "beta": "0.4"}),
			[]string{`input beta: got "0.4"; alpha + beta must be below 1 (alpha is 0.6), or the SPRT bounds cross`}},
		{"p1 not above 0.5", sched(map[string]string{"p1": "0.5"}),
			[]string{`input p1: got "0.5"; want a number above 0.5 and below 1 (the failure rate of a regression, above every baseline rate the gate judges)`}},
		{"p1 of 1", sched(map[string]string{"p1": "1"}),
			[]string{`input p1: got "1"; want a number above 0.5 and below 1 (the failure rate of a regression, above every baseline rate the gate judges)`}},
		{"counts", sched(map[string]string{"lookback-days": "0", "max-runs": "-5", "min-commits": "0"}),
			[]string{
				`input lookback-days: got "0"; want an integer from 1 to 400`,
				`input max-runs: got "-5"; want an integer from 1 to 1000`,
				`input min-commits: got "0"; want an integer of at least 1`,
			}},
		{"counts too large or fractional", sched(map[string]string{"lookback-days": "401", "max-runs": "1001", "min-commits": "2.5"}),
			[]string{
				`input lookback-days: got "401"; want an integer from 1 to 400`,
				`input max-runs: got "1001"; want an integer from 1 to 1000`,
				`input min-commits: got "2.5"; want an integer of at least 1`,
			}},
		{"malformed globs", sched(map[string]string{
			"artifact-pattern": "junit-[", "results": "ok/*.xml\nbad\\", "base-results": "[]a]",
			"head-results": "x/[^a", "history": "h/[a-", "protected-paths": "tests/**,src/[z-a"}),
			[]string{
				`input artifact-pattern: got "junit-["; malformed glob: want * ? [a-z] {a,b} and ** for any directories, one pattern per line or comma`,
				`input results: got "bad\\"; malformed glob: want * ? [a-z] {a,b} and ** for any directories, one pattern per line or comma`,
				`input base-results: got "[]a]"; malformed glob: want * ? [a-z] {a,b} and ** for any directories, one pattern per line or comma`,
				`input head-results: got "x/[^a"; malformed glob: want * ? [a-z] {a,b} and ** for any directories, one pattern per line or comma`,
				`input history: got "h/[a-"; malformed glob: want * ? [a-z] {a,b} and ** for any directories, one pattern per line or comma`,
				`input protected-paths: got "src/[z-a"; malformed glob: want * ? [a-z] {a,b} and ** for any directories, one pattern per line or comma`,
			}},
		{"alpha-pr out of range", sched(map[string]string{"alpha-pr": "1"}),
			[]string{`input alpha-pr: got "1"; want a number strictly between 0 and 1`}},
		{"alpha-pr zero", sched(map[string]string{"alpha-pr": "0"}),
			[]string{`input alpha-pr: got "0"; want a number strictly between 0 and 1`}},
		{"alpha-pr not a number", sched(map[string]string{"alpha-pr": "5%"}),
			[]string{`input alpha-pr: got "5%"; want a number strictly between 0 and 1`}},
		{"alpha-pr in hexadecimal", sched(map[string]string{"alpha-pr": "0x1p-3"}),
			[]string{`input alpha-pr: got "0x1p-3"; want a number strictly between 0 and 1`}},
		{"on-inconclusive", sched(map[string]string{"on-inconclusive": "skip"}),
			[]string{`input on-inconclusive: got "skip"; want one of neutral, fail, pass`}},
		{"protected-new-files", sched(map[string]string{"protected-new-files": "yes"}),
			[]string{`input protected-new-files: got "yes"; want one of declare, allow`}},
		{"instance identity", sched(map[string]string{"comment-tag": "x --> <b>", "check-name": "two\nlines", "max-annotations": "5000"}),
			[]string{
				`input comment-tag: got "x --> <b>"; "x --> <b>": want 1 to 100 letters, digits, spaces and . _ / ( ) [ ] : + , -, starting with a letter or digit, without "--"`,
				`input check-name: got "two\nlines"; want a name of 1 to 100 characters on one line`,
				`input max-annotations: got "5000"; want an integer from 0 to 1000`,
			}},
		{"a check name that cannot be a tag", sched(map[string]string{"check-name": "gate <e2e>"}),
			[]string{`input comment-tag: the check name "gate <e2e>" cannot be a comment tag: "gate <e2e>": want 1 to 100 letters, digits, spaces and . _ / ( ) [ ] : + , -, starting with a letter or digit, without "--"; set comment-tag`}},
		{"booleans outside the YAML 1.2 core schema", sched(map[string]string{
			"comment": "yes", "check-run": "1", "upload-artifact": "tRue", "tracking-issue": "on", "fail-on-expired-ledger": "no"}),
			[]string{
				`input comment: got "yes"; want one of always, changes, failures, off (true and false mean always and off)`,
				`input check-run: got "1"; want a YAML 1.2 core-schema boolean: true | True | TRUE | false | False | FALSE`,
				`input upload-artifact: got "tRue"; want a YAML 1.2 core-schema boolean: true | True | TRUE | false | False | FALSE`,
				`input tracking-issue: got "on"; want a YAML 1.2 core-schema boolean: true | True | TRUE | false | False | FALSE`,
				`input fail-on-expired-ledger: got "no"; want a YAML 1.2 core-schema boolean: true | True | TRUE | false | False | FALSE`,
			}},
		{"paths leaving the repository or workspace", sched(map[string]string{
			"ledger-path": "/etc/flaky-ledger.yml", "report-dir": "../out"}),
			[]string{
				`input ledger-path: got "/etc/flaky-ledger.yml"; want a file path relative to the repository root, such as .github/flaky-ledger.yml, not leaving it`,
				`input report-dir: got "../out"; want a directory relative to the workspace (not above it) or an absolute path`,
			}},
		{"ledger-path climbing out after cleaning", sched(map[string]string{"ledger-path": "ci/../../ledger.yml"}),
			[]string{`input ledger-path: got "ci/../../ledger.yml"; want a file path relative to the repository root, such as .github/flaky-ledger.yml, not leaving it`}},
		{"artifact-name with forbidden characters", sched(map[string]string{"artifact-name": "reports/flaky:v1"}),
			[]string{`input artifact-name: got "reports/flaky:v1"; want an artifact name without any of " : < > | * ? \ / or line breaks`}},
		{"workflows given by display name or a foreign path", sched(map[string]string{"workflows": "CI, docs/ci.yml, ci.yml"}),
			[]string{
				`input workflows: got "CI"; want workflow file names such as ci.yml (or .github/workflows/ci.yml) or numeric workflow ids, separated by newlines or commas`,
				`input workflows: got "docs/ci.yml"; want workflow file names such as ci.yml (or .github/workflows/ci.yml) or numeric workflow ids, separated by newlines or commas`,
			}},
		{"branch that git refuses", sched(map[string]string{"branch": "feature..x"}),
			[]string{`input branch: got "feature..x"; want a branch name such as main (a valid git branch name), or empty for the default branch`}},
		{"branch with a space", sched(map[string]string{"branch": "my branch"}),
			[]string{`input branch: got "my branch"; want a branch name such as main (a valid git branch name), or empty for the default branch`}},
		{"branch as a clone names it", sched(map[string]string{"branch": "origin/main"}),
			[]string{`input branch: got "origin/main"; a name in a clone, not a branch on GitHub: want the branch's own name, such as main, or empty for the default branch`}},
		{"a tag for a branch", sched(map[string]string{"branch": "refs/tags/v1"}),
			[]string{`input branch: got "refs/tags/v1"; a name in a clone, not a branch on GitHub: want the branch's own name, such as main, or empty for the default branch`}},
		{"gemini-model that would change the request path", sched(map[string]string{"gemini-model": "../tunedModels/x"}),
			[]string{`input gemini-model: got "../tunedModels/x"; want a Gemini model id such as gemini-3.8-flash (letters, digits, '.', '-', '_')`}},
		{"label too long", sched(map[string]string{"approval-label": strings.Repeat("x", 51)}),
			[]string{`input approval-label: got "` + strings.Repeat("x", 51) + `"; want a label name of at most 50 characters on one line`}},
		{"report without results and without a token", sched(map[string]string{"github-token": ""}),
			[]string{`input github-token: a token is required because mode report with no results input downloads workflow-run artifacts; leave github-token at its default (${{ github.token }}) or pass a token`}},
		{"every reason for the API is named", sched(map[string]string{"github-token": "", "tracking-issue": "true", "check-run": "true"}),
			[]string{`input github-token: a token is required because mode report with no results input downloads workflow-run artifacts, and tracking-issue is true, and check-run is true; leave github-token at its default (${{ github.token }}) or pass a token`}},
		{"gate on a pull request without a token",
			runner{event: EventPullRequest, payload: pullRequestPayload(`null`, `""`), inputs: map[string]string{"github-token": ""}},
			[]string{`input github-token: a token is required because mode gate reads the pull request's files and base-branch history; leave github-token at its default (${{ github.token }}) or pass a token`}},
		{"gate on a schedule without local results", sched(map[string]string{"mode": "gate", "base-results": "base/*.xml"}),
			[]string{`input mode: got "gate"; gate needs a pull request event (pull_request, pull_request_target, or a workflow_run of a pull_request run) or both base-results and head-results (a merge_group event needs both: the queue's commit has no run of its own to read); the event is schedule`}},
		{"API needed but no repository",
			runner{event: EventSchedule, payload: schedulePayload, env: map[string]string{"GITHUB_REPOSITORY": ""}},
			[]string{`GITHUB_REPOSITORY: want "owner/name"; the GitHub API is needed because mode report with no results input downloads workflow-run artifacts`}},
		{"malformed runner variables",
			runner{event: EventSchedule, payload: schedulePayload, env: map[string]string{
				"GITHUB_RUN_ID": "12x", "GITHUB_RUN_ATTEMPT": "-1", "GITHUB_REPOSITORY": "widgets",
				"GITHUB_API_URL": "api.github.com", "ACTIONS_RESULTS_URL": "ftp://results"}},
			[]string{
				`GITHUB_RUN_ID: got "12x"; want a non-negative integer`,
				`GITHUB_RUN_ATTEMPT: got "-1"; want a non-negative integer`,
				`GITHUB_REPOSITORY: got "widgets"; want "owner/name"`,
				`GITHUB_API_URL: got "api.github.com"; want an absolute http or https URL`,
				`ACTIONS_RESULTS_URL: got "ftp://results"; want an absolute http or https URL`,
			}},
		{"pull_request without its event file",
			runner{event: EventPullRequest},
			[]string{`GITHUB_EVENT_PATH: is not set; the pull_request event needs its event file`}},
		{"pull_request event file missing on disk",
			runner{event: EventPullRequest, env: map[string]string{"GITHUB_EVENT_PATH": "/nonexistent/event.json"}},
			[]string{`GITHUB_EVENT_PATH: got "/nonexistent/event.json"; open /nonexistent/event.json: no such file or directory`}},
		{"event file that is not JSON",
			runner{event: EventSchedule, payload: `{"schedule": `},
			[]string{`not a JSON event payload: unexpected end of JSON input`}},
		{"pull_request payload without a usable head or base",
			runner{event: EventPullRequest, payload: `{"pull_request": {"number": 0, "head": {"sha": "HEAD"}, "base": {"sha": ""}}}`},
			[]string{
				`event pull_request: pull_request.number: got "0"; want a positive PR number`,
				`event pull_request: pull_request.head.sha: got "HEAD"; want a full commit SHA`,
				`event pull_request: pull_request.base.sha: want a full commit SHA`,
				`event pull_request: pull_request.base.ref: is missing`,
			}},
		{"workflow_run of a pull_request_target run, whose head_sha is the base tip",
			runner{event: EventWorkflowRun, payload: workflowRunPayload(EventPullRequestTarget, `{"full_name": "x/widgets"}`, `[]`)},
			[]string{`input mode: got "auto"; gate cannot follow a workflow_run of a pull_request_target run: GitHub sets such a run's head_sha to the base branch's tip, not the pull request's head, so the pull request whose results it holds is unknown; run flakegate in the pull_request_target workflow itself (it already has a write token), or start the tests on pull_request and follow that run`}},
		{"workflow_run payload without workflow_run",
			runner{event: EventWorkflowRun, payload: `{"action": "completed"}`},
			[]string{`event workflow_run: workflow_run: is missing from the event file`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := Load(tc.runner.getenv(t))
			if err == nil {
				t.Fatalf("Load succeeded, want errors %q", tc.want)
			}
			if cfg != nil {
				t.Errorf("Load returned a Config with an error")
			}
			got := errorLines(err)
			if len(got) != len(tc.want) {
				t.Fatalf("got %d errors, want %d:\n%s", len(got), len(tc.want), strings.Join(got, "\n"))
			}
			for i := range got {
				// Event file paths live in t.TempDir(); compare from the reason on.
				if !strings.HasSuffix(got[i], tc.want[i]) {
					t.Errorf("error %d:\n got %s\nwant %s", i, got[i], tc.want[i])
				}
			}
			for _, s := range []string{testToken, testGeminiKey, testRuntimeToken} {
				if strings.Contains(err.Error(), s) {
					t.Errorf("error leaks secret %q", s)
				}
			}
		})
	}
}

// errorLines flattens an errors.Join tree into its messages.
func errorLines(err error) []string {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		var out []string
		for _, e := range j.Unwrap() {
			out = append(out, errorLines(e)...)
		}
		return out
	}
	return []string{err.Error()}
}

func TestLoadCollectsEveryInputError(t *testing.T) {
	r := runner{event: EventSchedule, payload: schedulePayload, inputs: map[string]string{
		"mode": "x", "threshold": "2", "lookback-days": "0", "comment": "maybe", "results": "[",
		"on-inconclusive": "retry", "gemini-model": "a b",
	}}
	_, err := Load(r.getenv(t))
	var names []string
	for _, e := range flatten(err) {
		var ie *InputError
		if !errors.As(e, &ie) {
			t.Fatalf("error %v is not an *InputError", e)
		}
		names = append(names, ie.Input)
	}
	want := []string{"mode", "lookback-days", "results", "threshold", "on-inconclusive", "comment", "gemini-model"}
	if diff := cmp.Diff(want, names); diff != "" {
		t.Errorf("inputs named (-want +got):\n%s", diff)
	}
}

func flatten(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		var out []error
		for _, e := range j.Unwrap() {
			out = append(out, flatten(e)...)
		}
		return out
	}
	return []error{err}
}

func TestSecretsNeverPrinted(t *testing.T) {
	r := runner{event: EventSchedule, payload: schedulePayload, inputs: map[string]string{"gemini-api-key": testGeminiKey}}
	getenv := r.getenv(t)
	cfg, err := Load(getenv)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{testToken, testGeminiKey, testRuntimeToken}
	if diff := cmp.Diff(want, cfg.Secrets()); diff != "" {
		t.Errorf("Config.Secrets (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(want, Secrets(getenv)); diff != "" {
		t.Errorf("Secrets(getenv) (-want +got):\n%s", diff)
	}
	if !cfg.AIEnabled() {
		t.Error("AIEnabled is false with gemini-api-key set")
	}

	js, err := json.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	outputs := map[string]string{
		"%v":   fmt.Sprintf("%v", cfg),
		"%+v":  fmt.Sprintf("%+v", *cfg),
		"%#v":  fmt.Sprintf("%#v", *cfg),
		"%s":   fmt.Sprintf("%s", cfg.GitHubToken),
		"%q":   fmt.Sprintf("%q", cfg.GeminiAPIKey),
		"%x":   fmt.Sprintf("%x", cfg.GitHubToken),
		"%d":   fmt.Sprintf("%d", cfg.GitHubToken),
		"json": string(js),
	}
	for verb, out := range outputs {
		for _, s := range want {
			if strings.Contains(out, s) {
				t.Errorf("%s output leaks %q: %s", verb, s, out)
			}
		}
	}
	if got := fmt.Sprintf("%v|%q|%v", cfg.GitHubToken, cfg.GitHubToken, Secret{}); got != `***|"***"|` {
		t.Errorf("secret formatting = %s", got)
	}
	if !strings.Contains(outputs["%#v"], `config.Secret("***")`) {
		t.Errorf("%%#v does not show the redacted secret: %s", outputs["%#v"])
	}
	if cfg.GitHubToken.Value() != testToken {
		t.Error("Value does not return the token")
	}
}

func TestSecretsAvailableWhenLoadFails(t *testing.T) {
	r := runner{event: EventSchedule, payload: schedulePayload, inputs: map[string]string{
		"mode": "bogus", "gemini-api-key": testGeminiKey,
	}}
	getenv := r.getenv(t)
	if _, err := Load(getenv); err == nil {
		t.Fatal("Load succeeded")
	}
	want := []string{testToken, testGeminiKey, testRuntimeToken}
	if diff := cmp.Diff(want, Secrets(getenv)); diff != "" {
		t.Errorf("Secrets(getenv) (-want +got):\n%s", diff)
	}
}

func TestSecretWithWhitespaceIsRejectedWithoutEcho(t *testing.T) {
	bad := "ghs_first line\nsecond"
	r := runner{event: EventSchedule, payload: schedulePayload, inputs: map[string]string{
		"github-token": bad, "gemini-api-key": "AIza key"}}
	_, err := Load(r.getenv(t))
	got := errorLines(err)
	want := []string{
		"input github-token: contains whitespace or control characters (value not shown); pass the secret alone",
		"input gemini-api-key: contains whitespace or control characters (value not shown); pass the secret alone",
		"input github-token: a token is required because mode report with no results input downloads workflow-run artifacts; leave github-token at its default (${{ github.token }}) or pass a token",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("errors (-want +got):\n%s", diff)
	}
	if strings.Contains(err.Error(), "first line") || strings.Contains(err.Error(), "AIza") {
		t.Errorf("error echoes a secret: %v", err)
	}
}

func TestMatchArtifact(t *testing.T) {
	cfg := wantDefaults()
	tests := map[string]bool{
		"junit-xml":              true,
		"JUnit-Results-ubuntu":   true,
		"test-results":           true,
		"unit_test_results-3.12": true,
		"test-reports":           true,
		"pytest-report":          true, // *test*report*
		"bazel-testlogs-linux":   true, // *testlogs*, Bazel's directory
		"coverage":               false,
		"flakegate-report":       false,
		"dist":                   false,
	}
	for name, want := range tests {
		if got := cfg.MatchArtifact(name); got != want {
			t.Errorf("MatchArtifact(%q) = %v, want %v", name, got, want)
		}
	}
	// The report artifact never matches, whatever the patterns.
	cfg.ArtifactPatterns = []string{"*report*"}
	if cfg.MatchArtifact("FlakeGate-Report") {
		t.Error("the report artifact matched its own pattern")
	}
	if !cfg.MatchArtifact("test-report") {
		t.Error("test-report did not match *report*")
	}
}

func TestPullRequestHasLabel(t *testing.T) {
	pr := &PullRequest{Labels: []string{"bug", "Test-Changes-Declared"}}
	if !pr.HasLabel("test-changes-declared") {
		t.Error("label compare is case-sensitive")
	}
	if pr.HasLabel("flaky-ledger-approved") {
		t.Error("found a label the PR does not carry")
	}
	var none *PullRequest
	if none.HasLabel("bug") {
		t.Error("nil PR has a label")
	}
}

func TestEventTooLarge(t *testing.T) {
	if testing.Short() {
		t.Skip("writes a 25 MiB file")
	}
	big := `{"schedule": "` + strings.Repeat("x", maxEventBytes) + `"}`
	_, err := Load(runner{event: EventSchedule, payload: big}.getenv(t))
	if err == nil || !strings.Contains(err.Error(), "larger than 26214400 bytes") {
		t.Fatalf("err = %v, want a size error", err)
	}
}

// TestReportArtifactNotARerunsName: a step's report artifact is never a
// name another step's re-run would upload (its name and -N, -attempt-N):
// read back by that step, it would be taken for its own report ("web-2"'s
// report read as "web"'s).
func TestReportArtifactNotARerunsName(t *testing.T) {
	names := map[string]string{}
	for tag, want := range map[string]string{
		"":          "flakegate-report",
		"flakegate": "flakegate-report",
		"e2e":       "flakegate-report-e2e",
		"web":       "flakegate-report-web",
		"web-2":     "flakegate-report-web-2-tag",
		"2":         "flakegate-report-2-tag",
		"attempt-3": "flakegate-report-attempt-3-tag",
		"gate 2":    "flakegate-report-gate-2-tag",
		"tag":       "flakegate-report-tag",
		"v1.2":      "flakegate-report-v1.2-tag",
	} {
		c := Config{ArtifactName: "flakegate-report", CommentTag: tag}
		got := c.ReportArtifact()
		if got != want {
			t.Errorf("tag %q: %q, want %q", tag, got, want)
		}
		names[tag] = got
	}
	for tag, name := range names {
		for other, on := range names {
			if on != name && collect.IsReportArtifact(on, name) {
				t.Errorf("tag %q's %q reads as a re-run's copy of tag %q's %q", tag, name, other, on)
			}
		}
	}
}

// TestFormerReportArtifacts: a step whose report artifact was renamed (a tag
// ending in a digit) reads its last report under the names it had.
func TestFormerReportArtifacts(t *testing.T) {
	for tag, want := range map[string][]string{
		"":       nil,
		"web":    nil,
		"node18": {"flakegate-report-node18"},
		// flakegate-report-2 is the untagged step's retried upload, never
		// this step's: the name before was flakegate-report-tag-2.
		"2": {"flakegate-report-tag-2"},
	} {
		c := Config{ArtifactName: "flakegate-report", CommentTag: tag}
		if got := c.FormerReportArtifacts(); !slices.Equal(got, want) {
			t.Errorf("tag %q: %q, want %q", tag, got, want)
		}
	}
}

// TestProtectedPathsNone: "none" protects no path (an empty list, which
// gate does not replace with its default as it does nil); other values
// are globs.
func TestProtectedPathsNone(t *testing.T) {
	for in, want := range map[string][]string{"none": {}, "spec/**": {"spec/**"}} {
		c, err := Load(runner{event: "schedule", payload: `{}`, inputs: map[string]string{"protected-paths": in}}.getenv(t))
		if err != nil {
			t.Fatal(err)
		}
		if c.ProtectedPaths == nil || !slices.Equal(c.ProtectedPaths, want) {
			t.Errorf("protected-paths %q: %#v, want %#v", in, c.ProtectedPaths, want)
		}
	}
}
