#!/usr/bin/env bash
# Make this machine ready to build and test wgml.  Idempotent: a second run
# checks, finds everything present, and touches neither apt nor the network.
#
#   1. Debian packages: tool chain, cmake, the Vulkan loader and Mesa's
#      lavapipe (CPU Vulkan driver) 25.0.x from bookworm-backports.
#   2. wgpu-native (webgpu.h implementation) from the PyPI wheel wgpu==0.32.0,
#      checked by sha256, unpacked into third_party/wgpu-native/ (git-ignored).
#   3. the default model, SmolLM2-135M-Instruct Q4_1, by scripts/fetch_model.sh
#      (checked by sha256, into the git-ignored models/ or $WGML_MODEL_DIR).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
WGPU_DIR="$ROOT/third_party/wgpu-native"
WGPU_VERSION="0.32.0"
WGPU_WHEEL_SHA256="6499a31b5a29a10b4f1089fea4a0806411f42605fa86b6c0b543a07ca0de8568"
MESA_WANT="25.0"

say()  { printf 'setup: %s\n' "$*"; }
fail() { printf 'setup: FAILED: %s\n' "$1" >&2; [ $# -gt 1 ] && printf 'setup: fix: %s\n' "$2" >&2; exit 1; }

SUDO=""
if [ "$(id -u)" != 0 ]; then
  command -v sudo >/dev/null 2>&1 && SUDO="sudo" || SUDO="__none__"
fi
as_root() {
  [ "$SUDO" = "__none__" ] && fail "need root to run: $*" "run scripts/setup.sh as root or install sudo"
  $SUDO "$@"
}

pkg_version() { { dpkg-query -W -f='${Status} ${Version}\n' "$1" 2>/dev/null || true; } | awk '$3=="installed"{print $4}'; }

# ---- 1. Debian packages ---------------------------------------------------
need_pkgs=()
for p in build-essential cmake pkg-config libvulkan1 libvulkan-dev; do
  [ -n "$(pkg_version "$p")" ] || need_pkgs+=("$p")
done
# python3 with pip may come from elsewhere (pyenv); only ask apt when absent.
python3 -m pip --version >/dev/null 2>&1 || need_pkgs+=(python3 python3-pip)
mesa_ver="$(pkg_version mesa-vulkan-drivers)"
need_mesa=0
case "$mesa_ver" in "$MESA_WANT".*) ;; *) need_mesa=1 ;; esac

if [ ${#need_pkgs[@]} -gt 0 ] || [ $need_mesa = 1 ]; then
  command -v apt-get >/dev/null || fail "apt-get not found" "install by hand: ${need_pkgs[*]} mesa-vulkan-drivers (Mesa $MESA_WANT.x)"
  codename="$(. /etc/os-release && echo "${VERSION_CODENAME:-}")"
  if [ $need_mesa = 1 ] && [ "$codename" = bookworm ]; then
    if ! grep -rqs 'bookworm-backports' /etc/apt/sources.list /etc/apt/sources.list.d/; then
      say "adding the bookworm-backports suite"
      printf 'Types: deb\nURIs: http://deb.debian.org/debian\nSuites: bookworm-backports\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n' \
        | as_root tee /etc/apt/sources.list.d/bookworm-backports.sources >/dev/null
    fi
  fi
  say "apt-get update"
  as_root apt-get update -qq || fail "apt-get update" "check the network / apt sources"
  if [ ${#need_pkgs[@]} -gt 0 ]; then
    say "installing ${need_pkgs[*]}"
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need_pkgs[@]}" \
      || fail "apt-get install ${need_pkgs[*]}" "run it by hand and read apt's message"
  fi
  if [ $need_mesa = 1 ]; then
    if [ "$codename" = bookworm ]; then
      say "installing mesa-vulkan-drivers from bookworm-backports"
      as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends -t bookworm-backports mesa-vulkan-drivers \
        || fail "installing mesa-vulkan-drivers from bookworm-backports" "apt-cache policy mesa-vulkan-drivers"
    else
      as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends mesa-vulkan-drivers \
        || fail "installing mesa-vulkan-drivers" "apt-cache policy mesa-vulkan-drivers"
    fi
    mesa_ver="$(pkg_version mesa-vulkan-drivers)"
    case "$mesa_ver" in "$MESA_WANT".*) ;; *) say "warning: Mesa is $mesa_ver, not $MESA_WANT.x: lavapipe is slower and may lack subgroups" ;; esac
  fi
fi
say "packages ok (mesa-vulkan-drivers ${mesa_ver:-none})"

# ---- 3. the default model ---------------------------------------------------
# Runs before step 2, which ends the script early once wgpu-native is there.
# fetch_model.sh is idempotent as well (a sha256 check and no network once the
# GGUF is there) and prints its own cause and fix when it fails.
bash "$ROOT/scripts/fetch_model.sh" smollm2 \
  || fail "the model download (scripts/fetch_model.sh smollm2, message above)" \
          "follow its fix, then rerun: bash scripts/fetch_model.sh smollm2"

# ---- 2. wgpu-native -------------------------------------------------------
stamp="$WGPU_DIR/.wheel-sha256"
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$WGPU_WHEEL_SHA256" ] \
   && [ -f "$WGPU_DIR/libwgpu_native-release.so" ] && [ -f "$WGPU_DIR/webgpu.h" ] && [ -f "$WGPU_DIR/wgpu.h" ]; then
  say "wgpu-native ok ($WGPU_DIR)"
  exit 0
fi
command -v python3 >/dev/null || fail "python3 not found" "apt-get install python3 python3-pip"
tmp="$(mktemp -d)"; trap 'rm -rf "$tmp"' EXIT
say "downloading wgpu==$WGPU_VERSION wheel from PyPI"
python3 -m pip download -q --no-deps --only-binary=:all: --platform manylinux_2_28_x86_64 \
    -d "$tmp" "wgpu==$WGPU_VERSION" \
  || fail "pip download wgpu==$WGPU_VERSION" "check that PyPI is reachable (pip config, proxy)"
whl="$(ls "$tmp"/wgpu-*.whl 2>/dev/null | head -n1)"
[ -n "$whl" ] || fail "no wheel was downloaded" "run: python3 -m pip download --no-deps wgpu==$WGPU_VERSION"
got="$(sha256sum "$whl" | cut -d' ' -f1)"
[ "$got" = "$WGPU_WHEEL_SHA256" ] || fail "sha256 of $(basename "$whl") is $got, expected $WGPU_WHEEL_SHA256" \
  "the wheel changed upstream or the download is corrupt; do not build against it"
python3 - "$whl" "$tmp/x" <<'PY' || fail "unpacking the wheel" "is the file a valid zip?"
import sys, zipfile
z = zipfile.ZipFile(sys.argv[1])
for n in z.namelist():
    if n.startswith("wgpu/resources/"):
        z.extract(n, sys.argv[2])
PY
mkdir -p "$WGPU_DIR"
for f in libwgpu_native-release.so webgpu.h wgpu.h; do
  [ -f "$tmp/x/wgpu/resources/$f" ] || fail "the wheel lacks wgpu/resources/$f"
  cp "$tmp/x/wgpu/resources/$f" "$WGPU_DIR/$f"
done
echo "$WGPU_WHEEL_SHA256" > "$stamp"
say "wgpu-native $WGPU_VERSION unpacked into $WGPU_DIR"
