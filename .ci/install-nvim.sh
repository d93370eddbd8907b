#!/usr/bin/env bash
# Installs Neovim >= 0.10 (Debian trixie's build) into a private folder without touching the
# system: trixie's packages are fetched with a private apt configuration (download only, never
# installed), unpacked with dpkg-deb -x, and started through trixie's own dynamic loader.
#
#   KIN_NVIM_DIR=/opt/kin-nvim bash .ci/install-nvim.sh
#   /opt/kin-nvim/bin/nvim --version
#
# KIN_NVIM_SUITE picks another Debian suite and KIN_NVIM_MIN the oldest version accepted
# (.ci/install-nvim12.sh: sid's build, 0.11 or newer, for third-party plugins that need it).
#
# Idempotent: does nothing when <dir>/bin/nvim already runs and reports NVIM v$KIN_NVIM_MIN
# (default 0.10) or newer.
set -euo pipefail

DIR="${KIN_NVIM_DIR:-/opt/kin-nvim}"
SUITE="${KIN_NVIM_SUITE:-trixie}"
MIRROR="${KIN_NVIM_MIRROR:-http://deb.debian.org/debian}"
WRAPPER="$DIR/bin/nvim"
MIN="${KIN_NVIM_MIN:-0.10}"
[[ "$MIN" =~ ^([0-9]+)\.([0-9]+)$ ]] || { echo "install-nvim: KIN_NVIM_MIN=$MIN is not MAJOR.MINOR" >&2; exit 1; }
MIN_MAJOR=${BASH_REMATCH[1]} MIN_MINOR=${BASH_REMATCH[2]}

nvim_ok() {
  [ -x "$WRAPPER" ] || return 1
  local v
  v="$("$WRAPPER" --version 2>/dev/null | head -n1)" || return 1
  # NVIM v0.10.4 -> major 0, minor 10, compared with $MIN
  [[ "$v" =~ ^NVIM\ v([0-9]+)\.([0-9]+)\. ]] || return 1
  local major=${BASH_REMATCH[1]} minor=${BASH_REMATCH[2]}
  ((major > MIN_MAJOR || (major == MIN_MAJOR && minor >= MIN_MINOR)))
}

if nvim_ok; then
  echo "install-nvim: $("$WRAPPER" --version | head -n1) already at $WRAPPER"
  exit 0
fi

command -v apt-get >/dev/null || { echo "install-nvim: apt-get not found" >&2; exit 1; }
command -v dpkg-deb >/dev/null || { echo "install-nvim: dpkg-deb not found" >&2; exit 1; }

WORK="$(mktemp -d "${TMPDIR:-/tmp}/kin-nvim-apt.XXXXXX")"
trap 'rm -rf "$WORK"' EXIT
chmod 0755 "$WORK"
mkdir -p "$WORK/lists/partial" "$WORK/cache/archives/partial" "$WORK/sources.d" "$WORK/prefs.d" "$WORK/debs"
echo "deb $MIRROR $SUITE main" >"$WORK/sources.list"
: >"$WORK/status"

KEYRING=/usr/share/keyrings/debian-archive-keyring.gpg
APT_OPTS=(
  -o "Dir::Etc::sourcelist=$WORK/sources.list"
  -o "Dir::Etc::sourceparts=$WORK/sources.d"
  -o "Dir::Etc::preferences=$WORK/preferences"
  -o "Dir::Etc::preferencesparts=$WORK/prefs.d"
  -o "Dir::State::Lists=$WORK/lists"
  -o "Dir::State::status=$WORK/status"
  -o "Dir::Cache=$WORK/cache"
  -o "APT::Architecture=amd64"
  -o "APT::Architectures::=amd64"
  -o "Acquire::IndexTargets::deb::DEP-11::DefaultEnabled=false"
  -o "Acquire::IndexTargets::deb::DEP-11-icons::DefaultEnabled=false"
  -o "Acquire::IndexTargets::deb::DEP-11-icons-small::DefaultEnabled=false"
  -o "Acquire::IndexTargets::deb::Contents-deb::DefaultEnabled=false"
  -o "Acquire::Languages=none"
  -o "APT::Sandbox::User=root"
)
if [ -f "$KEYRING" ]; then
  APT_OPTS+=(-o "Dir::Etc::trusted=$KEYRING" -o "Dir::Etc::trustedparts=/etc/apt/trusted.gpg.d")
fi

echo "install-nvim: reading the $SUITE package lists (private apt state in $WORK)"
apt-get "${APT_OPTS[@]}" -qq update

