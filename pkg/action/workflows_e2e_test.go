package action

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/flakegate/flakegate/pkg/ghapi/ghfake"
)

// TestUnknownWorkflowIsLeftOut: workflows names backend.yml and
// frontend.yml, but frontend.yml was renamed (web.yml). The report reads
// backend.yml's runs and says, in the report and the summary, that
// frontend.yml was not found. Before, the step failed on the 404 and read
// nothing. With no workflow found at all it fails, naming them.
func TestUnknownWorkflowIsLeftOut(t *testing.T) {
	s := newFake(t)
	repo := s.Repo(repoName)
	for i := range 6 {
		for _, wf := range []string{"backend.yml", "web.yml"} {
			r := repo.AddRun(ghfake.Run{Workflow: wf, HeadSHA: fmt.Sprintf("%040x", 0xabc0+i), CreatedAt: now.Add(-time.Duration(10-i) * time.Hour)})
			repo.AddArtifact(ghfake.Artifact{RunID: r.ID, Name: "junit-" + wf, Files: map[string][]byte{"junit.xml": shardDoc(strings.TrimSuffix(wf, ".yml"), 5, nil)}})
		}
	}
	self := repo.AddRun(ghfake.Run{Workflow: "flakegate.yml", Event: "schedule", CreatedAt: now})
	r := newRunner(t, s, self.ID, "schedule", map[string]any{"schedule": "0 6 * * 1"}, map[string]string{"workflows": "backend.yml,frontend.yml"})
	if code := r.run(); code != 0 {
		t.Fatalf("exit %d\n%s", code, r.stdout.String())
	}
	var rep struct {
		Runs         int `json:"runs"`
		SkippedFiles []struct {
			Path  string `json:"path"`
			Error string `json:"error"`
		} `json:"skipped_files"`
	}
	if err := json.Unmarshal(uploadedReport(t, s)["report.json"], &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Runs != 6 {
		t.Errorf("%d runs read, want backend.yml's 6", rep.Runs)
	}
	said := false
	for _, sk := range rep.SkippedFiles {
		said = said || sk.Path == "workflow frontend.yml" && strings.Contains(sk.Error, "not found")
	}
	if !said || !strings.Contains(r.summary(), "frontend.yml") {
		t.Errorf("frontend.yml not said to be missing: skipped %+v\nsummary:\n%s", rep.SkippedFiles, r.summary())
	}

	self = repo.AddRun(ghfake.Run{Workflow: "flakegate.yml", Event: "schedule", CreatedAt: now})
	r = newRunner(t, s, self.ID, "schedule", map[string]any{"schedule": "0 6 * * 1"}, map[string]string{"workflows": "frontend.yml,api.yml"})
	if code := r.run(); code == 0 || !strings.Contains(r.stdout.String(), "no workflow of acme/shop found: frontend.yml, api.yml") {
		t.Errorf("no workflow found: exit %d\n%s", code, r.stdout.String())
	}
}
