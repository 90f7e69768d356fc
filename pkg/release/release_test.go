package release

import (
	"strings"
	"testing"
)

const mainYML = "name: flakegate\ninputs:\n  mode:\n    default: auto\nruns:\n  using: docker\n  image: Dockerfile\n"

var good = Ref{Owner: "flakegate", Version: "v1.2.3", Digest: "sha256:" + strings.Repeat("ab", 32)}

func TestPin(t *testing.T) {
	out, err := Pin([]byte(mainYML), good)
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Replace(mainYML, "image: Dockerfile", "image: docker://ghcr.io/flakegate/flakegate:v1.2.3@sha256:"+strings.Repeat("ab", 32), 1)
	if string(out) != want {
		t.Errorf("Pin:\n%s\nwant\n%s", out, want)
	}
	img, err := Image(out)
	if err != nil {
		t.Fatal(err)
	}
	ref, onMain, err := Parse(img)
	if err != nil || onMain || ref != good {
		t.Errorf("Parse(%q) = %+v, %v, %v", img, ref, onMain, err)
	}
	if _, err := Pin(out, good); err == nil {
		t.Error("pinning a pinned action.yml: no error")
	}
}

func TestPinRefuses(t *testing.T) {
	for _, tc := range []struct {
		name string
		yml  string
		ref  Ref
	}{
		{"no v", mainYML, Ref{"flakegate", "1.2.3", good.Digest}},
		{"pre-release", mainYML, Ref{"flakegate", "v1.2.3-rc.1", good.Digest}},
		{"upper-case owner", mainYML, Ref{"FlakeGate", "v1.2.3", good.Digest}},
		{"short digest", mainYML, Ref{"flakegate", "v1.2.3", "sha256:abc"}},
		{"no image line", "runs:\n  using: docker\n", good},
		{"two image lines", mainYML + "  image: Dockerfile\n", good},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if out, err := Pin([]byte(tc.yml), tc.ref); err == nil {
				t.Errorf("no error; got\n%s", out)
			}
		})
	}
}

func TestParse(t *testing.T) {
	for _, bad := range []string{"docker://ghcr.io/flakegate/flakegate:v1", "docker://ghcr.io/flakegate/flakegate:v1.2.3",
		"docker://ghcr.io/flakegate/other:v1.2.3@" + good.Digest, "Dockerfile.release", ""} {
		if _, _, err := Parse(bad); err == nil {
			t.Errorf("Parse(%q): no error", bad)
		}
	}
}

func TestMajor(t *testing.T) {
	if m, err := Major("v12.0.3"); m != "v12" || err != nil {
		t.Errorf("Major = %q, %v", m, err)
	}
	if _, err := Major("v1.2"); err == nil {
		t.Error("Major(v1.2): no error")
	}
}
