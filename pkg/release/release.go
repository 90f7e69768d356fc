// Package release keeps action.yml's image line and the release version
// coherent. On main, action.yml builds the Dockerfile (`image: Dockerfile`);
// the commit a release tag names runs the image the release workflow
// published, pinned by digest:
//
//	image: docker://ghcr.io/OWNER/flakegate:vX.Y.Z@sha256:<64 hex digits>
//
// The release workflow writes that line with Pin (go run
// ./pkg/release/pin) on a commit made for the tag, after the image is
// pushed and signed, so a tag never names an image that does not exist, and
// a version tag never moves (the Go checksum database records the module at
// a version the first time anyone fetches it).
package release

import (
	"bytes"
	"fmt"
	"regexp"
	"strings"
)

// OnMain is the image line of action.yml on main.
const OnMain = "Dockerfile"

var (
	versionRE = regexp.MustCompile(`^v(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)$`)
	ownerRE   = regexp.MustCompile(`^[a-z0-9](?:[a-z0-9-]{0,38})$`)
	digestRE  = regexp.MustCompile(`^sha256:[0-9a-f]{64}$`)
	// pinnedRE is a release tag's image line.
	pinnedRE = regexp.MustCompile(`^docker://ghcr\.io/([a-z0-9][a-z0-9-]{0,38})/flakegate:(v[0-9]+\.[0-9]+\.[0-9]+)@(sha256:[0-9a-f]{64})$`)
	// imageLineRE finds runs.image: two spaces of indent under runs:.
	imageLineRE = regexp.MustCompile(`(?m)^  image: *(.*?) *$`)
)

// Ref is a published image: docker://ghcr.io/OWNER/flakegate:VERSION@DIGEST.
type Ref struct {
	Owner, Version, Digest string
}

func (r Ref) String() string {
	return fmt.Sprintf("docker://ghcr.io/%s/flakegate:%s@%s", r.Owner, r.Version, r.Digest)
}

// Validate names the part of r that is not acceptable.
func (r Ref) Validate() error {
	switch {
	case !ownerRE.MatchString(r.Owner):
		return fmt.Errorf("owner %q: want the repository owner in lower case (ghcr.io refuses upper case)", r.Owner)
	case !versionRE.MatchString(r.Version):
		return fmt.Errorf("version %q: want vMAJOR.MINOR.PATCH, such as v1.2.3", r.Version)
	case !digestRE.MatchString(r.Digest):
		return fmt.Errorf("digest %q: want sha256: and 64 lower-case hex digits, the image index digest build-push-action reports", r.Digest)
	}
	return nil
}

// Major is the moving major tag of a version: v1 for v1.2.3.
func Major(version string) (string, error) {
	if !versionRE.MatchString(version) {
		return "", fmt.Errorf("version %q: want vMAJOR.MINOR.PATCH, such as v1.2.3", version)
	}
	return version[:strings.IndexByte(version, '.')], nil
}

// Image returns action.yml's runs.image value.
func Image(actionYML []byte) (string, error) {
	m := imageLineRE.FindAllSubmatch(actionYML, -1)
	if len(m) != 1 {
		return "", fmt.Errorf("action.yml: want one `  image:` line under runs:, found %d", len(m))
	}
	return strings.Trim(string(m[0][1]), `'"`), nil
}

// Parse reads an image line: OnMain gives a zero Ref and true; a pinned
// release image gives its Ref; anything else is an error.
func Parse(image string) (Ref, bool, error) {
	if image == OnMain {
		return Ref{}, true, nil
	}
	m := pinnedRE.FindStringSubmatch(image)
	if m == nil {
		return Ref{}, false, fmt.Errorf("image %q: want %q (main) or docker://ghcr.io/OWNER/flakegate:vX.Y.Z@sha256:DIGEST (a release tag)", image, OnMain)
	}
	r := Ref{Owner: m[1], Version: m[2], Digest: m[3]}
	return r, false, r.Validate()
}

// Pin returns actionYML with its image line replaced by ref. The file must
// be main's (image: Dockerfile): pinning twice is refused.
func Pin(actionYML []byte, ref Ref) ([]byte, error) {
	if err := ref.Validate(); err != nil {
		return nil, err
	}
	image, err := Image(actionYML)
	if err != nil {
		return nil, err
	}
	if image != OnMain {
		return nil, fmt.Errorf("action.yml runs image %q, not %q: pin main's action.yml", image, OnMain)
	}
	out := imageLineRE.ReplaceAllLiteral(actionYML, []byte("  image: "+ref.String()))
	if bytes.Equal(out, actionYML) {
		return nil, fmt.Errorf("action.yml: the image line was not replaced")
	}
	return out, nil
}
