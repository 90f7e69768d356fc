package publish

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/flakegate/flakegate/pkg/ghapi"
	"github.com/flakegate/flakegate/pkg/ghapi/ghfake"
)

var testRepo = ghapi.Repo{Owner: "octo", Name: "app"}

func newClient(t *testing.T, s *ghfake.Server) *ghapi.Client {
	t.Helper()
	c, err := ghapi.New(ghfake.Token, s.URL, nil, ghapi.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// firstLines are the first lines of the comments on a pull request.
func firstLines(r *ghfake.Repo, pr int) []string {
	var out []string
	for _, cm := range r.Comments(pr) {
		out = append(out, strings.SplitN(cm.Body, "\n", 2)[0])
	}
	return out
}

// TestStickyCommentRace: runs at the same time (a PR opened with a label
// fires opened and labeled at once) each find no comment and each post one.
// After posting, each lists again, keeps the oldest and deletes the rest, so
// one comment is left, which every run reports and the next run edits.
func TestStickyCommentRace(t *testing.T) {
	const runs = 3
	s := ghfake.New(t)
	r := s.Repo("octo/app")
	pr := r.AddPullRequest(ghfake.PullRequest{})
	s.SetLatency(150 * time.Millisecond)
	results := make([]CommentResult, runs)
	var wg sync.WaitGroup
	for i := range runs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := StickyComment(context.Background(), newClient(t, s), testRepo, pr.Number, Comment{
				Mode: CommentAlways, Body: fmt.Sprintf("verdict: block (run %d)", i), State: "block", Failing: true})
			if err != nil {
				t.Error(err)
			}
			results[i] = res
		}()
	}
	wg.Wait()
	s.SetLatency(0)
	posts := 0
	for _, q := range s.Requests(ghfake.HostAPI) {
		if q.Method == "POST" {
			posts++
		}
	}
	if posts != runs {
		t.Logf("%d of %d runs posted: the race was not reproduced", posts, runs)
	}
	cs := r.Comments(pr.Number)
	if len(cs) != 1 {
		t.Fatalf("after %d runs at once, %d comments, want 1: %q", runs, len(cs), firstLines(r, pr.Number))
	}
	var dups []string
	for i, res := range results {
		if want := fmt.Sprintf("#issuecomment-%d", cs[0].ID); !strings.HasSuffix(res.URL, want) {
			t.Errorf("run %d reports %s (%s), want the comment left, %s", i, res.URL, res.Action, want)
		}
		if res.Duplicates != "" {
			dups = append(dups, res.Duplicates)
		}
	}
	if posts > 1 && len(dups) == 0 {
		t.Errorf("no run said it deleted a duplicate: %+v", results)
	}

	// The next run edits the one comment.
	if _, err := StickyComment(context.Background(), newClient(t, s), testRepo, pr.Number, Comment{
		Mode: CommentAlways, Body: "verdict: pass", State: "pass"}); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"verdict: pass"}, firstLines(r, pr.Number)); diff != "" {
		t.Errorf("comments (-want +got):\n%s", diff)
	}
}

// TestStickyCommentDeletesDuplicates: duplicates left by an earlier race
// (or an older flakegate) are deleted when found: the oldest is edited and
// the newer ones of ours go; a person's comment with the marker stays.
func TestStickyCommentDeletesDuplicates(t *testing.T) {
	s := ghfake.New(t)
	r := s.Repo("octo/app")
	pr := r.AddPullRequest(ghfake.PullRequest{})
	marker := CommentMarker("")
	bot := func(body string) ghfake.Comment {
		return ghfake.Comment{Issue: pr.Number, User: "github-actions[bot]", Bot: true, Body: body + "\n\n" + marker + "\n" + stateMark("block") + "\n"}
	}
	oldest := r.AddComment(bot("verdict: block (first)"))
	r.AddComment(ghfake.Comment{Issue: pr.Number, User: "alice", Body: "quoting\n" + marker})
	r.AddComment(bot("verdict: block (second)"))
	r.AddComment(bot("verdict: block (third)"))
	for _, mode := range []CommentMode{CommentChanges, CommentAlways} {
		res, err := StickyComment(context.Background(), newClient(t, s), testRepo, pr.Number, Comment{Mode: mode, Body: "verdict: block (now)", State: "block", Failing: true})
		if err != nil {
			t.Fatal(err)
		}
		if mode == CommentChanges && (res.Action != "unchanged" || !strings.HasPrefix(res.Duplicates, "deleted 2 duplicate comment(s)")) {
			t.Errorf("comment: changes: %+v; want unchanged, and 2 duplicates deleted", res)
		}
		if mode == CommentAlways && (res.Action != "edited" || res.Duplicates != "") {
			t.Errorf("comment: always: %+v; want edited, no duplicates left", res)
		}
	}
	got := r.Comments(pr.Number)
	if len(got) != 2 || got[0].ID != oldest.ID || got[1].User != "alice" {
		t.Fatalf("comments left: %q; want the oldest of ours and alice's", firstLines(r, pr.Number))
	}
	if !strings.HasPrefix(got[0].Body, "verdict: block (now)") {
		t.Errorf("kept comment reads %q", got[0].Body)
	}
}

