# The podinit image: a FROM scratch image holding only the static /podinit.
#
#     docker build -t podinit .
#
# Use it from your own image (see README "Use in a Dockerfile"):
#
#     COPY --from=podinit /podinit /podinit
#     ENTRYPOINT ["/podinit", "--"]
#     CMD ["/app/server"]
#
# The builder stage needs the official Rust image from a registry, so this file
# is not built on the project's CI machine, which has no registry: the tests in
# tests/docker.rs build the same final stage (FROM scratch, /podinit, the same
# ENTRYPOINT) from the binary that `cargo build --release --target
# x86_64-unknown-linux-musl` makes there.

ARG RUST_IMAGE=rust:1-alpine
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
