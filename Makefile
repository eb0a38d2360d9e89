# mcp-hub builds. Every way to build it (make, go build, go install, Docker)
# uses go-sdk v1.8.0 plus our patch, part of our module in third_party/go-sdk
# (third_party/README.md).
#
#   make                   ./mcp-hub, for this machine
#   make release           ./mcp-hub: static (CGO_ENABLED=0), -trimpath, stripped,
#                          version stamped; GOOS=, GOARCH=, OUT=, VERSION= as you like
#   make test              ./scripts/test.sh
#   make release-check     the release build and what the Docker image runs, without Docker
#
# The Dockerfile runs `make release`; scripts/release-check.sh runs the same.

VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
GOOS    ?= $(shell go env GOOS)
GOARCH  ?= $(shell go env GOARCH)
OUT     ?= mcp-hub
PKG     := ./cmd/mcp-hub
# urfave_cli_no_docs drops urfave/cli's man-page and markdown writers (and
# their markdown library) that mcp-hub never calls.
RELEASE_FLAGS := -trimpath -tags urfave_cli_no_docs \
	-ldflags '-s -w -X github.com/mcp-hub/mcp-hub/internal/version.Version=$(VERSION)'

.PHONY: build release test release-check

build:
	go build -o $(OUT) $(PKG)

release:
	CGO_ENABLED=0 GOOS=$(GOOS) GOARCH=$(GOARCH) go build $(RELEASE_FLAGS) -o $(OUT) $(PKG)

test:
	./scripts/test.sh

release-check:
	./scripts/release-check.sh
