#!/usr/bin/env bash
# `npm run image:check`: builds the Dockerfile and checks the image as an operator runs it
# (scripts/image-check.ts: non-root, production dependencies only, migrates and serves on
# PostgreSQL 15 with Redis, health checks of both roles, a ledger write, the console, the embed
# runtime, a clean stop on SIGTERM).
#
# The engine is Docker when a Docker engine answers; otherwise Podman (with Buildah's chroot
# isolation for the RUN steps and runc), installed from Debian's packages when missing. Where the
# base image cannot be pulled (no route to Docker Hub), IMAGE_STANDIN_BASE=1 makes a stand-in for
# `node:20-bookworm-slim` under that tag: Debian bookworm (debootstrap, minbase) with this machine's
# Node.js and npm and the `node` user (uid 1000) of the official image. The Dockerfile is built
# unchanged either way; the report says which base was used. IMAGE_SKIP_BUILD=1 checks the last image again.
set -euo pipefail
cd "$(dirname "$0")/.."
BASE=node:20-bookworm-slim
export IMAGE=${IMAGE:-loyalty-service:check}

install_missing() {
  local need=()
  for package in "$@"; do dpkg -s "$package" >/dev/null 2>&1 || need+=("$package"); done
  [[ ${#need[@]} -eq 0 ]] && return 0
  if [[ $(id -u) -ne 0 ]]; then echo "image:check needs: ${need[*]} (apt-get install as root)" >&2; exit 2; fi
  DEBIAN_FRONTEND=noninteractive apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
}

if docker info >/dev/null 2>&1; then
  export ENGINE=docker
  build() { docker build -t "$IMAGE" .; }
else
  install_missing podman buildah runc debootstrap postgresql-15 redis-server
  # vfs storage works on any file system (overlay inside a container often does not); runc, because
  # crun refuses a hybrid cgroup hierarchy; resource limits no higher than this shell's own hard limits
  # (raising them needs CAP_SYS_RESOURCE, which a sandbox may not have).
  export CONTAINERS_STORAGE_CONF=${CONTAINERS_STORAGE_CONF:-$PWD/data/image-check/storage.conf}
  export CONTAINERS_CONF=${CONTAINERS_CONF:-$PWD/data/image-check/containers.conf}
  mkdir -p data/image-check
  [[ -f $CONTAINERS_STORAGE_CONF ]] || printf '[storage]\ndriver = "vfs"\nrunroot = "%s/data/image-check/run"\ngraphroot = "%s/data/image-check/storage"\n' "$PWD" "$PWD" >"$CONTAINERS_STORAGE_CONF"
  [[ -f $CONTAINERS_CONF ]] || printf '[containers]\ndefault_ulimits = ["nofile=%s:%s", "nproc=%s:%s"]\n[engine]\nruntime = "runc"\n' \
    "$(ulimit -Hn)" "$(ulimit -Hn)" "$(( $(ulimit -Hu) < 32768 ? $(ulimit -Hu) : 32768 ))" "$(( $(ulimit -Hu) < 32768 ? $(ulimit -Hu) : 32768 ))" >"$CONTAINERS_CONF"
  export ENGINE=podman
  build() { podman build --format docker --layers=false --isolation chroot -t "$IMAGE" .; }
fi

if [[ ${IMAGE_STANDIN_BASE:-0} == 1 ]] && ! $ENGINE image inspect "$BASE" >/dev/null 2>&1; then
  rootfs=data/image-check/rootfs
  echo "image:check: making a stand-in for $BASE (Debian bookworm minbase, this machine's Node.js $(node --version))"
  rm -rf "$rootfs" && mkdir -p "$rootfs"
  debootstrap --variant=minbase bookworm "$rootfs" http://deb.debian.org/debian >/dev/null
  cp -a "$(readlink -f "$(command -v node)")" "$rootfs/usr/bin/node"
  mkdir -p "$rootfs/usr/lib/node_modules" && cp -a "$(dirname "$(readlink -f "$(command -v npm)")")/.." "$rootfs/usr/lib/node_modules/npm"
  ln -sf ../lib/node_modules/npm/bin/npm-cli.js "$rootfs/usr/bin/npm"
  ln -sf ../lib/node_modules/npm/bin/npx-cli.js "$rootfs/usr/bin/npx"
  # This machine may reach the npm registry through a proxy with its own certificate authority.
  mkdir -p "$rootfs/etc/ssl/certs" "$rootfs/usr/etc" && cp /etc/ssl/certs/ca-certificates.crt "$rootfs/etc/ssl/certs/"
  printf 'cafile=/etc/ssl/certs/ca-certificates.crt\n' >"$rootfs/usr/etc/npmrc"
  chroot "$rootfs" sh -c 'groupadd --gid 1000 node && useradd --uid 1000 --gid node --shell /bin/bash --create-home node'
  rm -rf "$rootfs"/var/cache/apt/archives/*.deb "$rootfs"/var/lib/apt/lists/*
  note="stand-in for $BASE: Debian bookworm minbase with Node.js $(node --version), npm $(npm --version)"
  tar -C "$rootfs" -c . | $ENGINE import --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' --change 'CMD ["node"]' \
    --change "LABEL loyalty.standin=\"$note\"" - "docker.io/library/$BASE" >/dev/null
  rm -rf "$rootfs"
fi
# The report names a stand-in base, also when an earlier run made it.
note=$($ENGINE image inspect "$BASE" --format '{{index .Config.Labels "loyalty.standin"}}' 2>/dev/null || true)
if [[ -n $note && $note != '<no value>' ]]; then export IMAGE_BASE_NOTE=$note; fi

# IMAGE_SKIP_BUILD=1 checks the image built by an earlier run again.
if [[ ${IMAGE_SKIP_BUILD:-0} != 1 ]]; then
  started=$(date +%s)
  build
  export IMAGE_BUILD_SECONDS=$(( $(date +%s) - started ))
fi
if ! id postgres >/dev/null 2>&1 && [[ $(id -u) -eq 0 ]]; then useradd --system postgres; fi
exec npx tsx scripts/image-check.ts
