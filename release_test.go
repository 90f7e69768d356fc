package main

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/flakegate/flakegate/pkg/release"
)

// TestReleaseActionImage: action.yml runs the Dockerfile (main) or a
// release image pinned by digest (a release tag). The release workflow
// runs this test on the tag's commit with FLAKEGATE_RELEASE_VERSION set,
// and then the pinned version must be that release.
func TestReleaseActionImage(t *testing.T) {
	b, err := os.ReadFile("action.yml")
	if err != nil {
		t.Fatal(err)
	}
	image, err := release.Image(b)
	if err != nil {
		t.Fatal(err)
	}
	ref, onMain, err := release.Parse(image)
	if err != nil {
		t.Fatal(err)
	}
	want := os.Getenv("FLAKEGATE_RELEASE_VERSION")
	switch {
	case want == "" && !onMain:
		t.Errorf("action.yml runs %s outside a release: main keeps image: %s (the release workflow pins the image on the tag's commit)", image, release.OnMain)
	case want != "" && onMain:
		t.Errorf("release %s: action.yml still builds the Dockerfile", want)
	case want != "" && ref.Version != want:
		t.Errorf("release %s: action.yml runs version %s", want, ref.Version)
	}
	var doc struct {
		Runs struct {
			Using string   `yaml:"using"`
			Image string   `yaml:"image"`
			Args  []string `yaml:"args"`
		} `yaml:"runs"`
	}
	if err := yaml.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Runs.Using != "docker" || doc.Runs.Image != image || len(doc.Runs.Args) != 0 {
		t.Errorf("action.yml runs = %+v; want using docker, the image line %q, no args (no args and GITHUB_ACTIONS=true run the action)", doc.Runs, image)
	}
}

// TestReleaseDockerfile: both bases pinned by digest, no USER (docker
// actions run as root), an exec-form entrypoint, and a build line that
// makes the static, reproducible binary stamped with the version.
func TestReleaseDockerfile(t *testing.T) {
	b, err := os.ReadFile("Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	var froms []string
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		switch strings.ToUpper(f[0]) {
		case "FROM":
			froms = append(froms, line)
		case "USER":
			t.Errorf("Dockerfile: %q: GitHub runs docker actions as the image's user and needs root", line)
		}
	}
	pinned := regexp.MustCompile(`^FROM (--platform=\$BUILDPLATFORM )?(golang:1\.26[.0-9]*-bookworm|gcr\.io/distroless/static-debian12)@sha256:[0-9a-f]{64}( AS [a-z]+)?$`)
	if len(froms) != 2 {
		t.Errorf("Dockerfile: %d FROM lines, want the Go build stage and the distroless stage", len(froms))
	}
	for _, f := range froms {
		if !pinned.MatchString(f) {
			t.Errorf("Dockerfile: %q is not a base pinned by digest", f)
		}
	}
	if !strings.Contains(string(b), "\nENTRYPOINT [\"/flakegate\"]\n") {
		t.Error(`Dockerfile: want ENTRYPOINT ["/flakegate"] (exec form: runs.args are not expanded by a shell)`)
	}
	d := readDockerBuild(t)
	if !slices.Contains(d.Env, "CGO_ENABLED=0") || !slices.Contains(d.Args, "-trimpath") {
		t.Errorf("Dockerfile build line %q: want CGO_ENABLED=0 and -trimpath", d.Line)
	}
	if got := dockerLdflags(t, d); got != "-s -w -X "+versionSymbol+"=$VERSION" {
		t.Errorf("Dockerfile -ldflags %q, want %q", got, "-s -w -X "+versionSymbol+"=$VERSION")
	}
}

func dockerLdflags(t *testing.T, d dockerBuild) string {
	t.Helper()
	for i, a := range d.Args {
		if a == "-ldflags" && i+1 < len(d.Args) {
			return d.Args[i+1]
		}
	}
	t.Fatalf("Dockerfile build line has no -ldflags: %q", d.Line)
	return ""
}

