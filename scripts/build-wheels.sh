#!/usr/bin/env bash
# Build the release artefacts into OUT (default dist/): abi3 wheels for manylinux2014
# (glibc 2.17) and musllinux_1_2, x86_64 and aarch64, cross-compiled with maturin's zig
# support, the sdist, and SHA256SUMS over them; then check them (scripts/check-wheels.py).
#
# Needs: rustup (the four Rust targets are added when missing) and a Python environment
# with requirements-wheels.txt (maturin, ziglang, auditwheel, abi3audit, twine) whose bin/
# is WHEEL_VENV (default .venv-wheels; `make wheels` creates it).
# WHEEL_TARGETS="rust-target:compatibility ..." builds a subset (e.g. only x86_64);
# SDIST_BUILD=1 also proves the sdist builds: pip installs it into a fresh venv.
set -euo pipefail
cd "$(dirname "$0")/.."
OUT="${1:-dist}"
WHEEL_VENV="${WHEEL_VENV:-.venv-wheels}"
CHECK_ARGS=()
[ -n "${WHEEL_TARGETS:-}" ] && CHECK_ARGS+=(--subset)
[ -n "${SDIST_BUILD:-}" ] && CHECK_ARGS+=(--build-sdist)
WHEEL_TARGETS="${WHEEL_TARGETS:-x86_64-unknown-linux-gnu:manylinux2014 aarch64-unknown-linux-gnu:manylinux2014 x86_64-unknown-linux-musl:musllinux_1_2 aarch64-unknown-linux-musl:musllinux_1_2}"

if [ ! -x "$WHEEL_VENV/bin/maturin" ]; then
  echo "build-wheels: no maturin in $WHEEL_VENV (run \`make wheels\`, which creates it from requirements-wheels.txt)" >&2
  exit 2
fi
# maturin finds zig through the ziglang module of the Python on PATH
export PATH="$PWD/$WHEEL_VENV/bin:$PATH"
command -v rustup >/dev/null || { echo "build-wheels: rustup is needed to add the cross targets" >&2; exit 2; }

installed="$(rustup target list --installed)"
for spec in $WHEEL_TARGETS; do
  target="${spec%%:*}"
  grep -qx "$target" <<<"$installed" || rustup target add "$target"
done

rm -rf "$OUT"
mkdir -p "$OUT"
for spec in $WHEEL_TARGETS; do
  target="${spec%%:*}" compat="${spec##*:}"
  echo "--- wheel for $target ($compat)"
  start=$SECONDS
  maturin build --release -q --zig --target "$target" --compatibility "$compat" -o "$OUT"
  echo "    built in $((SECONDS - start)) s"
done
echo "--- sdist"
maturin sdist -o "$OUT" >/dev/null
(cd "$OUT" && sha256sum -- *.whl *.tar.gz > SHA256SUMS)
echo "--- artefacts in $OUT"
ls -l "$OUT"
python scripts/check-wheels.py "${CHECK_ARGS[@]}" "$OUT"
