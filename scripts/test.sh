#!/usr/bin/env bash
# Installs what is missing, builds, and runs the whole test suite with ctest twice:
# a Release build, then a build under AddressSanitizer + UndefinedBehaviorSanitizer.
# Tests that need ../shared/ (data sets, peer fixtures) report SKIPPED when it is absent.
source "$(dirname "$0")/common.sh"

ensure_packages "${RAGPP_REQUIRED_PACKAGES[@]}" "${RAGPP_TEST_PACKAGES[@]}" "${RAGPP_BUILD_PACKAGES[@]}"

start=$(date +%s)
for preset in release asan; do
  build_preset "$preset"
  log "test ($preset)"
  ctest --preset "$preset" -j "$JOBS"
done
log "all tests passed in both builds ($(( $(date +%s) - start )) s)"
