package collect

import (
	"bytes"
	"context"
	"io"
	"testing"
	"time"

	"github.com/flakegate/flakegate/pkg/ghapi/ghfake"
	"github.com/flakegate/flakegate/pkg/history"
	"github.com/flakegate/flakegate/pkg/synth"
)

// Benchmark setup, as in the README: 200 runs with one artifact each, a zip
// of one realistic JUnit file of 200 testcases (synth: pytest-style names,
// file and line attributes, failure messages for the flaky tests), and
// 100 ms of latency on every request to the API and the blob host.
const (
	benchRuns    = 200
	benchTests   = 200
	benchLatency = 100 * time.Millisecond
)

// benchDocs generates one JUnit document per run.
func benchDocs(b *testing.B, runs int) [][]byte {
	spec := synth.Spec{Commits: runs, RunsPerCommit: 1, Tests: benchTests, Seed: 7, Start: t0,
		Behaviors: map[int]synth.Behavior{3: {Kind: synth.Flaky, P: 0.2}, 40: {Kind: synth.Flaky, P: 0.05}, 90: {Kind: synth.Retried, P: 0.3}}}
	var docs [][]byte
	err := spec.Generate(func(synth.Run) (io.Writer, func() error, error) {
		var buf bytes.Buffer
		return &buf, func() error { docs = append(docs, buf.Bytes()); return nil }, nil
	})
	if err != nil {
		b.Fatal(err)
	}
	if len(docs) != runs {
		b.Fatalf("%d documents for %d runs", len(docs), runs)
	}
	return docs
}

// addBenchRuns adds runs from..from+n-1 with their artifacts.
func addBenchRuns(repo *ghfake.Repo, docs [][]byte, from int) {
	for i, doc := range docs {
		r := repo.AddRun(ghfake.Run{HeadSHA: synth.SHA(from + i), CreatedAt: t0.Add(time.Duration(from+i) * time.Minute)})
		repo.AddArtifact(ghfake.Artifact{RunID: r.ID, Name: "junit-ubuntu", Files: map[string][]byte{"reports/TEST-suite.xml": doc}})
	}
}

func benchCollect(b *testing.B, concurrency int) {
	s, repo := newFake(b)
	addBenchRuns(repo, benchDocs(b, benchRuns), 0)
	s.SetRateLimit(1_000_000, t0.Add(48*time.Hour))
	s.SetLatency(benchLatency)
	c := newClient(b, s)
	o := GitHubOptions{Repo: testRepo, Match: matchJUnit, Concurrency: concurrency}
	var st Stats
	for b.Loop() {
		h, stats, err := GitHub(context.Background(), c, o)
		if err != nil || len(h.Runs) != benchRuns || len(h.Tests) != benchTests || len(h.Skipped) != 0 {
			b.Fatalf("%v: %d runs, %d tests, skipped %v", err, len(h.Runs), len(h.Tests), h.Skipped)
		}
		st = stats
	}
	b.SetBytes(st.Bytes)
	b.ReportMetric(float64(st.Requests), "api-req/op")
	b.ReportMetric(float64(st.PeakHeld)/1024, "peak-held-KiB")
}

// BenchmarkCollectConcurrent collects with the default concurrency (8).
func BenchmarkCollectConcurrent(b *testing.B) { benchCollect(b, 0) }

// BenchmarkCollectSequential collects one request at a time.
func BenchmarkCollectSequential(b *testing.B) { benchCollect(b, 1) }

// BenchmarkCollectIncremental is the weekly report's second collection:
// Known holds the first collection's runs, and 20 runs were added since.
// Only the new runs' artifacts are listed and downloaded.
func BenchmarkCollectIncremental(b *testing.B) {
	const fresh = 20
	s, repo := newFake(b)
	docs := benchDocs(b, benchRuns+fresh)
	addBenchRuns(repo, docs[:benchRuns], 0)
	s.SetRateLimit(1_000_000, t0.Add(48*time.Hour))
	c := newClient(b, s)
	o := GitHubOptions{Repo: testRepo, Match: matchJUnit}
	first, _, err := GitHub(context.Background(), c, o)
	if err != nil || len(first.Runs) != benchRuns {
		b.Fatalf("first collection: %v, %d runs", err, len(first.Runs))
	}
	addBenchRuns(repo, docs[benchRuns:], benchRuns)
	s.SetLatency(benchLatency)
	o.Known = first.Keys()
	var st Stats
	for b.Loop() {
		blob := s.RequestCount(ghfake.HostBlob)
		h, stats, err := GitHub(context.Background(), c, o)
		if err != nil || len(h.Runs) != fresh || stats.Downloaded != fresh || stats.RunsKnown != benchRuns {
			b.Fatalf("%v: %d runs, %+v", err, len(h.Runs), stats)
		}
		if got := s.RequestCount(ghfake.HostBlob) - blob; got != fresh {
			b.Fatalf("%d zips fetched, want %d", got, fresh)
		}
		st = stats
	}
	b.ReportMetric(float64(st.Requests), "api-req/op")
	b.ReportMetric(float64(st.Downloaded), "downloads/op")
	// The carried history and the new runs make the whole history.
	h, _, err := GitHub(context.Background(), c, o)
	if err != nil {
		b.Fatal(err)
	}
	if all, err := history.Combine(first, h, time.Time{}); err != nil || len(all.Runs) != benchRuns+fresh {
		b.Fatalf("combined: %v", err)
	}
}
