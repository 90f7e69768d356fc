package config

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"

	"github.com/flakegate/flakegate/pkg/model"
)

// maxEventBytes caps the event file read. GitHub: "Payloads are capped at
// 25 MB" (webhook events and payloads); the runner writes the same payload.
const maxEventBytes = 25 << 20

// Event names this package understands.
const (
	EventPullRequest       = "pull_request"
	EventPullRequestTarget = "pull_request_target"
	EventWorkflowRun       = "workflow_run"
	EventPush              = "push"
	EventSchedule          = "schedule"
	EventWorkflowDispatch  = "workflow_dispatch"
	EventMergeGroup        = "merge_group"
)

// Event is the parsed event file (GITHUB_EVENT_PATH). Exactly one of the
// pointers is set for the events that carry one; the others are nil.
type Event struct {
	Name   string // GITHUB_EVENT_NAME
	Action string // the payload's "action": "opened", "synchronize", "completed", …

	// PullRequest is set for pull_request and pull_request_target.
	PullRequest *PullRequest
	// WorkflowRun is set for workflow_run: the run that triggered this one.
	WorkflowRun *WorkflowRun
	// Push is set for push.
	Push *Push
	// MergeGroup is set for merge_group: a merge queue's commit to test.
	MergeGroup *MergeGroup
	// Schedule is the cron expression of a schedule event.
	Schedule string
	// DefaultBranch is the payload's repository.default_branch; "" when the
	// payload has none (a schedule event's may not).
	DefaultBranch string
}

// FromPullRequest reports whether the event is a pull request's: a
// pull_request or pull_request_target event, or a workflow_run whose
// triggering run was started by one (forks included, where the payload's
// pull_requests list is empty).
func (e Event) FromPullRequest() bool {
	switch e.Name {
	case EventPullRequest, EventPullRequestTarget:
		return true
	case EventWorkflowRun:
		return e.WorkflowRun != nil && isPullRequestEvent(e.WorkflowRun.Event)
	}
	return false
}

func isPullRequestEvent(name string) bool {
	return name == EventPullRequest || name == EventPullRequestTarget
}

// PullRequest is the pull request under test.
//
// From a pull_request or pull_request_target event every field is filled in.
// Seen through workflow_run, Body and Labels are empty (the payload has
// neither: fetch the PR), and for a fork PR — whose workflow_run.pull_requests
// list is empty — Number is 0 and BaseSHA and BaseRef are "": find the PR by
// HeadSHA through the API and check that its head.sha equals HeadSHA.
type PullRequest struct {
	Number   int
	HeadSHA  string // pull_request.head.sha: the commit to gate, never GITHUB_SHA (the merge commit)
	HeadRef  string
	HeadRepo string // owner/name of the head repository; "" when head.repo is null (deleted fork)
	BaseSHA  string
	BaseRef  string
	BaseRepo string // owner/name of the base repository
	Body     string
	Labels   []string
	Draft    bool
	// Fork is true when the head repository is not the base repository, or is
	// unknown. A fork PR's pull_request token is read-only and gets no secrets.
	Fork bool
}

// HasLabel reports whether the PR carries the label, compared without regard
// to case as GitHub does.
func (p *PullRequest) HasLabel(name string) bool {
	if p == nil {
		return false
	}
	for _, l := range p.Labels {
		if strings.EqualFold(l, name) {
			return true
		}
	}
	return false
}

// WorkflowRun is the triggering run of a workflow_run event.
type WorkflowRun struct {
	ID         int64 // the triggering run's id: its artifacts hold the results
	Name       string
	WorkflowID int64
	RunAttempt int
	Event      string // the event that started the triggering run, e.g. "pull_request"
	Conclusion string // "success", "failure", …; "" while in progress
	HeadSHA    string
	HeadBranch string
	HeadRepo   string // owner/name; "" when head_repository is null
	Repo       string // owner/name of the repository the run belongs to
	// PullRequests lists the PRs whose head is HeadBranch in this repository.
	// It is empty for PRs from forks.
	PullRequests []RunPullRequest
	Fork         bool // HeadRepo differs from Repo, or is unknown
}

// RunPullRequest is one entry of workflow_run.pull_requests.
type RunPullRequest struct {
	Number  int
	HeadSHA string
	HeadRef string
	BaseSHA string
	BaseRef string
}

// MergeGroup is a merge_group event's group: the commit the merge queue
// made of the base branch's tip and the queued pull requests.
type MergeGroup struct {
	HeadSHA string
	HeadRef string // refs/heads/gh-readonly-queue/<base>/pr-<n>-<sha>
	BaseSHA string
	BaseRef string // the base branch's name, refs/heads/ taken off
}

// Push is a push event's payload.
type Push struct {
	Ref    string
	Before string
	After  string
}

