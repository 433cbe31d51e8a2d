#!/usr/bin/env bash
# A real ENOSPC under io/generations.hpp (see scripts/check_generations_enospc.cpp):
# mounts a 1 MiB tmpfs (root only), builds and runs the check, unmounts.
# Usage: sudo scripts/check_generations_enospc.sh [CXX]   (exit 0: every open was whole)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'umount "$work/mnt" 2>/dev/null; rm -rf "$work"' EXIT
mkdir "$work/mnt"
mount -t tmpfs -o size=1m tmpfs "$work/mnt"
"${1:-g++}" -std=c++20 -O1 -I"$root/include" "$root/scripts/check_generations_enospc.cpp" -o "$work/check"
"$work/check" "$work/mnt/idx"
