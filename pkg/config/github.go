package config

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"

	"github.com/sethvargo/go-envconfig"
)

// GitHub is the runner's context: the GITHUB_* and ACTIONS_* variables a
// container action receives. Paths are used as given (they point into the
// runner's mounts, such as /github/file_commands).
type GitHub struct {
	Actions     bool   // GITHUB_ACTIONS is "true"
	EventName   string // GITHUB_EVENT_NAME
	EventPath   string // GITHUB_EVENT_PATH
	Repository  string // GITHUB_REPOSITORY: "owner/name"
	Owner       string // first part of Repository
	Repo        string // second part of Repository
	SHA         string // GITHUB_SHA; for pull_request it is the merge commit: use Config.HeadSHA
	Ref         string // GITHUB_REF
	RefName     string // GITHUB_REF_NAME
	HeadRef     string // GITHUB_HEAD_REF (pull requests only)
	BaseRef     string // GITHUB_BASE_REF (pull requests only)
	Workflow    string // GITHUB_WORKFLOW: the workflow's name
	WorkflowRef string // GITHUB_WORKFLOW_REF: "owner/repo/.github/workflows/f.yml@ref"
	Job         string // GITHUB_JOB
	Actor       string // GITHUB_ACTOR
	RunID       int64  // GITHUB_RUN_ID
	RunAttempt  int    // GITHUB_RUN_ATTEMPT
	RunNumber   int64  // GITHUB_RUN_NUMBER

	APIURL     string // GITHUB_API_URL, default https://api.github.com
	ServerURL  string // GITHUB_SERVER_URL, default https://github.com
	GraphQLURL string // GITHUB_GRAPHQL_URL, default https://api.github.com/graphql

	Workspace     string // GITHUB_WORKSPACE
	RunnerTemp    string // RUNNER_TEMP: emptied after the job; where temporary files go
	Output        string // GITHUB_OUTPUT: step outputs file
	StepSummary   string // GITHUB_STEP_SUMMARY: job summary file
	RetentionDays int    // GITHUB_RETENTION_DAYS: caps artifact retention; 0 when unset

	RuntimeToken Secret // ACTIONS_RUNTIME_TOKEN: bearer token of the artifact service
	RuntimeURL   string // ACTIONS_RUNTIME_URL
	ResultsURL   string // ACTIONS_RESULTS_URL; "" when the server provides none: skip the upload
}

// rawGitHub is the environment GitHub is read from, before validation.
type rawGitHub struct {
	Actions       string `env:"GITHUB_ACTIONS"`
	EventName     string `env:"GITHUB_EVENT_NAME"`
	EventPath     string `env:"GITHUB_EVENT_PATH"`
	Repository    string `env:"GITHUB_REPOSITORY"`
	SHA           string `env:"GITHUB_SHA"`
	Ref           string `env:"GITHUB_REF"`
	RefName       string `env:"GITHUB_REF_NAME"`
	HeadRef       string `env:"GITHUB_HEAD_REF"`
	BaseRef       string `env:"GITHUB_BASE_REF"`
	Workflow      string `env:"GITHUB_WORKFLOW"`
	WorkflowRef   string `env:"GITHUB_WORKFLOW_REF"`
	Job           string `env:"GITHUB_JOB"`
	Actor         string `env:"GITHUB_ACTOR"`
	RunID         string `env:"GITHUB_RUN_ID"`
	RunAttempt    string `env:"GITHUB_RUN_ATTEMPT"`
	RunNumber     string `env:"GITHUB_RUN_NUMBER"`
	APIURL        string `env:"GITHUB_API_URL,default=https://api.github.com"`
	ServerURL     string `env:"GITHUB_SERVER_URL,default=https://github.com"`
	GraphQLURL    string `env:"GITHUB_GRAPHQL_URL,default=https://api.github.com/graphql"`
	Workspace     string `env:"GITHUB_WORKSPACE"`
	RunnerTemp    string `env:"RUNNER_TEMP"`
	Output        string `env:"GITHUB_OUTPUT"`
	StepSummary   string `env:"GITHUB_STEP_SUMMARY"`
	RetentionDays string `env:"GITHUB_RETENTION_DAYS"`
	RuntimeToken  string `env:"ACTIONS_RUNTIME_TOKEN"`
	RuntimeURL    string `env:"ACTIONS_RUNTIME_URL"`
	ResultsURL    string `env:"ACTIONS_RESULTS_URL"`
}

