# mcp-hub over streamable HTTP, with a mounted config.
#
#   docker build --build-arg VERSION=$(git describe --tags --always) -t mcp-hub .
#   docker run --rm -p 8080:8080 -v "$PWD/hub.yaml:/config/hub.yaml:ro" -e HUB_TOKEN mcp-hub
#
# In a container the hub must listen beyond loopback (0.0.0.0:8080), so set
# auth.tokens in the mounted config (docs/deployment.md, "Packaging and install"): without auth the
# hub refuses to start there. The bundled /config/hub.yaml has no auth; to
# try it out open on purpose, add -e MCP_HUB_ALLOW_UNAUTHENTICATED=1.
# scripts/release-check.sh runs the build step below (make release) and the
# image's command outside Docker; ./scripts/test.sh runs that script.

FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=dev
RUN make release OUT=/out/mcp-hub VERSION=${VERSION}

# distroless/static: CA certificates, tzdata, a nonroot user, no shell.
FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/mcp-hub /usr/local/bin/mcp-hub
COPY hub.yaml /config/hub.yaml
USER nonroot:nonroot
EXPOSE 8080
ENTRYPOINT ["/usr/local/bin/mcp-hub"]
CMD ["--config", "/config/hub.yaml", "serve", "--http", "0.0.0.0:8080"]
