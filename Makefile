# mcp-hub builds. Two go-sdk flavours (third_party/README.md):
#   the fast build   go.fast.mod: go-sdk v1.8.0 plus our patch (make, make release)
#   the stock build  go.mod alone: what `go install ...@version` builds (make stock)
#
#   make                   ./mcp-hub, fast build, for this machine
#   make release           ./mcp-hub: static (CGO_ENABLED=0), -trimpath, stripped,
#                          version stamped; GOOS=, GOARCH=, OUT=, VERSION= as you like
#   make stock             ./mcp-hub as `go install` builds it
#   make test              ./scripts/test.sh
#   make release-check     the release build and what the Docker image runs, without Docker
#
# The Dockerfile runs `make release`; scripts/release-check.sh runs the same.

VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
GOOS    ?= $(shell go env GOOS)
GOARCH  ?= $(shell go env GOARCH)
OUT     ?= mcp-hub
PKG     := ./cmd/mcp-hub
FAST    := -modfile=go.fast.mod
# urfave_cli_no_docs drops urfave/cli's man-page and markdown writers (and
# their markdown library) that mcp-hub never calls.
RELEASE_FLAGS := -trimpath -tags urfave_cli_no_docs \
	-ldflags '-s -w -X github.com/mcp-hub/mcp-hub/internal/version.Version=$(VERSION)'

.PHONY: build release stock test release-check

build:
	go build $(FAST) -o $(OUT) $(PKG)

release:
	CGO_ENABLED=0 GOOS=$(GOOS) GOARCH=$(GOARCH) go build $(FAST) $(RELEASE_FLAGS) -o $(OUT) $(PKG)

stock:
	go build -o $(OUT) $(PKG)

test:
	./scripts/test.sh

release-check:
	./scripts/release-check.sh
