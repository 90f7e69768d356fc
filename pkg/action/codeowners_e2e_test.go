package action

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flakegate/flakegate/pkg/ghapi/ghfake"
)

// TestReportCodeownersLinkOut: a pull request commits .github/CODEOWNERS as
// a symbolic link to the checkout's .git/config, where actions/checkout
// keeps the token, and names a test's file so that the token's header would
// be its "owners". The link is not followed: no output carries the
// credentials, and a warning says why owners are left out.
func TestReportCodeownersLinkOut(t *testing.T) {
	s := newFake(t)
	repo := gateRepo(t, s, "")
	self := repo.AddRun(ghfake.Run{Workflow: "flakegate.yml", Event: "pull_request", HeadSHA: headSHA, CreatedAt: now})
	r := newRunner(t, s, self.ID, "pull_request", prPayload(repoName), map[string]string{
		"mode": "report", "results": "results/*.xml", "upload-artifact": "false", "min-commits": "2"})
	ws := r.env["GITHUB_WORKSPACE"]
	os.MkdirAll(filepath.Join(ws, ".git"), 0o755)
	os.WriteFile(filepath.Join(ws, ".git", "config"), []byte("[http \"https://github.com/\"]\n\textraheader = AUTHORIZATION: basic eC1hY2Nlc3MtdG9rZW46Z2hzX1NFQ1JFVFRPS0VO\n"), 0o644)
	os.MkdirAll(filepath.Join(ws, ".github"), 0o755)
	target := "../.git/config"
	if err := os.Symlink(target, filepath.Join(ws, ".github", "CODEOWNERS")); err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(filepath.Join(ws, "results"), 0o755)
	for c := 0; c < 8; c++ {
		for run := 0; run < 2; run++ {
			fail := ""
			if run == 0 && c%2 == 0 {
				fail = `<failure message="boom"/>`
			}
			var b strings.Builder
			fmt.Fprintf(&b, `<testsuite name="s"><properties><property name="commit_sha" value="%s"/><property name="run_id" value="%d"/></properties>`, ghfake.SHA(fmt.Sprint("c", c)), 500+c)
			for i := 0; i < 10; i++ {
				fmt.Fprintf(&b, `<testcase classname="ok" name="t%d"/>`, i)
			}
			fmt.Fprintf(&b, `<testcase classname="x" name="flaky" file="extraheader/test_x.py">%s</testcase></testsuite>`, fail)
			os.WriteFile(filepath.Join(ws, "results", fmt.Sprintf("c%d-r%d.xml", c, run)), []byte(b.String()), 0o644)
		}
	}
	if code := r.run(); code != 0 {
		t.Fatalf("exit %d\n%s", code, r.stdout.String())
	}
	if log := r.stdout.String(); !strings.Contains(log, "::warning") || !strings.Contains(log, "a symbolic link: not followed") {
		t.Errorf("no warning that CODEOWNERS was refused:\n%s", log)
	}
	sum := r.summary()
	js, _ := os.ReadFile(r.file("report-json"))
	comments := repo.Comments(42)
	for _, where := range []struct{ name, text string }{{"job summary", sum}, {"report.json", string(js)}, {"PR comment", func() string {
		if len(comments) > 0 {
			return comments[0].Body
		}
		return ""
	}()}} {
		if i := strings.Index(where.text, "eC1hY2Nlc3M"); i >= 0 {
			lo := strings.LastIndex(where.text[:i], "\n")
			t.Errorf("%s carries the checkout's credentials: %s", where.name, where.text[lo+1:i+60])
		}
	}
}
