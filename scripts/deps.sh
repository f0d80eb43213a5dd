#!/usr/bin/env bash
# Installs the Debian packages syncwise needs, and only those that are missing.
#   scripts/deps.sh          what building, testing and `make run` need
#   scripts/deps.sh bench    also what the benchmarks' peers need (PyTorch, gnuplot)
# As root it runs apt-get itself; otherwise it prints the exact command to run and fails.
set -euo pipefail

packages=(build-essential cmake pkg-config libopenblas-dev zlib1g-dev libisal-dev libcmocka-dev
          dataset-fashion-mnist gnuplot-nox libzmq3-dev clang libclang-rt-14-dev
          python3-zmq iproute2) # python3-zmq: the protocol test's client, written apart from
                                # the C code; iproute2: net_dead_link drops a connection
if [[ "${1:-}" == "bench" ]]; then
  packages+=(python3-torch python3-numpy)
fi

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q '^install ok installed$'; then
    missing+=("$p")
  fi
done
[[ ${#missing[@]} -eq 0 ]] && exit 0

cmd="apt-get install -y --no-install-recommends ${missing[*]}"
if [[ $(id -u) -ne 0 ]]; then
  echo "syncwise needs these Debian packages: ${missing[*]}" >&2
  echo "install them with:  sudo apt-get update && sudo $cmd" >&2
  exit 1
fi
echo "installing: ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
# The package lists may be absent on a fresh machine; refresh them once when an install fails.
apt-get install -y --no-install-recommends "${missing[@]}" >/dev/null 2>&1 ||
  { apt-get update -q >/dev/null && apt-get install -y -q --no-install-recommends "${missing[@]}"; }
