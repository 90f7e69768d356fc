# flakegate action image: one static Go binary on a distroless base that has
# CA certificates and tzdata but no shell or package manager.
#
# GitHub builds this file in every job that uses `runs.image: Dockerfile`;
# releases publish it to ghcr.io so action.yml can point at a prebuilt image.
#
# No USER line: GitHub runs docker actions as the image's user and needs root
# to write /github/file_commands and /github/workspace.

ARG GO_VERSION=1.26

FROM golang:${GO_VERSION}-bookworm AS build
WORKDIR /src
# Module downloads are cached in their own layer.
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o /out/flakegate .

FROM gcr.io/distroless/static-debian12
COPY --from=build /out/flakegate /flakegate
# With GITHUB_ACTIONS=true and no arguments the binary runs the action;
# otherwise it is the flakegate CLI (`docker run IMAGE analyze ...`).
ENTRYPOINT ["/flakegate"]
