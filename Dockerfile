# The podinit image: a FROM scratch image holding only the static /podinit.
#
# With a registry (the builder stage compiles in the official Rust image):
#
#     docker build -t podinit .
#
# With only a local Docker engine, from the static binary built on the host:
#
#     cargo build --release --target x86_64-unknown-linux-musl
#     docker build --target local \
#         --build-arg BINARY=target/x86_64-unknown-linux-musl/release/podinit -t podinit .
#
# (aarch64: the same with aarch64-unknown-linux-musl.) tests/docker.rs builds
# its podinit image exactly so. Use the image from your own (README, "Use in a
# Dockerfile"):
#
#     COPY --from=podinit /podinit /podinit
#     ENTRYPOINT ["/podinit", "--"]
#     CMD ["/app/server"]
#
# The image's own ENTRYPOINT is podinit's command line, not a plain init: it
# holds no program for an init to run, so `docker run` on it runs podinit's
# subcommands (without arguments, `--help`):
#
#     docker run --rm podinit --version
#     docker run --rm -v "$PWD:/pod:ro" podinit check --config /pod/podinit.toml
#
# An image built FROM it sets its own ENTRYPOINT ["/podinit", "--"] (or
# ["/podinit", "--config", FILE]), which also drops this CMD.

# The builder's base image (the registry route below). Declared before the
# first FROM: an ARG after a FROM belongs to that stage alone, and a later
# `FROM ${RUST_IMAGE}` would see it blank.
ARG RUST_IMAGE=rust:1-alpine

# The image from a binary built on the host. First in the file, so that even
# Docker's legacy builder, which builds every stage up to the one asked for,
# needs no registry for `--target local`. BINARY must name the binary: its
# default only keeps the other targets building where no binary was built.
FROM scratch AS local
ARG BINARY=Dockerfile
COPY ${BINARY} /podinit
ENTRYPOINT ["/podinit"]
CMD ["--help"]

FROM ${RUST_IMAGE} AS build
# On Alpine the host target is *-unknown-linux-musl, which links statically by
# default, so this builds a static binary for the builder's own architecture.
# musl-dev: crt files and headers for the C part of `ring` (https probes).
RUN apk add --no-cache musl-dev
WORKDIR /src
COPY . .
RUN cargo build --release --locked \
 && cp target/release/podinit /podinit \
 && /podinit --version

FROM scratch
COPY --from=build /podinit /podinit
ENTRYPOINT ["/podinit"]
CMD ["--help"]