// readGitHub reads and checks the runner's environment. Empty variables count
// as unset. Owner and repository are not required here: Load requires them
// only when the GitHub API is needed.
func readGitHub(getenv func(string) string) (GitHub, error) {
	var raw rawGitHub
	err := envconfig.ProcessWith(context.Background(), &envconfig.Config{
		Target: &raw,
		Lookuper: envconfig.LookuperFunc(func(key string) (string, bool) {
			v := strings.TrimSpace(getenv(key))
			return v, v != ""
		}),
	})
	if err != nil {
		return GitHub{}, fmt.Errorf("reading the environment: %w", err)
	}

	gh := GitHub{
		Actions:      raw.Actions == "true",
		EventName:    raw.EventName,
		EventPath:    raw.EventPath,
		Repository:   raw.Repository,
		SHA:          raw.SHA,
		Ref:          raw.Ref,
		RefName:      raw.RefName,
		HeadRef:      raw.HeadRef,
		BaseRef:      raw.BaseRef,
		Workflow:     raw.Workflow,
		WorkflowRef:  raw.WorkflowRef,
		Job:          raw.Job,
		Actor:        raw.Actor,
		APIURL:       raw.APIURL,
		ServerURL:    raw.ServerURL,
		GraphQLURL:   raw.GraphQLURL,
		Workspace:    raw.Workspace,
		RunnerTemp:   raw.RunnerTemp,
		Output:       raw.Output,
		StepSummary:  raw.StepSummary,
		RuntimeToken: NewSecret(raw.RuntimeToken),
		RuntimeURL:   raw.RuntimeURL,
		ResultsURL:   raw.ResultsURL,
	}
	var errs []error
	envInt := func(name, v string, dst *int64) {
		if v == "" {
			return
		}
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 0 {
			errs = append(errs, &EnvError{Name: name, Value: v, Reason: "want a non-negative integer"})
			return
		}
		*dst = n
	}
	var attempt, retention int64
	envInt("GITHUB_RUN_ID", raw.RunID, &gh.RunID)
	envInt("GITHUB_RUN_NUMBER", raw.RunNumber, &gh.RunNumber)
	envInt("GITHUB_RUN_ATTEMPT", raw.RunAttempt, &attempt)
	envInt("GITHUB_RETENTION_DAYS", raw.RetentionDays, &retention)
	gh.RunAttempt, gh.RetentionDays = int(min(attempt, 1<<31-1)), int(min(retention, 1<<31-1))

	if gh.Repository != "" {
		owner, repo, ok := strings.Cut(gh.Repository, "/")
		if !ok || owner == "" || repo == "" || strings.Contains(repo, "/") {
			errs = append(errs, &EnvError{Name: "GITHUB_REPOSITORY", Value: gh.Repository, Reason: `want "owner/name"`})
		} else {
			gh.Owner, gh.Repo = owner, repo
		}
	}
	for _, u := range []struct{ name, v string }{
		{"GITHUB_API_URL", gh.APIURL},
		{"GITHUB_SERVER_URL", gh.ServerURL},
		{"GITHUB_GRAPHQL_URL", gh.GraphQLURL},
		{"ACTIONS_RUNTIME_URL", gh.RuntimeURL},
		{"ACTIONS_RESULTS_URL", gh.ResultsURL},
	} {
		if u.v != "" && !isHTTPURL(u.v) {
			errs = append(errs, &EnvError{Name: u.name, Value: u.v, Reason: "want an absolute http or https URL"})
		}
	}
	return gh, errors.Join(errs...)
}

func isHTTPURL(s string) bool {
	u, err := url.Parse(s)
	return err == nil && (u.Scheme == "https" || u.Scheme == "http") && u.Host != ""
}
