package action

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/flakegate/flakegate/pkg/ghapi/ghfake"
)

// gemini is a real httptest server answering generateContent with reply.
type gemini struct {
	*httptest.Server
	mu    sync.Mutex
	calls int
}

func newGemini(t *testing.T, reply string) *gemini {
	g := &gemini{}
	g.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		g.mu.Lock()
		g.calls++
		g.mu.Unlock()
		b, _ := json.Marshal(map[string]any{"candidates": []any{map[string]any{
			"content": map[string]any{"role": "model", "parts": []any{map[string]any{"text": reply}}}, "finishReason": "STOP"}}})
		w.Header().Set("Content-Type", "application/json")
		w.Write(b)
	}))
	t.Cleanup(g.Close)
	return g
}

// TestReportWithoutFlakyTestsAsksNoAI: a weekly report with no flaky test
// makes no (paid) Gemini call and publishes no analysis of nothing; the log
// says why.
func TestReportWithoutFlakyTestsAsksNoAI(t *testing.T) {
	gem := newGemini(t, `{"summary":"No tests are flaky.","root_causes":[],"recommendations":[]}`)
	s := ghfake.New(t)
	s.Repo(repoName)
	r := newRunner(t, s, 1, "workflow_dispatch", map[string]any{"repository": map[string]any{"full_name": repoName}},
		map[string]string{"mode": "report", "results": "history/*.xml", "upload-artifact": "false", "gemini-api-key": "AIzaTESTKEY0123456789"})
	r.env["GOOGLE_GEMINI_BASE_URL"] = gem.URL
	dir := filepath.Join(r.env["GITHUB_WORKSPACE"], "history")
	os.MkdirAll(dir, 0o755)
	for i := range 8 {
		doc := fmt.Sprintf(`<testsuite name="s"><properties><property name="commit_sha" value="%040x"/><property name="run_id" value="%d"/></properties>`+
			`<testcase classname="tests.test_a" name="test_one"/><testcase classname="tests.test_a" name="test_two"/></testsuite>`, i+1, 100+i)
		os.WriteFile(filepath.Join(dir, fmt.Sprintf("run-%d.xml", i)), []byte(doc), 0o644)
	}
	if code := r.run(); code != 0 || r.outputs()["flaky-count"] != "0" {
		t.Fatalf("exit %d, flaky-count %s\n%s", code, r.outputs()["flaky-count"], r.stdout.String())
	}
	if gem.calls != 0 || strings.Contains(r.summary(), "AI-generated") {
		t.Errorf("Gemini called %d times for a report with no flaky test", gem.calls)
	}
	if !strings.Contains(r.stdout.String(), "no flaky test to explain; Gemini is not called") {
		t.Errorf("the log does not say why there is no AI section:\n%s", r.stdout.String())
	}
}

// TestAIOffIsSaid: a gate that blocks with no gemini-api-key (a fork's
// pull request gets no secrets) says why there is no AI section.
func TestAIOffIsSaid(t *testing.T) {
	s := ghfake.New(t)
	repo := gateRepo(t, s, "")
	g := gateOnce(t, s, repo, map[string]string{"gemini-api-key": ""}, blocking)
	if !strings.Contains(g.stdout.String(), "AI root causes: not asked for (gemini-api-key is empty") {
		t.Errorf("nothing says the AI section is off because gemini-api-key is empty:\n%s", g.stdout.String())
	}
}
