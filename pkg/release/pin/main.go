// Command pin writes the release image into action.yml, for the release
// workflow:
//
//	go run ./pkg/release/pin -owner flakegate -version v1.2.3 -digest sha256:... action.yml
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/flakegate/flakegate/pkg/release"
)

func main() {
	var ref release.Ref
	flag.StringVar(&ref.Owner, "owner", "", "repository owner, lower case (the image is ghcr.io/OWNER/flakegate)")
	flag.StringVar(&ref.Version, "version", "", "release version, vMAJOR.MINOR.PATCH")
	flag.StringVar(&ref.Digest, "digest", "", "digest of the pushed image index, sha256:...")
	flag.Parse()
	if flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: pin -owner OWNER -version vX.Y.Z -digest sha256:HEX action.yml")
		os.Exit(2)
	}
	path := flag.Arg(0)
	b, err := os.ReadFile(path)
	if err == nil {
		b, err = release.Pin(b, ref)
	}
	if err == nil {
		err = os.WriteFile(path, b, 0o644)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "pin: %v\n", err)
		os.Exit(1)
	}
	fmt.Printf("%s: image: %s\n", path, ref)
}
