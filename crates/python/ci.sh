#!/usr/bin/env bash
# The Python package's CI step (called by .ci/run after `cargo test --workspace`): a fresh
# virtual environment, maturin, pytest, hypothesis, NumPy and DuckDB from PyPI, the wheel
# built with maturin and installed, then the pytest suite. Any failed install stops it.
#
# The wheel is built with cargo's `dev` profile, so it reuses the dependencies that
# `cargo test --workspace` just compiled (only PyO3 with `extension-module` and the workspace's
# own crates, unoptimised, are compiled again); `pip install ./crates/python` builds the
# optimised release wheel instead. (`--profile test` would make cargo build a test harness.)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

fail() {
    echo "crates/python/ci.sh: $*" >&2
    exit 1
}

python3 -m venv "$work/venv" || fail "cannot create a virtual environment with python3 -m venv"
py="$work/venv/bin/python"
"$py" -m pip install --quiet --disable-pip-version-check \
    "maturin>=1.9,<2" "pytest>=7" "hypothesis>=6" "numpy>=1.21" duckdb ||
    fail "pip could not install maturin, pytest, hypothesis, numpy and duckdb"

"$py" -m maturin build --profile dev --manifest-path "$here/Cargo.toml" --out "$work/dist" ||
    fail "maturin could not build the wheel"
wheels=("$work"/dist/bloomlab-*.whl)
[ "${#wheels[@]}" -eq 1 ] && [ -f "${wheels[0]}" ] || fail "expected one wheel in $work/dist"
"$py" -m pip install --quiet --disable-pip-version-check "${wheels[0]}" ||
    fail "pip could not install ${wheels[0]}"

# Outside the source tree, so that `import bloomlab` is the installed wheel. Exit status 5
# (no tests collected) is a failure like any other non-zero status.
cd "$work"
status=0
BLOOMLAB_REQUIRE_DUCKDB=1 "$py" -m pytest -q -p no:cacheprovider "$here/tests" || status=$?
if [ "$status" -eq 5 ]; then
    fail "pytest collected no tests"
elif [ "$status" -ne 0 ]; then
    fail "pytest failed (exit status $status)"
fi
