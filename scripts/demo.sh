#!/usr/bin/env bash
# Installs what is missing, builds (Release), and runs the main job.
source "$(dirname "$0")/common.sh"

ensure_packages "${RAGPP_REQUIRED_PACKAGES[@]}"
build_preset release
BIN="$RAGPP_ROOT/build/release"

log "examples"
for ex in "$BIN"/examples/example_*; do
  echo "--- $(basename "$ex")"
  "$ex"
done

log "the ragpp tool"
"$BIN/ragpp" --help
