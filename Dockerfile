# syntax=docker/dockerfile:1
# The runtime image of fn-hcl, for people who build with Docker:
#   docker build -t fn-hcl:0.1.0 --build-arg VERSION=0.1.0 .
# package/build makes the same image without a Docker daemon (buildah, from the release
# binary and the libraries it links) and takes the USER, EXPOSE, ENTRYPOINT, LABEL and
# binary path of the `runtime` stage below from this file, so both images carry the same
# facts. This file itself is not built in this repository's CI (no Docker daemon there).

ARG RUST_VERSION=1.95

FROM rust:${RUST_VERSION}-bookworm AS build
WORKDIR /src
COPY . .
# The release binary, optimized with the committed profile (pgo/build), stripped; its
# debug info kept apart in /out/fn-hcl.debug.
RUN pgo/build \
 && package/split-debug target/release/fn-hcl /out

# distroless cc: glibc and libgcc_s (what the binary links), no shell, user nonroot (65532).
FROM gcr.io/distroless/cc-debian12:nonroot AS runtime
ARG VERSION=0.1.0
ARG SOURCE=
COPY --from=build /out/fn-hcl /usr/local/bin/fn-hcl
LABEL org.opencontainers.image.title="fn-hcl" \
      org.opencontainers.image.description="Crossplane composition function running the function-hcl DSL" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.licenses="Apache-2.0" \
      org.opencontainers.image.source="${SOURCE}"
USER 65532:65532
# 9443: gRPC (function protocol, mTLS); 8080: /metrics, /healthz, /readyz.
EXPOSE 9443 8080
ENTRYPOINT ["/usr/local/bin/fn-hcl", "serve"]