# The runtime closure of a package in that suite (Depends and Pre-Depends only).
closure() {
  apt-cache "${APT_OPTS[@]}" depends --recurse --no-recommends --no-suggests \
    --no-conflicts --no-breaks --no-replaces --no-enhances "$1" |
    grep -v '^ ' | grep -v '^<' | sort -u
}
mapfile -t PKGS < <(closure neovim)
[ "${#PKGS[@]}" -gt 0 ] || { echo "install-nvim: no packages resolved for neovim" >&2; exit 1; }
# patchelf (and what it needs beyond neovim's closure) only helps install; it is not kept.
mapfile -t TOOLS < <(comm -13 <(printf '%s\n' "${PKGS[@]}") <(closure patchelf))
echo "install-nvim: downloading ${PKGS[*]} (+ ${TOOLS[*]} to patch the binary)"
mkdir -p "$WORK/tools-debs"
(cd "$WORK/debs" && apt-get "${APT_OPTS[@]}" -qq download "${PKGS[@]}")
(cd "$WORK/tools-debs" && apt-get "${APT_OPTS[@]}" -qq download "${TOOLS[@]}")

STAGE="$DIR.new.$$"
rm -rf "$STAGE"
mkdir -p "$STAGE/root" "$STAGE/bin" "$WORK/tools"
for deb in "$WORK"/debs/*.deb; do
  dpkg-deb -x "$deb" "$STAGE/root"
done
for deb in "$WORK"/tools-debs/*.deb; do
  dpkg-deb -x "$deb" "$WORK/tools"
done

ROOT_FINAL="$DIR/root"
LOADER_REL=""
for cand in usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2 lib/x86_64-linux-gnu/ld-linux-x86-64.so.2 lib64/ld-linux-x86-64.so.2; do
  if [ -e "$STAGE/root/$cand" ]; then LOADER_REL="$cand"; break; fi
done
[ -n "$LOADER_REL" ] || { echo "install-nvim: $SUITE's ld-linux-x86-64.so.2 not found in the unpacked libc6" >&2; exit 1; }

# Every library folder the packages ship goes on the loader's path.
LIBDIRS="$ROOT_FINAL/usr/lib/x86_64-linux-gnu:$ROOT_FINAL/lib/x86_64-linux-gnu"
for d in "$STAGE"/root/usr/lib/x86_64-linux-gnu/*/; do
  [ -d "$d" ] || continue
  case "$(basename "$d")" in gconv|audit) continue ;; esac
  if compgen -G "$d*.so*" >/dev/null; then
    LIBDIRS="$LIBDIRS:$ROOT_FINAL/usr/lib/x86_64-linux-gnu/$(basename "$d")"
  fi
done

# Started as `ld-linux --library-path ... nvim`, Neovim's v:progpath is the loader, so the TUI
# (which re-executes v:progpath with --embed) cannot start. Pointing the binary's own ELF
# interpreter at the suite's loader, with an RPATH to the suite's libraries, makes the kernel start it
# through that same loader while v:progpath stays nvim. Children (kin, shells) keep the system's
# libraries: nothing is exported through LD_LIBRARY_PATH.
PATCHED=0
STAGE_LIBS="$STAGE/root/usr/lib/x86_64-linux-gnu:$STAGE/root/lib/x86_64-linux-gnu:$WORK/tools/usr/lib/x86_64-linux-gnu"
if [ -x "$WORK/tools/usr/bin/patchelf" ] &&
  "$STAGE/root/$LOADER_REL" --library-path "$STAGE_LIBS" "$WORK/tools/usr/bin/patchelf" \
    --set-interpreter "$ROOT_FINAL/$LOADER_REL" --force-rpath --set-rpath "$LIBDIRS" \
    "$STAGE/root/usr/bin/nvim"; then
  PATCHED=1
else
  echo "install-nvim: patchelf failed; the TUI will not start, headless use still works" >&2
fi

if [ "$PATCHED" = 1 ]; then
  cat >"$STAGE/bin/nvim" <<WRAP
#!/bin/sh
# Neovim from Debian $SUITE, unpacked privately by .ci/install-nvim.sh; its ELF interpreter is
# $SUITE's ld-linux-x86-64.so.2 and its RPATH $SUITE's libraries.
export VIMRUNTIME="$ROOT_FINAL/usr/share/nvim/runtime"
exec "$ROOT_FINAL/usr/bin/nvim" "\$@"
WRAP
else
  cat >"$STAGE/bin/nvim" <<WRAP
#!/bin/sh
# Neovim from Debian $SUITE, unpacked privately by .ci/install-nvim.sh (headless use only).
export VIMRUNTIME="$ROOT_FINAL/usr/share/nvim/runtime"
exec "$ROOT_FINAL/$LOADER_REL" --library-path "$LIBDIRS" "$ROOT_FINAL/usr/bin/nvim" "\$@"
WRAP
fi
chmod 0755 "$STAGE/bin/nvim"

rm -rf "$DIR"
mkdir -p "$(dirname "$DIR")"
mv "$STAGE" "$DIR"

if ! nvim_ok; then
  echo "install-nvim: $WRAPPER does not start:" >&2
  "$WRAPPER" --version >&2 || true
  exit 1
fi
out="$("$WRAPPER" --headless -u NONE -c 'lua io.stdout:write(tostring(vim.version()))' -c q 2>&1)"
echo "install-nvim: $("$WRAPPER" --version | head -n1) at $WRAPPER (vim.version() = $out)"
