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
ENTRYPOINT ["/podinit", "--"]

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
ENTRYPOINT ["/podinit", "--"]