// The JSON shapes of the payloads, as the runner writes them. Pointers are
// fields that GitHub sends as null.
type (
	repoJSON struct {
		FullName string `json:"full_name"`
	}
	refJSON struct {
		SHA  string    `json:"sha"`
		Ref  string    `json:"ref"`
		Repo *repoJSON `json:"repo"`
	}
	payloadJSON struct {
		Action      string `json:"action"`
		PullRequest *struct {
			Number int     `json:"number"`
			Body   *string `json:"body"`
			Draft  bool    `json:"draft"`
			Labels []struct {
				Name string `json:"name"`
			} `json:"labels"`
			Head refJSON `json:"head"`
			Base refJSON `json:"base"`
		} `json:"pull_request"`
		WorkflowRun *struct {
			ID             int64     `json:"id"`
			Name           string    `json:"name"`
			WorkflowID     int64     `json:"workflow_id"`
			RunAttempt     int       `json:"run_attempt"`
			Event          string    `json:"event"`
			Conclusion     *string   `json:"conclusion"`
			HeadSHA        string    `json:"head_sha"`
			HeadBranch     string    `json:"head_branch"`
			HeadRepository *repoJSON `json:"head_repository"`
			Repository     *repoJSON `json:"repository"`
			PullRequests   []struct {
				Number int     `json:"number"`
				Head   refJSON `json:"head"`
				Base   refJSON `json:"base"`
			} `json:"pull_requests"`
		} `json:"workflow_run"`
		Repository *struct {
			DefaultBranch string `json:"default_branch"`
		} `json:"repository"`
		MergeGroup *struct {
			HeadSHA string `json:"head_sha"`
			HeadRef string `json:"head_ref"`
			BaseSHA string `json:"base_sha"`
			BaseRef string `json:"base_ref"`
		} `json:"merge_group"`
		Ref      string `json:"ref"`
		Before   string `json:"before"`
		After    string `json:"after"`
		Schedule string `json:"schedule"`
	}
)

// readEvent parses the event file. Events whose data the action needs
// (pull_request, pull_request_target, workflow_run) must have one; for the
// others a missing file is no error.
func readEvent(name, path string) (Event, error) {
	ev := Event{Name: name}
	needed := isPullRequestEvent(name) || name == EventWorkflowRun || name == EventMergeGroup
	if path == "" {
		if needed {
			return ev, &EnvError{Name: "GITHUB_EVENT_PATH", Reason: fmt.Sprintf("is not set; the %s event needs its event file", name)}
		}
		return ev, nil
	}
	data, err := readBounded(path, maxEventBytes)
	if errors.Is(err, fs.ErrNotExist) && !needed {
		return ev, nil
	}
	if err != nil {
		return ev, &EnvError{Name: "GITHUB_EVENT_PATH", Value: path, Reason: err.Error()}
	}
	var p payloadJSON
	if err := json.Unmarshal(data, &p); err != nil {
		return ev, &EnvError{Name: "GITHUB_EVENT_PATH", Value: path, Reason: "not a JSON event payload: " + err.Error()}
	}
	ev.Action = p.Action
	if p.Repository != nil {
		ev.DefaultBranch = p.Repository.DefaultBranch
	}
	var errs []error
	switch {
	case isPullRequestEvent(name):
		ev.PullRequest, errs = pullRequestFrom(name, &p)
	case name == EventWorkflowRun:
		ev.WorkflowRun, errs = workflowRunFrom(&p)
	case name == EventMergeGroup:
		ev.MergeGroup, errs = mergeGroupFrom(&p)
	case name == EventPush:
		ev.Push = &Push{Ref: p.Ref, Before: p.Before, After: p.After}
	case name == EventSchedule:
		ev.Schedule = p.Schedule
	}
	return ev, errors.Join(errs...)
}

func pullRequestFrom(name string, p *payloadJSON) (*PullRequest, []error) {
	pr := p.PullRequest
	if pr == nil {
		return nil, []error{eventErr(name, "pull_request", "", "is missing from the event file")}
	}
	out := &PullRequest{
		Number:   pr.Number,
		HeadSHA:  pr.Head.SHA,
		HeadRef:  pr.Head.Ref,
		BaseSHA:  pr.Base.SHA,
		BaseRef:  pr.Base.Ref,
		HeadRepo: fullName(pr.Head.Repo),
		BaseRepo: fullName(pr.Base.Repo),
		Draft:    pr.Draft,
	}
	if pr.Body != nil {
		out.Body = *pr.Body
	}
	for _, l := range pr.Labels {
		out.Labels = append(out.Labels, l.Name)
	}
	out.Fork = isFork(out.HeadRepo, out.BaseRepo)

	var errs []error
	if out.Number <= 0 {
		errs = append(errs, eventErr(name, "pull_request.number", fmt.Sprint(out.Number), "want a positive PR number"))
	}
	if !isSHA(out.HeadSHA) {
		errs = append(errs, eventErr(name, "pull_request.head.sha", out.HeadSHA, "want a full commit SHA"))
	}
	if !isSHA(out.BaseSHA) {
		errs = append(errs, eventErr(name, "pull_request.base.sha", out.BaseSHA, "want a full commit SHA"))
	}
	if out.BaseRef == "" {
		errs = append(errs, eventErr(name, "pull_request.base.ref", "", "is missing"))
	}
	return out, errs
}