// TestReleaseWorkflow: release.yml does what the README promises, in an
// order that never tags a missing image: both platforms, SBOM and
// provenance, keyless signing, the image pinned into action.yml by the
// pin command and checked by TestReleaseActionImage before the tag, the
// major tag moved, and binaries built with the Dockerfile's flags.
func TestReleaseWorkflow(t *testing.T) {
	b, err := os.ReadFile(".github/workflows/release.yml")
	if err != nil {
		t.Fatal(err)
	}
	var wf struct {
		On   map[string]any `yaml:"on"`
		Jobs map[string]struct {
			Needs       any               `yaml:"needs"`
			Permissions map[string]string `yaml:"permissions"`
			Steps       []struct {
				Uses string            `yaml:"uses"`
				Run  string            `yaml:"run"`
				With map[string]string `yaml:"with"`
			} `yaml:"steps"`
		} `yaml:"jobs"`
	}
	if err := yaml.Unmarshal(b, &wf); err != nil {
		t.Fatal(err)
	}
	if _, ok := wf.On["workflow_dispatch"]; !ok {
		t.Error("release.yml: want workflow_dispatch with a version input")
	}
	job := func(name string) (runs string, uses []string, with map[string]string) {
		j, ok := wf.Jobs[name]
		if !ok {
			t.Fatalf("release.yml has no job %q", name)
		}
		with = map[string]string{}
		for _, s := range j.Steps {
			runs += s.Run + "\n"
			if s.Uses != "" {
				uses = append(uses, s.Uses)
				if !regexp.MustCompile(`@[0-9a-f]{40}$`).MatchString(s.Uses) {
					t.Errorf("release.yml job %s: %s is not pinned by commit SHA", name, s.Uses)
				}
			}
			for k, v := range s.With {
				with[k] = v
			}
		}
		return runs, uses, with
	}
	needs := func(name, want string) {
		if n := wf.Jobs[name].Needs; n != want {
			t.Errorf("release.yml job %s needs %v, want %s", name, n, want)
		}
	}
	perm := func(name string, want ...string) {
		for _, p := range want {
			k, v, _ := strings.Cut(p, ": ")
			if got := wf.Jobs[name].Permissions[k]; got != v {
				t.Errorf("release.yml job %s: permission %s is %q, want %q", name, k, got, v)
			}
		}
	}
	hasUse := func(uses []string, prefix string) bool {
		return slices.ContainsFunc(uses, func(u string) bool { return strings.HasPrefix(u, prefix) })
	}

	runs, uses, with := job("image")
	needs("image", "test")
	perm("image", "packages: write", "id-token: write", "attestations: write")
	if with["platforms"] != "linux/amd64,linux/arm64" || with["sbom"] != "true" || !strings.HasPrefix(with["provenance"], "mode=") ||
		with["push"] != "true" || with["build-args"] != "VERSION=${{ inputs.version }}" {
		t.Errorf("release.yml build-push-action inputs = %v", with)
	}
	if !hasUse(uses, "docker/build-push-action@") || !hasUse(uses, "actions/attest-build-provenance@") || !hasUse(uses, "sigstore/cosign-installer@") ||
		!strings.Contains(runs, `cosign sign --yes "$IMAGE@$DIGEST"`) {
		t.Errorf("release.yml image job: want build-push, a provenance attestation and cosign keyless signing by digest; uses %v", uses)
	}
	if !strings.Contains(runs, `image="ghcr.io/$owner/flakegate"`) || !strings.Contains(runs, `owner="${GITHUB_REPOSITORY_OWNER,,}"`) {
		t.Error("release.yml: the image must be ghcr.io/<lower-case owner>/flakegate, as release.Ref names it")
	}

	runs, _, _ = job("tag")
	needs("tag", "image")
	perm("tag", "contents: write")
	for _, want := range []string{
		`go run ./pkg/release/pin -owner "${GITHUB_REPOSITORY_OWNER,,}" -version "$VERSION" -digest "$DIGEST" action.yml`,
		`FLAKEGATE_RELEASE_VERSION="$VERSION" go test -count=1 -run 'TestRelease' .`,
		`git tag -a "$VERSION"`, `major="${VERSION%%.*}"`, `git push --force origin "refs/tags/$major"`,
	} {
		if !strings.Contains(runs, want) {
			t.Errorf("release.yml tag job lacks %q", want)
		}
	}
	if strings.Index(runs, "go run ./pkg/release/pin") > strings.Index(runs, "git push") {
		t.Error("release.yml pushes the tag before pinning the image")
	}

	runs, uses, _ = job("binaries")
	needs("binaries", "tag")
	perm("binaries", "contents: write", "id-token: write", "attestations: write")
	d := readDockerBuild(t)
	want := `CGO_ENABLED=0 GOOS="$os" GOARCH="$arch" go build -trimpath -ldflags "` + dockerLdflags(t, d) + `"`
	if !strings.Contains(runs, want) {
		t.Errorf("release.yml binaries are not built with the Dockerfile's flags: want %q in\n%s", want, runs)
	}
	if !hasUse(uses, "actions/attest-build-provenance@") || !strings.Contains(runs, `gh release create "$VERSION" --verify-tag`) {
		t.Error("release.yml binaries: want an attestation and the GitHub release from the tag")
	}
}
