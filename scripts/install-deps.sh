#!/usr/bin/env bash
# Installs what braid needs on a Debian machine (12 "bookworm" or newer), only what is missing.
# Runs apt-get as root, or through sudo when started by another user.
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config git
  clang
  nlohmann-json3-dev libcli11-dev
  libz3-dev libgraphviz-dev
  libtorch-dev libgloo-dev
  libgtest-dev libgmock-dev librapidcheck-dev libbenchmark-dev libexpat1-dev
  libjemalloc-dev
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]} == 0)); then
  echo "install-deps: all ${#packages[@]} packages are installed"
  exit 0
fi

as_root=()
if [[ $(id -u) -ne 0 ]]; then
  command -v sudo >/dev/null || { echo "install-deps: need root or sudo to install: ${missing[*]}" >&2; exit 1; }
  as_root=(sudo)
fi
echo "install-deps: installing ${missing[*]}"
"${as_root[@]}" apt-get update -qq
DEBIAN_FRONTEND=noninteractive "${as_root[@]}" apt-get install -y -qq "${missing[@]}"
