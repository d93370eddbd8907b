#!/usr/bin/env bash
# Installs Neovim 0.11 or newer (Debian sid's build, 0.12 when written) into a private folder, the
# same way .ci/install-nvim.sh installs trixie's 0.10 (download only, unpacked, nothing installed
# on the system). kin.nvim's own tests stay on 0.10; this one is for third-party ACP clients that
# need a newer Neovim (CodeCompanion's ACP client does not start on 0.10).
#
#   KIN_NVIM12_DIR=/opt/kin-ci/nvim12 bash .ci/install-nvim12.sh
#   /opt/kin-ci/nvim12/bin/nvim --version
#
# Idempotent: does nothing when <dir>/bin/nvim already runs and reports NVIM v0.11 or newer.
set -euo pipefail
export KIN_NVIM_DIR="${KIN_NVIM12_DIR:-${KIN_CI_CACHE:-/opt/kin-ci}/nvim12}"
export KIN_NVIM_SUITE=sid KIN_NVIM_MIN=0.11
exec bash "$(dirname "$0")/install-nvim.sh"