func workflowRunFrom(p *payloadJSON) (*WorkflowRun, []error) {
	wr := p.WorkflowRun
	if wr == nil {
		return nil, []error{eventErr(EventWorkflowRun, "workflow_run", "", "is missing from the event file")}
	}
	out := &WorkflowRun{
		ID:         wr.ID,
		Name:       wr.Name,
		WorkflowID: wr.WorkflowID,
		RunAttempt: wr.RunAttempt,
		Event:      wr.Event,
		HeadSHA:    wr.HeadSHA,
		HeadBranch: wr.HeadBranch,
		HeadRepo:   fullName(wr.HeadRepository),
		Repo:       fullName(wr.Repository),
	}
	if wr.Conclusion != nil {
		out.Conclusion = *wr.Conclusion
	}
	for _, pr := range wr.PullRequests {
		out.PullRequests = append(out.PullRequests, RunPullRequest{
			Number:  pr.Number,
			HeadSHA: pr.Head.SHA,
			HeadRef: pr.Head.Ref,
			BaseSHA: pr.Base.SHA,
			BaseRef: pr.Base.Ref,
		})
	}
	out.Fork = isFork(out.HeadRepo, out.Repo)

	var errs []error
	if out.ID <= 0 {
		errs = append(errs, eventErr(EventWorkflowRun, "workflow_run.id", fmt.Sprint(out.ID), "want a positive run id"))
	}
	if !isSHA(out.HeadSHA) {
		errs = append(errs, eventErr(EventWorkflowRun, "workflow_run.head_sha", out.HeadSHA, "want a full commit SHA"))
	}
	return out, errs
}

func mergeGroupFrom(p *payloadJSON) (*MergeGroup, []error) {
	mg := p.MergeGroup
	if mg == nil {
		return nil, []error{eventErr(EventMergeGroup, "merge_group", "", "is missing from the event file")}
	}
	out := &MergeGroup{HeadSHA: mg.HeadSHA, HeadRef: mg.HeadRef, BaseSHA: mg.BaseSHA, BaseRef: strings.TrimPrefix(mg.BaseRef, "refs/heads/")}
	var errs []error
	if !isSHA(out.HeadSHA) {
		errs = append(errs, eventErr(EventMergeGroup, "merge_group.head_sha", out.HeadSHA, "want a full commit SHA"))
	}
	if !isSHA(out.BaseSHA) {
		errs = append(errs, eventErr(EventMergeGroup, "merge_group.base_sha", out.BaseSHA, "want a full commit SHA"))
	}
	if out.BaseRef == "" {
		errs = append(errs, eventErr(EventMergeGroup, "merge_group.base_ref", "", "is missing"))
	}
	return out, errs
}

// pullRequestOf resolves the PR under test from the event, or nil when the
// event is not a pull request's.
func pullRequestOf(ev Event) *PullRequest {
	if ev.PullRequest != nil {
		return ev.PullRequest
	}
	wr := ev.WorkflowRun
	if wr == nil || !isPullRequestEvent(wr.Event) {
		return nil
	}
	pr := &PullRequest{
		HeadSHA:  wr.HeadSHA,
		HeadRef:  wr.HeadBranch,
		HeadRepo: wr.HeadRepo,
		BaseRepo: wr.Repo,
		Fork:     wr.Fork,
	}
	// Several PRs can share a head branch; only one whose head is the run's
	// commit is the PR this run tested.
	for _, rp := range wr.PullRequests {
		if rp.HeadSHA == wr.HeadSHA {
			pr.Number, pr.BaseSHA, pr.BaseRef = rp.Number, rp.BaseSHA, rp.BaseRef
			if rp.HeadRef != "" {
				pr.HeadRef = rp.HeadRef
			}
			break
		}
	}
	return pr
}

func eventErr(event, field, value, reason string) error {
	return &EnvError{Name: "event " + event + ": " + field, Value: value, Reason: reason}
}

func fullName(r *repoJSON) string {
	if r == nil {
		return ""
	}
	return r.FullName
}

// isFork: a head repository that is unknown (null) or differs from the base
// repository. GitHub compares owner/name without regard to case.
func isFork(head, base string) bool {
	return head == "" || !strings.EqualFold(head, base)
}

// isSHA accepts a full commit id (model.IsCommitSHA).
func isSHA(s string) bool { return model.IsCommitSHA(s) }

// readBounded reads at most limit bytes of a file and fails if there are more.
func readBounded(path string, limit int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("larger than %d bytes", limit)
	}
	return data, nil
}
