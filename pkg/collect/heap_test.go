package collect

import (
	"archive/zip"
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/flakegate/flakegate/pkg/ghapi/ghfake"
)

// bigArtifactMB sets the size of each of the eight large artifacts of
// TestGitHubLargeArtifactsHeap. The case is 400:
//
//	go test ./pkg/collect/ -run LargeArtifactsHeap -v -big-artifact-mb 400
var bigArtifactMB = flag.Int("big-artifact-mb", 0, "size in MB of each large artifact in TestGitHubLargeArtifactsHeap (default 64, 16 with -short)")

// heapBudget400 is the target: eight concurrent 400 MB artifacts
// peak under 256 MiB of heap. Smaller artifacts get a proportional bound.
const heapBudget400 = 256 << 20

// bigArtifactBlob is a Playwright-like artifact: one large stored entry that
// is not JUnit (a trace or video) and a small JUnit report. It is written
// on demand from a pattern, so that neither the fake nor the test holds it.
func bigArtifactBlob(t testing.TB, size int64) *ghfake.Blob {
	t.Helper()
	chunk := make([]byte, 1<<16)
	for i := range chunk {
		chunk[i] = byte(i*7 + i>>8)
	}
	doc := junitDoc(0, []string{"login", "!checkout", "search"})
	blob, err := ghfake.NewBlob(func(w io.Writer) error {
		zw := zip.NewWriter(w)
		big, err := zw.CreateHeader(&zip.FileHeader{Name: "test-results/checkout/trace.zip", Method: zip.Store})
		if err != nil {
			return err
		}
		for left := size; left > 0; left -= int64(len(chunk)) {
			if _, err := big.Write(chunk[:min(left, int64(len(chunk)))]); err != nil {
				return err
			}
		}
		x, err := zw.CreateHeader(&zip.FileHeader{Name: "junit/results.xml", Method: zip.Deflate})
		if err != nil {
			return err
		}
		if _, err := x.Write(doc); err != nil {
			return err
		}
		return zw.Close()
	})
	if err != nil {
		t.Fatal(err)
	}
	return blob
}

// heapPeak samples the heap in use until stop is called, and returns the
// highest value seen.
func heapPeak() (stop func() uint64) {
	var (
		peak atomic.Uint64
		done = make(chan struct{})
		wg   sync.WaitGroup
	)
	sample := func() {
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		if m.HeapInuse > peak.Load() {
			peak.Store(m.HeapInuse)
		}
	}
	sample()
	wg.Go(func() {
		tick := time.NewTicker(2 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
				sample()
			}
		}
	})
	return func() uint64 {
		close(done)
		wg.Wait()
		sample()
		return peak.Load()
	}
}

// collectLarge serves eight artifacts of mb megabytes at once and collects
// them with the default concurrency; it returns the peak heap in use.
func collectLarge(t testing.TB, mb int, tempDir string) (uint64, Stats) {
	s, repo := newFake(t)
	s.SetRateLimit(1_000_000, t0.Add(48*time.Hour))
	blob := bigArtifactBlob(t, int64(mb)<<20)
	for i := range DefaultConcurrency {
		r := repo.AddRun(ghfake.Run{HeadSHA: ghfake.SHA(fmt.Sprint(i)), CreatedAt: t0.Add(time.Duration(i) * time.Minute)})
		repo.AddArtifact(ghfake.Artifact{RunID: r.ID, Name: "junit-playwright", Blob: blob})
	}
	c := newClient(t, s)
	runtime.GC()
	stop := heapPeak()
	h, st, err := GitHub(context.Background(), c, GitHubOptions{Repo: testRepo, Match: matchJUnit, TempDir: tempDir})
	peak := stop()
	if err != nil {
		t.Fatal(err)
	}
	if len(h.Runs) != DefaultConcurrency || st.Downloaded != DefaultConcurrency || len(h.Skipped) != 0 || st.Parsed != DefaultConcurrency || st.Ignored != DefaultConcurrency {
		t.Fatalf("%d runs, skipped %v, stats %+v; want %d runs, each with one document and one entry ignored",
			len(h.Runs), h.Skipped, st, DefaultConcurrency)
	}
	return peak, st
}

// TestGitHubLargeArtifactsHeap collects eight large artifacts at once (the
// default concurrency) and bounds the heap: the zips go to temporary
// files, not memory, and their large entries are never read.
func TestGitHubLargeArtifactsHeap(t *testing.T) {
	mb := *bigArtifactMB
	if mb <= 0 {
		mb = 64
		if testing.Short() {
			mb = 16
		}
	}
	dir := t.TempDir()
	peak, st := collectLarge(t, mb, dir)
	budget := max(uint64(heapBudget400)*uint64(mb)/400, 32<<20)
	t.Logf("%d × %d MB artifacts: peak heap in use %.1f MiB (budget %.0f MiB); %.0f MiB downloaded; %.1f MiB held in memory at most",
		DefaultConcurrency, mb, float64(peak)/(1<<20), float64(budget)/(1<<20), float64(st.Bytes)/(1<<20), float64(st.PeakHeld)/(1<<20))
	if peak > budget {
		t.Errorf("peak heap in use %d MiB, over the budget of %d MiB", peak>>20, budget>>20)
	}
	assertEmptyDir(t, dir)
}

// BenchmarkCollectLargeArtifacts is the case: eight 400 MB
// artifacts collected at once.
//
//	go test ./pkg/collect/ -run '^$' -bench LargeArtifacts -benchtime 1x
func BenchmarkCollectLargeArtifacts(b *testing.B) {
	var peak uint64
	for b.Loop() {
		p, st := collectLarge(b, 400, b.TempDir())
		peak = max(peak, p)
		b.SetBytes(st.Bytes)
	}
	b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MiB")
}

// assertEmptyDir fails t if dir holds anything: every temporary file must
// be gone.
func assertEmptyDir(t testing.TB, dir string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		t.Errorf("left behind in the temporary directory: %s", e.Name())
	}
}
