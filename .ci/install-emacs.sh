#!/usr/bin/env bash
# Installs Emacs >= 29.1 (agent-shell's Package-Requires floor) for the agent-shell ACP test
# (editors/acp/test/emacs). Debian bookworm ships Emacs 28, so this enables bookworm-backports
# (Emacs 30) and installs emacs-nox from it; on any other system with an old Emacs it fails and
# says so rather than guessing.
#
#   bash .ci/install-emacs.sh
#   emacs --version
#
# Idempotent: does nothing when `emacs --version` already reports 29.1 or newer.
set -euo pipefail

emacs_ok() {
  local v
  v="$(emacs --version 2>/dev/null | head -n1)" || return 1
  # "GNU Emacs 30.1" -> 30 1
  [[ "$v" =~ ^GNU\ Emacs\ ([0-9]+)\.([0-9]+) ]] || return 1
  local major=${BASH_REMATCH[1]} minor=${BASH_REMATCH[2]}
  ((major > 29 || (major == 29 && minor >= 1)))
}

if emacs_ok; then
  echo "install-emacs: $(emacs --version | head -n1) already installed"
  exit 0
fi

command -v apt-get >/dev/null || { echo "install-emacs: apt-get not found; install Emacs >= 29.1 by hand" >&2; exit 1; }
codename="$(. /etc/os-release && echo "${VERSION_CODENAME:-}")"
if [ "$codename" = bookworm ]; then
  echo 'deb http://deb.debian.org/debian bookworm-backports main' >/etc/apt/sources.list.d/backports.list
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends -t bookworm-backports emacs-nox >/dev/null
else
  # Newer Debian and Ubuntu releases ship Emacs 29 or later in their main archive.
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends emacs-nox >/dev/null
fi

emacs_ok || { echo "install-emacs: installed $(emacs --version 2>/dev/null | head -n1), still older than 29.1" >&2; exit 1; }
echo "install-emacs: $(emacs --version | head -n1)"
