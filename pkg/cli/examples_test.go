package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/flakegate/flakegate/pkg/model"
)

// TestExampleMatrixFeedsTheAction runs the `flakegate matrix` line of every
// quickstart that has one, as written (its flags, its --junit and
// --results paths), on a repository whose head breaks a test, with the
// test command after "--" replaced by one that writes that JUnit file. The
// files it keeps must be the ones the flakegate step reads (its
// base-results and head-results globs, from the checkout): the same job's,
// or, where the job uploads them (fork-safe-tests.yml), the step of the
// job that downloads that artifact, where actions/upload-artifact puts
// them (under the download path, relative to the uploaded files' common
// directory). Five a side, and `flakegate gate` on those globs must block
// as matrix did.
func TestExampleMatrixFeedsTheAction(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	files, _ := filepath.Glob(filepath.Join("..", "..", "examples", "*.yml"))
	wd, _ := os.Getwd()
	t.Cleanup(func() { os.Chdir(wd) })
	type step struct {
		Uses string            `yaml:"uses"`
		With map[string]string `yaml:"with"`
		Run  string            `yaml:"run"`
	}
	type job struct {
		name  string
		steps []step
	}
	var jobs []job
	for _, file := range files {
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		var wf struct {
			Jobs map[string]struct {
				Steps []step `yaml:"steps"`
			} `yaml:"jobs"`
		}
		if err := yaml.Unmarshal(b, &wf); err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		for name, j := range wf.Jobs {
			jobs = append(jobs, job{filepath.Base(file) + "/" + name, j.Steps})
		}
	}
	// inputs is a job's flakegate step's inputs, and where the job
	// downloads the artifact named name ("" for none).
	inputs := func(steps []step, name string) (with map[string]string, dir string) {
		for _, st := range steps {
			if strings.HasPrefix(st.Uses, "actions/download-artifact@") && st.With["name"] == name {
				dir = st.With["path"]
			}
			if strings.HasPrefix(st.Uses, "flakegate/flakegate@") {
				with = st.With
			}
		}
		return with, dir
	}
	seen := 0
	for _, j := range jobs {
		var line, upload, uploaded string
		for _, st := range j.steps {
			if i := strings.Index(st.Run, "flakegate matrix "); i >= 0 {
				line = strings.ReplaceAll(st.Run[i+len("flakegate "):], "\\\n", " ")
				line, _, _ = strings.Cut(line, "\n")
			}
			if strings.HasPrefix(st.Uses, "actions/upload-artifact@") {
				upload, uploaded = st.With["name"], st.With["path"]
			}
		}
		if line == "" {
			continue
		}
		seen++
		name := j.name
		with, _ := inputs(j.steps, "")
		if with == nil && upload != "" {
			for _, o := range jobs {
				if w, dir := inputs(o.steps, upload); w != nil && dir != "" {
					// The uploaded files' common directory lands at dir.
					with = map[string]string{}
					for _, in := range []string{"base-results", "head-results"} {
						rel, err := filepath.Rel(dir, w[in])
						if err != nil || strings.HasPrefix(rel, "..") {
							t.Fatalf("%s: %s %q is not under the download path %q", o.name, in, w[in], dir)
						}
						with[in] = filepath.Join(uploadRoot(uploaded), rel)
					}
					name += " -> " + o.name
				}
			}
		}
		if with["base-results"] == "" || with["head-results"] == "" {
			t.Errorf("%s: no flakegate step reads the matrix step's files: %v", name, with)
			continue
		}
		args, _, ok := strings.Cut(line, " -- ")
		if !ok {
			t.Fatalf("%s: no command after --: %s", name, line)
		}
		fields := strings.Fields(args)
		junit := ""
		for i, f := range fields {
			if f == "--junit" && i+1 < len(fields) {
				junit = fields[i+1]
			}
		}
		repo := exampleRepo(t, junit)
		os.Chdir(repo.dir)
		for i, f := range fields {
			fields[i] = strings.NewReplacer(`"$BASE_SHA"`, repo.base, `"origin/$BASE_REF"`, "origin/main", `"$HEAD_SHA"`, repo.head).Replace(f)
		}
		m := run(t, fixedClock, append(fields, "--", "sh", "run.sh")...)
		// The flakegate step gives the verdict, with the base branch's
		// history: matrix blocks without failing its step.
		if m.code != 0 || !strings.Contains(m.stdout, "verdict: block") {
			t.Errorf("%s: matrix %v: exit %d, want 0 and a block (the action decides)\n%s%s", name, fields, m.code, m.stdout, m.stderr)
			continue
		}
		for _, in := range []string{"base-results", "head-results"} {
			got, _ := filepath.Glob(with[in])
			if len(got) != 5 {
				t.Errorf("%s: %s %q matches %d files of matrix's, want 5", name, in, with[in], len(got))
			}
		}
		// matrix's record of the commits run lands beside the base
		// files, where the action looks for it: uploaded too, when the
		// files travel as an artifact.
		manifest := filepath.Join(filepath.Dir(with["base-results"]), model.MatrixManifestFile)
		if _, err := os.Stat(manifest); err != nil {
			t.Errorf("%s: %v", name, err)
		}
		if uploaded != "" && uploadRoot(uploaded) != uploaded {
			if ok, _ := filepath.Match(uploaded, filepath.Join(filepath.Dir(uploaded), model.MatrixManifestFile)); !ok {
				t.Errorf("%s: the upload's path %q leaves out %s", name, uploaded, model.MatrixManifestFile)
			}
		}
		g := run(t, fixedClock, "gate", "--base", with["base-results"], "--head", with["head-results"])
		if g.code != 1 || !strings.Contains(g.stdout, "c::login") || strings.Contains(g.stdout, "added_") || strings.Contains(g.stdout, "c::old") {
			t.Errorf("%s: gate on the step's globs: exit %d, want 1 blocking c::login only\n%s%s", name, g.code, g.stdout, g.stderr)
		}
	}
	if seen < 3 {
		t.Errorf("%d quickstart jobs run flakegate matrix, want 3 (pr-gate, required-check, fork-safe-tests)", seen)
	}
}

