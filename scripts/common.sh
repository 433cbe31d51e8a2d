# Sourced by scripts/test.sh and scripts/demo.sh: installs what is missing and
# configures/builds with the CMake presets.
set -euo pipefail

RAGPP_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
JOBS=$(nproc 2>/dev/null || echo 2)

# Debian packages every build needs, and those the tests use when present.
RAGPP_REQUIRED_PACKAGES=(cmake g++ ninja-build libeigen3-dev nlohmann-json3-dev catch2 pkg-config libboost-dev)
# unicode-data: the UAX #29 test files (WordBreakTest, GraphemeBreakTest), so no test skips;
# clang: every public header is also parsed by clang (test clang.headers); nodejs: the
# official MCP SDK's client runs against ragpp mcp (test cli.mcp.sdk); iproute2: ss shows
# ragpp serve's listen backlog (test cli.serve.http).
RAGPP_TEST_PACKAGES=(libstemmer-dev unicode-data clang nodejs iproute2)
# ccache: rebuilds reuse compiled objects; another clone on the same machine reuses those
# whose preprocessed code does not contain the clone's path (most of the library's).
RAGPP_BUILD_PACKAGES=(ccache)

log() { printf '\033[1m== %s\033[0m\n' "$*" >&2; }

package_installed() {
  dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"
}

# ensure_packages PKG...: installs the missing ones with apt-get, as root or via sudo.
ensure_packages() {
  local missing=()
  if ! command -v dpkg-query >/dev/null 2>&1; then
    log "not a Debian system (no dpkg-query): make sure these are installed: $*"
    return 0
  fi
  for p in "$@"; do package_installed "$p" || missing+=("$p"); done
  [ ${#missing[@]} -eq 0 ] && return 0
  local sudo=()
  if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
      sudo=(sudo)
    else
      echo "error: these Debian packages are missing: ${missing[*]}" >&2
      echo "       installing them needs root: run this script as root, or with a user that may use sudo," >&2
      echo "       or install them yourself: apt-get install ${missing[*]}" >&2
      exit 1
    fi
  fi
  log "installing ${missing[*]}"
  "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -qq
  "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}"
}

# build_preset NAME [-DVAR=VALUE...]: configures and builds the preset, with the cache
# variables given (they override the preset's).
build_preset() {
  local preset=$1
  shift
  cd "$RAGPP_ROOT"
  log "configure ($preset)"
  local launcher=()
  if command -v ccache >/dev/null 2>&1; then
    # Paths relative to the clone in the compiler command lines.
    export CCACHE_BASEDIR="$RAGPP_ROOT" CCACHE_NOHASHDIR=1
    launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
  fi
  cmake --preset "$preset" -G Ninja "${launcher[@]}" "$@"
  log "build ($preset, $JOBS jobs)"
  cmake --build --preset "$preset" -j "$JOBS"
}

# ensure_npm_packages: the npm packages the tests use (the official MCP SDK, client of
# test cli.mcp.sdk), into build/npm, from the npm registry; a failure is a warning here
# (that test then fails in CI, where CI is set, and is skipped elsewhere).
RAGPP_NPM_PACKAGES=(@modelcontextprotocol/sdk@1.32.2)
ensure_npm_packages() {
  local dir="$RAGPP_ROOT/build/npm"
  [ -d "$dir/node_modules/@modelcontextprotocol/sdk" ] && return 0
  command -v npm >/dev/null 2>&1 || ensure_packages npm
  log "npm install ${RAGPP_NPM_PACKAGES[*]} (into build/npm)"
  mkdir -p "$dir"
  npm install --prefix "$dir" --no-audit --no-fund --ignore-scripts "${RAGPP_NPM_PACKAGES[@]}" >/dev/null ||
    log "warning: npm install failed: test cli.mcp.sdk will be skipped (or fail, in CI)"
}
