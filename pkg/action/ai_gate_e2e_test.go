package action

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/flakegate/flakegate/pkg/ghapi/ghfake"
)

// TestGateAIFramesBlockingTests: gate mode asks Gemini about the tests that
// block the pull request as such, each with the gate's classification and
// its head counts, not as flaky tests with a score of 0. The fake is a real
// server answering generateContent.
func TestGateAIFramesBlockingTests(t *testing.T) {
	for _, tc := range []struct {
		name      string
		headFails map[string]int
		want      map[string]any // the blocking test in the data block
	}{
		{"regression", map[string]int{"test_login": 5},
			map[string]any{"name": "tests.test_app::test_login", "classification": "regression", "head_runs": 5.0, "head_failures": 5.0}},
		{"patch-induced flake", map[string]int{"test_login": 3},
			map[string]any{"name": "tests.test_app::test_login", "classification": "patch-induced flake", "head_runs": 5.0, "head_failures": 3.0}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var mu sync.Mutex
			var bodies [][]byte
			gem := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				b, _ := io.ReadAll(r.Body)
				mu.Lock()
				bodies = append(bodies, b)
				mu.Unlock()
				reply, _ := json.Marshal(map[string]any{"candidates": []any{map[string]any{"finishReason": "STOP",
					"content": map[string]any{"role": "model", "parts": []any{map[string]any{"text": `{"summary":"s","root_causes":[],"recommendations":[]}`}}}}}})
				w.Header().Set("Content-Type", "application/json")
				w.Write(reply)
			}))
			defer gem.Close()

			s := ghfake.New(t)
			repo := gateRepo(t, s, "")
			g := gateOnce(t, s, repo, map[string]string{"gemini-api-key": "AIzaTESTKEY0123456789"}, tc.headFails, "GOOGLE_GEMINI_BASE_URL", gem.URL)
			if v := g.outputs()["verdict"]; v != "block" {
				t.Fatalf("verdict %q\n%s", v, g.stdout.String())
			}
			if len(bodies) != 1 {
				t.Fatalf("Gemini was called %d times, want 1", len(bodies))
			}
			var body struct {
				Contents []struct {
					Parts []struct{ Text string } `json:"parts"`
				} `json:"contents"`
				SystemInstruction struct {
					Parts []struct{ Text string } `json:"parts"`
				} `json:"systemInstruction"`
			}
			if err := json.Unmarshal(bodies[0], &body); err != nil {
				t.Fatal(err)
			}
			prompt := body.Contents[0].Parts[0].Text
			if !strings.Contains(prompt, "tests that block this pull request") || strings.Contains(prompt, "root causes of the flaky tests") {
				t.Errorf("prompt:\n%s", prompt)
			}
			if si := body.SystemInstruction.Parts[0].Text; !strings.Contains(si, "tests that block a pull request") {
				t.Errorf("systemInstruction:\n%s", si)
			}
			_, rest, _ := strings.Cut(prompt, "<<<FLAKEGATE-DATA\n")
			block, _, _ := strings.Cut(rest, "\nFLAKEGATE-DATA>>>")
			var data struct {
				BlockingCount *int             `json:"blocking_count"`
				FlakyCount    *int             `json:"flaky_count"`
				Tests         []map[string]any `json:"tests"`
			}
			if err := json.Unmarshal([]byte(block), &data); err != nil {
				t.Fatalf("data block: %v\n%s", err, block)
			}
			if data.FlakyCount != nil || data.BlockingCount == nil || *data.BlockingCount != 1 || len(data.Tests) != 1 {
				t.Fatalf("data block: %s", block)
			}
			got := data.Tests[0]
			delete(got, "messages") // sent as before (the head failures' messages)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("blocking test sent (-want +got):\n%s", diff)
			}
		})
	}
}