// uploadRoot is the directory actions/upload-artifact keeps paths
// relative to: a directory uploaded, or the one a glob's files are in.
func uploadRoot(path string) string {
	if strings.ContainsAny(path, "*?[") {
		return filepath.Dir(path)
	}
	return path
}

type example struct{ dir, base, head string }

// exampleRepo is a checkout whose run.sh writes JUnit to junit, a test
// case per file under tests/ (failing when the file says so), on a pull
// request's history: the branch breaks c::login; main then adds a test,
// the pull request is opened (base is main's tip then, as its base.sha
// stays), main removes c::old, the branch takes main in ("Update branch"),
// and main adds another test. Only c::login is the patch's.
func exampleRepo(t *testing.T, junit string) example {
	t.Helper()
	dir := t.TempDir()
	script := "#!/bin/sh\nmkdir -p \"$(dirname '" + junit + "')\"\n{ printf '<testsuite name=\"s\">'; for f in tests/*; do n=$(basename \"$f\"); " +
		"if grep -q fail \"$f\"; then printf '<testcase classname=\"c\" name=\"%s\"><failure message=\"KeyError\"/></testcase>' \"$n\"; " +
		"else printf '<testcase classname=\"c\" name=\"%s\"/>' \"$n\"; fi; done; printf '</testsuite>'; } > '" + junit + "'\n"
	os.WriteFile(filepath.Join(dir, "run.sh"), []byte(script), 0o755)
	os.MkdirAll(filepath.Join(dir, "tests"), 0o755)
	test := func(name, text string) {
		os.WriteFile(filepath.Join(dir, "tests", name), []byte(text+"\n"), 0o644)
	}
	for _, n := range []string{"stable", "login", "old"} {
		test(n, "pass")
	}
	git(t, dir, "init", "-q", "-b", "main")
	git(t, dir, "add", ".")
	git(t, dir, "commit", "-q", "-m", "base")
	git(t, dir, "checkout", "-q", "-b", "patch")
	test("login", "fail")
	git(t, dir, "commit", "-q", "-am", "break login")
	git(t, dir, "checkout", "-q", "main")
	test("added_on_main", "pass")
	git(t, dir, "add", ".")
	git(t, dir, "commit", "-q", "-m", "main adds a test")
	opened := revParse(t, dir)
	git(t, dir, "rm", "-q", "tests/old")
	git(t, dir, "commit", "-q", "-m", "main removes a test")
	git(t, dir, "checkout", "-q", "patch")
	git(t, dir, "merge", "-q", "--no-edit", "main")
	head := revParse(t, dir)
	git(t, dir, "checkout", "-q", "main")
	test("added_later", "pass")
	git(t, dir, "add", ".")
	git(t, dir, "commit", "-q", "-m", "main adds another test")
	git(t, dir, "update-ref", "refs/remotes/origin/main", "main")
	git(t, dir, "checkout", "-q", "--detach", head)
	return example{dir: dir, base: opened, head: head}
}

func revParse(t *testing.T, dir string) string {
	t.Helper()
	out, err := exec.Command("git", "-C", dir, "rev-parse", "HEAD").Output()
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(out))
}
