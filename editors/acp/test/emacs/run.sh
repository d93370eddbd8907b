#!/usr/bin/env bash
# The real agent-shell (Emacs; vendored under vendor/, see its README.md) drives the built
# `kin acp` in Emacs against kin's scripted mock model (run.el says what it checks). Usage:
#   editors/acp/test/emacs/run.sh
#   KIN_TEST_EMACS  the emacs to use (default: emacs on PATH; .ci/install-emacs.sh installs
#                   Emacs >= 29.1, agent-shell's minimum, when it is missing or older)
#   KIN_BIN, KIN_MOCKMODEL_BIN  prebuilt kin and mockmodel (default: built here)
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO="$(cd "$HERE/../../../.." && pwd)"

EMACS="${KIN_TEST_EMACS:-emacs}"
if ! "$EMACS" --version 2>/dev/null | head -n1 | grep -Eq '^GNU Emacs (29\.[1-9]|[3-9][0-9]\.)'; then
  if [ -n "${KIN_TEST_EMACS:-}" ]; then
    echo "acp_agent_shell: $KIN_TEST_EMACS is not Emacs 29.1 or newer" >&2
    exit 1
  fi
  bash "$REPO/.ci/install-emacs.sh"
fi

. "$REPO/editors/acp/test/third-party.sh"
TMP="$(acp_client_tmp kin-agent-shell-test)"
trap acp_client_cleanup EXIT

# kin acp inherits its environment from Emacs (acp.el starts it with make-process).
acp_client_setup acp_agent_shell "$HERE/rules.json" "$TMP"
set +e
"$EMACS" --batch -Q -l "$HERE/run.el"
code=$?
set -e
if [ "$code" -ne 0 ] && [ -s "$TMP/mock.err" ]; then
  echo "--- mock model log (last 40 lines)"
  tail -n 40 "$TMP/mock.err"
fi
exit "$code"
