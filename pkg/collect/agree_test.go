package collect

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/flakegate/flakegate/pkg/ghapi/ghfake"
	"github.com/flakegate/flakegate/pkg/history"
)

// TestGitHubAgreesWithLocal uploads a history as the artifacts of workflow
// runs (two artifacts per run, a file per class in each, tests failing with
// messages of one signature and moving between lines) and reads it back
// from the fake GitHub with downloads in parallel and in turn, and from the
// same files on disk: the tests, their places, cells and signatures must
// be the same. The documents state the run's id, commit and time as the
// API does, so the runs are the same runs. The two artifacts hold the same
// tests side by side, as a matrix's legs do: both reads give each test one
// identity per artifact, "app.Alpha::t0 [junit-a]", the artifact's
// directory on disk as gh run download writes it.
func TestGitHubAgreesWithLocal(t *testing.T) {
	s, repo := newFake(t)
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(3, 5))
	for i := range 10 {
		at := t0.Add(time.Duration(i) * time.Hour)
		r := repo.AddRun(ghfake.Run{CreatedAt: at, HeadSHA: fmt.Sprintf("%040x", 0xc0ffee+i)})
		for _, art := range []string{"junit-a", "junit-b"} {
			files := map[string][]byte{}
			for _, class := range []string{"Alpha", "Beta"} {
				var body string
				for k := range 4 {
					outcome := ""
					switch rng.IntN(5) {
					case 0:
						outcome = fmt.Sprintf(`<failure message="lost at 0x%x" type="E">trace</failure>`, rng.IntN(1<<12))
					case 1:
						outcome = `<skipped/>`
					}
					body += fmt.Sprintf(`<testcase classname="app.%s" name="t%d" file="app/%s.py" line="%d" time="0.2">%s</testcase>`,
						class, k, art, 10+rng.IntN(2), outcome)
				}
				files["reports/TEST-app."+class+".xml"] = []byte(fmt.Sprintf(`<?xml version="1.0"?><testsuite name="app.%s" timestamp="%s">`+
					`<properties><property name="commit_sha" value="%s"/><property name="run_id" value="%d"/></properties>%s</testsuite>`,
					class, at.Format("2006-01-02T15:04:05"), r.HeadSHA, r.ID, body))
			}
			repo.AddArtifact(ghfake.Artifact{RunID: r.ID, Name: art, Files: files})
			for name, b := range files {
				p := filepath.Join(dir, fmt.Sprint(r.ID), art, name)
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, b, 0o644); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	local, err := Load(context.Background(), "", []string{dir}, 2)
	if err != nil {
		t.Fatal(err)
	}
	want := testsOf(local)
	if _, ok := want["app.Alpha::t0 [junit-b]"]; len(want) != 16 || !ok || len(local.Runs) != 10 {
		t.Fatalf("local: %d tests, %d runs", len(want), len(local.Runs))
	}
	for _, conc := range []int{1, 4} {
		h, _, err := GitHub(context.Background(), newClient(t, s), GitHubOptions{Repo: testRepo, Concurrency: conc, Workers: 2})
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, testsOf(h)); diff != "" || len(h.Runs) != len(local.Runs) {
			t.Errorf("concurrency %d: %d runs, local %d; tests (-local +GitHub):\n%s", conc, len(h.Runs), len(local.Runs), diff)
		}
	}
}

// testsOf is what a history says of each test: its place, its cells and
// its signatures with their counts and sample messages.
func testsOf(h *history.History) map[string]string {
	m := map[string]string{}
	for _, t := range h.Tests {
		s := fmt.Sprintf("%s:%d %v", t.File, t.Line, t.Cells)
		for _, g := range t.Sigs {
			s += fmt.Sprintf(" %s×%d %q", g.Hash[:15], g.Count, g.Message)
		}
		m[t.ID] = s
	}
	return m
}
