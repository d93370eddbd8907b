#!/usr/bin/env bash
# The real CodeCompanion.nvim drives the built `kin acp` in headless Neovim >= 0.11 against kin's
# scripted mock model (run.lua says what it checks). Usage:
#   editors/nvim/tests/acp_codecompanion/run.sh
#   KIN_TEST_NVIM12  the nvim to use (default: $KIN_NVIM12_DIR/bin/nvim, installed by
#                    .ci/install-nvim12.sh if missing or older than 0.11)
#   KIN_BIN, KIN_MOCKMODEL_BIN  prebuilt kin and mockmodel (default: built here)
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
PLUGIN="$(cd "$HERE/../.." && pwd)"
REPO="$(cd "$PLUGIN/../.." && pwd)"

NVIM="${KIN_TEST_NVIM12:-${KIN_NVIM12_DIR:-${KIN_CI_CACHE:-/opt/kin-ci}/nvim12}/bin/nvim}"
if ! "$NVIM" --version 2>/dev/null | head -n1 | grep -Eq '^NVIM v(0\.(1[1-9]|[2-9][0-9])|[1-9])'; then
  KIN_NVIM12_DIR="$(dirname "$(dirname "$NVIM")")" bash "$REPO/.ci/install-nvim12.sh"
fi

. "$REPO/editors/acp/test/third-party.sh"
TMP="$(acp_client_tmp kin-cc-test)"
trap acp_client_cleanup EXIT

# kin acp inherits its environment from Neovim (CodeCompanion starts it with vim.system); CodeCompanion's log lands under the private XDG folders, where run.lua reads it on failure.
acp_client_setup acp_codecompanion "$HERE/rules.json" "$TMP"
set +e
"$NVIM" --headless -u NONE -i NONE -l "$HERE/run.lua"
code=$?
set -e
if [ "$code" -ne 0 ] && [ -s "$TMP/mock.err" ]; then
  echo "--- mock model log (last 40 lines)"
  tail -n 40 "$TMP/mock.err"
fi
exit "$code"
