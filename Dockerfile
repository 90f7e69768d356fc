# flakegate action image: one static Go binary on a distroless base that has
# CA certificates, tzdata, /etc/passwd and a /tmp, but no shell or package
# manager.
#
# GitHub builds this file in every job that uses `runs.image: Dockerfile`
# (main); release tags point action.yml at the image that
# .github/workflows/release.yml publishes to ghcr.io from this file.
#
# No USER line: GitHub runs docker actions as the image's user and needs root
# to write /github/file_commands and /github/workspace.
#
# Both base images are pinned by digest. The digests were copied from public
# repositories that pin the same tags in 2026: golang:1.26.8-bookworm (whose
# pinners describe it as the multi-platform index) and
# gcr.io/distroless/static-debian12 (seen as its latest tag in a build log).
# They were not pulled or verified on the machine that wrote this file, which
# has no registry access, and the distroless one is not confirmed to be the
# multi-platform index rather than one platform's manifest. The first build
# verifies them (a digest that does not exist fails the pull; a
# one-platform digest fails the release's linux/arm64 build). To refresh:
#   docker buildx imagetools inspect golang:1.26-bookworm
#   docker buildx imagetools inspect gcr.io/distroless/static-debian12
# and copy the "Digest:" line of each (the index, not a per-platform
# manifest). Keep the go build line below in step with release_test.go and
# the container test, which read it from here.

# The build stage runs on the builder's own platform and cross-compiles, so
# the arm64 image needs no emulation.
FROM --platform=$BUILDPLATFORM golang:1.26.8-bookworm@sha256:a688600ca24f8a4d3ca77f95b0dd40704a9fc787c826660eb7ba0b641b8b175d AS build
WORKDIR /src
# Module downloads are cached in their own layer.
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG TARGETOS TARGETARCH
# The release workflow passes the tag (--build-arg VERSION=v1.2.3); a build
# from main reports "dev".
ARG VERSION=dev
RUN CGO_ENABLED=0 GOOS=$TARGETOS GOARCH=$TARGETARCH go build -trimpath -ldflags "-s -w -X github.com/flakegate/flakegate/pkg/cli.Version=$VERSION" -o /out/flakegate .

FROM gcr.io/distroless/static-debian12@sha256:9c346e4be81b5ca7ff31a0d89eaeade58b0f95cfd3baed1f36083ddb47ca3160
COPY --from=build /out/flakegate /flakegate
# With GITHUB_ACTIONS=true and no arguments the binary runs the action;
# otherwise it is the flakegate CLI (`docker run IMAGE analyze ...`).
ENTRYPOINT ["/flakegate"]
