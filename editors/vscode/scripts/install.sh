#!/usr/bin/env sh
# kin for VS Code in one step: builds the extension with the kin binary inside (npm run package:
# dist/kin-<platform>.vsix) and installs it with the editor's own command.
#
#   sh editors/vscode/scripts/install.sh                       # VS Code (`code` on PATH)
#   KIN_CODE=code-server sh editors/vscode/scripts/install.sh  # code-server, Cursor, VSCodium…
#
# Needs Node.js (npm) and Go. KIN_CODE is the editor's command line (words split on spaces, so
# it may carry options such as --user-data-dir); KIN_NPM_CI=0 skips `npm ci` (the tests, whose
# packages are installed already).
set -eu
cd "$(dirname "$0")/.."
if [ "${KIN_NPM_CI:-1}" != 0 ]; then
	npm ci --no-audit --no-fund
fi
vsix=$(npm run --silent package | tail -1)
# shellcheck disable=SC2086 # KIN_CODE is a command line
${KIN_CODE:-code} --install-extension "$vsix" --force
echo "kin: installed $vsix; open the chat with \"kin: Open Chat\" (Ctrl+Alt+K)."
