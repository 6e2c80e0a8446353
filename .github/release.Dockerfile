# The multi-arch release image: the binary scripts/dist wrote for each
# platform, alone in FROM scratch. Used by .github/workflows/release.yml with
# `docker buildx build --platform linux/amd64,linux/arm64`. Its ENTRYPOINT and
# CMD are the top-level Dockerfile's: podinit's command line, `--help` when
# given nothing (docs/reference.md, "Decisions").
FROM scratch
ARG TARGETARCH
COPY dist/podinit-linux-${TARGETARCH} /podinit
ENTRYPOINT ["/podinit"]
CMD ["--help"]
