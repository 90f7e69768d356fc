package collect

import (
	"context"
	"testing"

	"github.com/flakegate/flakegate/pkg/ghapi/ghfake"
)

// TestZipNotBeginningWithPK: a valid zip archive whose bytes do not
// begin with a local file header (data before it, as a self-extracting
// archive or a zip written by a tool that prepends a header has) is read
// by archive/zip, and was read before 16ecbed; isZip now sends it to
// parseRaw, which leaves it out as "not a zip archive".
func TestZipNotBeginningWithPK(t *testing.T) {
	s, repo := newFake(t)
	run := repo.AddRun(ghfake.Run{CreatedAt: t0})
	z, err := ghfake.ZipFiles(map[string][]byte{"TEST.xml": junitDoc(0, []string{"one"})})
	if err != nil {
		t.Fatal(err)
	}
	repo.AddArtifact(ghfake.Artifact{RunID: run.ID, Name: "junit-prefixed", Zip: append([]byte("#!/bin/sh\nexit 0\n"), z...)})
	h, _, err := GitHub(context.Background(), newClient(t, s), GitHubOptions{Repo: testRepo, Match: matchJUnit})
	if err != nil {
		t.Fatal(err)
	}
	if len(h.Tests) != 1 {
		t.Errorf("tests %d, skipped %v: want the archive's one test", len(h.Tests), skippedMap(h))
	}
}
