#!/usr/bin/env bash
# Runs kin.nvim's tests in a real Neovim >= 0.10 against the real `kin serve` and the scripted
# mock model. Usage: editors/nvim/tests/run.sh [tests/x_spec.lua ...]
#   KIN_TEST_NVIM   the nvim to use (default: $KIN_NVIM_DIR/bin/nvim, installed if missing)
#   KIN_TEST_FILTER run only the cases whose "file name" contains this text
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
PLUGIN="$(dirname "$HERE")"
REPO="$(cd "$PLUGIN/../.." && pwd)"

NVIM="${KIN_TEST_NVIM:-${KIN_NVIM_DIR:-/opt/kin-nvim}/bin/nvim}"
if ! "$NVIM" --version 2>/dev/null | head -n1 | grep -Eq '^NVIM v(0\.(1[0-9]|[2-9][0-9])|[1-9])'; then
  KIN_NVIM_DIR="$(dirname "$(dirname "$NVIM")")" bash "$REPO/.ci/install-nvim.sh"
fi
export KIN_TEST_NVIM="$NVIM"

TMP="$(mktemp -d "${TMPDIR:-/tmp}/kin-nvim-test.XXXXXX")"
MOCK_PID=""
# kin's tree has the mock model; a copy of the plugin alone runs the unit specs only.
if [ -f "$REPO/agent/modeltest/mockmodel/start.sh" ]; then
  . "$REPO/agent/modeltest/mockmodel/start.sh"
else
  stop_mockmodel() { :; }
fi
cleanup() {
  stop_mockmodel
  rm -rf "$TMP"
}
trap cleanup EXIT

cd "$REPO"
if [ -d "$REPO/cmd/kin" ]; then
  echo "run.sh: building kin and the mock model"
  go build -o "$TMP/bin/kin" ./cmd/kin
  go build -o "$TMP/bin/mockmodel" ./agent/modeltest/mockmodel

  start_mockmodel run.sh "$TMP/bin/mockmodel" "$HERE/rules.json" "$TMP"

  export OPENAI_API_KEY=test
  export KIN_HOME="$TMP/kin-home"
  export KIN_BIN="$TMP/bin/kin"
  # The children move XDG_CACHE_HOME out of the way, and with it Go's default build cache: the
  # case that builds kin the way a first start does (build_spec.lua) uses the warm one.
  GOCACHE="${GOCACHE:-$(go env GOCACHE)}"
  export GOCACHE
  export PATH="$TMP/bin:$PATH"
  mkdir -p "$KIN_HOME"
else
  echo "run.sh: no cmd/kin in this tree yet; the integration spec is skipped" >&2
fi

cd "$PLUGIN"
set +e
"$NVIM" --headless -u NONE -l tests/run.lua "$@"
code=$?
set -e
if [ "$code" -ne 0 ] && [ -n "$MOCK_PID" ] && [ -s "$TMP/mock.err" ]; then
  echo "--- mock model log (last 40 lines)"
  tail -n 40 "$TMP/mock.err"
fi
exit "$code"