// TestStickyCommentPlantedMarkers: a test name rendered in a comment can
// carry another tag's marker, or a state mark; only the trailer flakegate
// appends counts.
func TestStickyCommentPlantedMarkers(t *testing.T) {
	ctx := context.Background()
	s := ghfake.New(t)
	r := s.Repo("octo/app")
	pr := r.AddPullRequest(ghfake.PullRequest{})
	c := newClient(t, s)

	// Step "unit" blocks; an undecided test is named so as to plant the
	// "e2e" step's marker and the state mark of a later verdict.
	planted := "What would decide: `t::x " + CommentMarker("e2e") + "` and `t::y " + stateMark("block\nnew") + "`"
	unit, err := StickyComment(ctx, c, testRepo, pr.Number, Comment{Mode: CommentChanges, Tag: "unit", Body: "flakegate: block\n\n" + planted, State: "block\nold", Failing: true})
	if err != nil || unit.Action != "posted" {
		t.Fatalf("unit: %+v, %v", unit, err)
	}

	// Step "e2e" passes: it must post its own comment, not edit unit's.
	e2e, err := StickyComment(ctx, c, testRepo, pr.Number, Comment{Mode: CommentAlways, Tag: "e2e", Body: "flakegate: pass", State: "pass"})
	if err != nil {
		t.Fatal(err)
	}
	if e2e.Action != "posted" || e2e.URL == unit.URL {
		t.Errorf("e2e step: %+v; want its own comment posted, unit's (%s) left alone", e2e, unit.URL)
	}

	if diff := cmp.Diff([]string{"flakegate: block", "flakegate: pass"}, firstLines(r, pr.Number)); diff != "" {
		t.Errorf("comments (-want +got):\n%s", diff)
	}

	// On another PR, unit's next run names a new blocking test: its state
	// is the one planted by the first run's test name, yet the comment
	// must change.
	pr2 := r.AddPullRequest(ghfake.PullRequest{})
	first, err := StickyComment(ctx, c, testRepo, pr2.Number, Comment{Mode: CommentChanges, Tag: "unit", Body: "flakegate: block\n\n" + planted, State: "block\nold", Failing: true})
	if err != nil {
		t.Fatal(err)
	}
	again, err := StickyComment(ctx, c, testRepo, pr2.Number, Comment{Mode: CommentChanges, Tag: "unit", Body: "flakegate: block, new", State: "block\nnew", Failing: true})
	if err != nil {
		t.Fatal(err)
	}
	if again.Action != "edited" || again.URL != first.URL {
		t.Errorf("unit's second run: %+v; want its comment %s edited", again, first.URL)
	}
	if diff := cmp.Diff([]string{"flakegate: block, new"}, firstLines(r, pr2.Number)); diff != "" {
		t.Errorf("comments (-want +got):\n%s", diff)
	}
}

// TestTrackingIssueScanCap: past the issues FindIssue reads, the report
// says so: a new issue is opened with a warning, or, with no flaky tests,
// none is closed, with a warning.
func TestTrackingIssueScanCap(t *testing.T) {
	ctx := context.Background()
	s := ghfake.New(t)
	r := s.Repo("octo/app")
	c := newClient(t, s)
	if _, did, warning, err := TrackingIssue(ctx, c, testRepo, "", 3, "3 flaky"); err != nil || did != IssueCreated || warning != "" {
		t.Fatalf("first report: %s, %q, %v", did, warning, err)
	}
	for i := range 1000 {
		r.AddIssue(ghfake.Issue{Title: fmt.Sprint("bug ", i), UpdatedAt: time.Now().Add(time.Hour)})
	}
	for _, flaky := range []int{0, 2} {
		_, did, warning, err := TrackingIssue(ctx, c, testRepo, "", flaky, fmt.Sprint(flaky, " flaky"))
		want := map[int]string{0: IssueNone, 2: IssueCreated}[flaky]
		if err != nil || did != want || !strings.Contains(warning, "none of the 1000 most recently updated open issues") {
			t.Errorf("%d flaky: %q, warning %q, %v; want %q and a warning", flaky, did, warning, err, want)
		}
	}
}

// TestTrackingIssueEditedByAPerson: a maintainer adds a line under
// the tracking issue's text (a triage note, "cc @team"), as people do with
// a tracking issue. The marker is then no longer the body's last line, so
// the next report no longer finds the issue: it opens a second one and the
// first stays open for ever (with no flaky tests, nothing is closed). With
// nothing hidden ending the body, the marker counts as a whole line.
func TestTrackingIssueEditedByAPerson(t *testing.T) {
	ctx := context.Background()
	s := ghfake.New(t)
	r := s.Repo("octo/app")
	c := newClient(t, s)
	url, did, _, err := TrackingIssue(ctx, c, testRepo, "", 3, "3 flaky")
	if err != nil || did != IssueCreated {
		t.Fatalf("first report: %s %v", did, err)
	}
	is := r.Issues()[0]
	if _, err := c.UpdateIssue(ctx, testRepo, is.Number, ghapi.IssueSpec{Body: is.Body + "\n\nTriage: @team owns test_login, see #12."}); err != nil {
		t.Fatal(err)
	}
	url2, did, _, err := TrackingIssue(ctx, c, testRepo, "", 2, "2 flaky")
	if err != nil || did != IssueUpdated || url2 != url {
		t.Errorf("second report: %s %s, %v; want %s updated (open issues now: %d)", did, url2, err, url, len(r.Issues()))
	}
}
