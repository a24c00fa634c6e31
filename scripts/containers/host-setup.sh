#!/usr/bin/env bash
# Makes this Debian machine able to run the container tier (npm run test:containers), idempotently:
#   1. Debian packages: docker.io (engine + containerd) and debootstrap, when missing;
#   2. dockerd in the background when its socket does not answer (no systemd here); an engine that
#      already answers is left alone, a second one is never started;
#   3. Compose v2 (`docker compose`): bookworm only packages v1 (`docker-compose` 1.29, which misreads
#      nested defaults like docker-compose.yml's CORS_ORIGINS), so the plugin comes from Debian trixie's
#      `docker-compose` package, downloaded through apt with a private state directory (signatures
#      checked as usual, the machine's sources untouched) and cached;
#   4. the stand-in base images (scripts/containers/stand-ins.sh).
# Everything else the tier needs (the relay-hub image) is built by the tests through testcontainers.
#
# Env: RELAY_HUB_CONTAINERS_CACHE (default ~/.cache/relay-hub-containers), DEBIAN_MIRROR.
set -euo pipefail

HERE="$(cd "$(dirname "$0")" && pwd)"
CACHE="${RELAY_HUB_CONTAINERS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/relay-hub-containers}"
MIRROR="${DEBIAN_MIRROR:-http://deb.debian.org/debian}"
COMPOSE_SUITE="${COMPOSE_SUITE:-trixie}"

log() { printf '[host-setup] %s\n' "$*" >&2; }
die() { printf '[host-setup] error: %s\n' "$*" >&2; exit 1; }
step() { local start=$SECONDS; "$@"; log "$1: $((SECONDS - start)) s"; }

[ "$(id -u)" = 0 ] || die "run as root: it installs packages and starts dockerd"
mkdir -p "$CACHE"

packages() {
  local missing=()
  command -v dockerd >/dev/null 2>&1 || missing+=(docker.io)
  command -v debootstrap >/dev/null 2>&1 || missing+=(debootstrap)
  if [ "${#missing[@]}" -gt 0 ]; then
    log "installing ${missing[*]}"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive NEEDRESTART_SUSPEND=1 apt-get install -y -qq "${missing[@]}" >/dev/null
  fi
}

engine() {
  docker info >/dev/null 2>&1 && return 0
  # The socket does not answer. A dockerd that is still starting would answer shortly: wait for it
  # rather than starting a second one.
  if ! pgrep -x dockerd >/dev/null; then
    log "starting dockerd (log: /var/log/dockerd.log)"
    setsid dockerd >/var/log/dockerd.log 2>&1 < /dev/null &
  fi
  local i
  for i in $(seq 1 60); do
    docker info >/dev/null 2>&1 && return 0
    sleep 1
  done
  tail -n 20 /var/log/dockerd.log >&2 || true
  die "dockerd did not answer within 60 s"
}

compose() {
  docker compose version >/dev/null 2>&1 && return 0
  local debs="$CACHE/compose" deb
  mkdir -p "$debs/lists/partial" "$debs/archives/partial"
  deb="$(ls -1 "$debs"/docker-compose_2.*.deb 2>/dev/null | sort -V | tail -n 1 || true)"
  if [ -z "$deb" ]; then
    log "downloading Compose v2 from Debian $COMPOSE_SUITE"
    printf 'deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] %s %s main\n' "$MIRROR" "$COMPOSE_SUITE" \
      >"$debs/sources.list"
    local apt_opts=(-o "Dir::Etc::SourceList=$debs/sources.list" -o Dir::Etc::SourceParts=/dev/null
      -o "Dir::State::Lists=$debs/lists" -o "Dir::Cache::Archives=$debs/archives" -o APT::Sandbox::User=root)
    apt-get "${apt_opts[@]}" update -qq
    (cd "$debs" && apt-get "${apt_opts[@]}" download "docker-compose/$COMPOSE_SUITE" >/dev/null)
    deb="$(ls -1 "$debs"/docker-compose_2.*.deb | sort -V | tail -n 1)"
    rm -rf "$debs/lists"
  fi
  log "installing $(basename "$deb")"
  DEBIAN_FRONTEND=noninteractive NEEDRESTART_SUSPEND=1 apt-get install -y -qq "$deb" >/dev/null
  docker compose version >/dev/null 2>&1 || die "docker compose still fails after installing $deb"
}

step packages
step engine
step compose
step "$HERE/stand-ins.sh"
