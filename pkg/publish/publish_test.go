package publish

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/flakegate/flakegate/pkg/artifact"
)

// parseOutputs reads a GITHUB_OUTPUT file as the runner does.
func parseOutputs(t *testing.T, text string) map[string]string {
	t.Helper()
	out := map[string]string{}
	lines := strings.Split(text, "\n")
	for i := 0; i < len(lines); i++ {
		if lines[i] == "" {
			continue
		}
		name, delim, ok := strings.Cut(lines[i], "<<")
		if !ok {
			t.Fatalf("line %q is not NAME<<DELIM", lines[i])
		}
		var val []string
		for i++; i < len(lines) && lines[i] != delim; i++ {
			val = append(val, lines[i])
		}
		if i == len(lines) {
			t.Fatalf("no closing delimiter for %s", name)
		}
		out[name] = strings.Join(val, "\n")
	}
	return out
}

func TestWriteOutputs(t *testing.T) {
	path := filepath.Join(t.TempDir(), "output")
	hostile := "line1\nghadelimiter_0000\nEOF\nverdict<<X"
	if err := WriteOutputs(path, [][2]string{{"verdict", "block"}, {"report-json", hostile}}); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(path)
	got := parseOutputs(t, string(b))
	if got["verdict"] != "block" || got["report-json"] != hostile {
		t.Errorf("outputs = %q", got)
	}
	if err := WriteOutputs("", nil); err == nil {
		t.Error("no error without GITHUB_OUTPUT")
	}
}

func TestAppendSummaryCap(t *testing.T) {
	path := filepath.Join(t.TempDir(), "summary")
	os.WriteFile(path, []byte(strings.Repeat("x", 1000)+"\n"), 0o644)
	big := strings.Repeat("| row | data |\n", 100000)
	wrote, err := AppendSummary(path, big)
	if err != nil {
		t.Fatal(err)
	}
	fi, _ := os.Stat(path)
	if fi.Size() > MaxSummaryBytes || int(fi.Size()) != 1001+len(wrote) {
		t.Errorf("summary is %d bytes (wrote %d), cap %d", fi.Size(), len(wrote), MaxSummaryBytes)
	}
	b, _ := os.ReadFile(path)
	if string(b[1001:]) != wrote {
		t.Error("AppendSummary does not return what it wrote")
	}
	if !strings.HasSuffix(string(b), "in the report artifact.\n") {
		t.Error("cut summary lacks the note")
	}
}

func TestAnnotationsCapsAndEscaping(t *testing.T) {
	var buf bytes.Buffer
	l := NewLog(&buf, func(string) string { return "" })
	l.Mask("s3cr3t\nline2")
	for i := 0; i < 15; i++ {
		l.Annotate(Annotation{Level: "warning", Title: "t: a, b", File: "tests/x.py", Line: 3, Message: "50% done\nnext"})
	}
	for i := 0; i < 45; i++ {
		l.Annotate(Annotation{Level: []string{"notice", "error"}[i%2], Message: "m"})
	}
	out := buf.String()
	if n := strings.Count(out, "::warning "); n != 10 {
		t.Errorf("%d warnings printed, want 10", n)
	}
	if n := len(regexp.MustCompile(`(?m)^::(warning|notice|error)`).FindAllString(out, -1)); n != 30 {
		t.Errorf("%d annotations printed, want 30 (10 per kind)", n)
	}
	if len(l.Overflow) != 30 {
		t.Errorf("overflow = %d, want 30", len(l.Overflow))
	}
	for _, want := range []string{"::add-mask::s3cr3t", "::add-mask::line2", "title=t%3A a%2C b", "::50%25 done%0Anext"} {
		if !strings.Contains(out, want) {
			t.Errorf("log lacks %q:\n%s", want, out[:min(len(out), 600)])
		}
	}
}

// takenNames is an Uploader whose names are taken after first use, as the
// artifact service's are within a workflow run.
type takenNames map[string]bool

func (t takenNames) Upload(_ context.Context, name string, _ map[string][]byte, _ artifact.UploadOptions) (*artifact.Result, error) {
	if t[name] {
		return nil, &artifact.TwirpError{StatusCode: 409, Code: "already_exists", Msg: "an artifact with this name already exists on the workflow run"}
	}
	t[name] = true
	return &artifact.Result{Name: name}, nil
}

// TestUploadNames: each name in turn, then the last with -2 … -5, then
// the service's error.
func TestUploadNames(t *testing.T) {
	u := takenNames{}
	var got []string
	var err error
	for range 8 {
		var res *artifact.Result
		if res, err = Upload(context.Background(), u, ArtifactNames("r", 3), nil, 0); err != nil {
			break
		}
		got = append(got, res.Name)
	}
	want := []string{"r", "r-attempt-3", "r-attempt-3-2", "r-attempt-3-3", "r-attempt-3-4", "r-attempt-3-5"}
	if diff := cmp.Diff(want, got); diff != "" || err == nil || !strings.Contains(err.Error(), "already exists") {
		t.Errorf("names (-want +got):\n%s\nthen %v", diff, err)
	}
	if got := ArtifactNames("r", 1); !cmp.Equal(got, []string{"r"}) {
		t.Errorf("first attempt: %v", got)
	}
}
