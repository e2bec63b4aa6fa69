#!/usr/bin/env bash
# Installs what shardctl needs to build and test, from Debian packages, skipping what is
# already there. Runs apt-get as root, or through sudo.
set -euo pipefail

packages=(
  g++ cmake ninja-build mold pkg-config git
  libcli11-dev libpqxx-dev libpq-dev libtomlplusplus-dev libfmt-dev doctest-dev nlohmann-json3-dev
  libzstd-dev libssl-dev libxxhash-dev zstd librapidcheck-dev
  dpkg-dev fakeroot file bash-completion zsh fish
  postgresql-15 procps jq
  python3 python3-psycopg python3-psycopg-pool pgbouncer
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "installing: ${missing[*]}" >&2
sudo=()
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || { echo "error: need root (or sudo) to install: ${missing[*]}" >&2; exit 69; }
  sudo=(sudo)
fi
# shardctl runs its own clusters; the distribution's default cluster is not needed.
if [ ! -e /etc/postgresql-common/createcluster.conf ]; then
  "${sudo[@]}" mkdir -p /etc/postgresql-common
  echo "create_main_cluster = false" | "${sudo[@]}" tee /etc/postgresql-common/createcluster.conf >/dev/null
fi
export DEBIAN_FRONTEND=noninteractive
"${sudo[@]}" apt-get update -qq
"${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
