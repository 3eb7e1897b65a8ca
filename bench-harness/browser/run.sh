#!/usr/bin/env bash
# The HTML report in a real browser: writes the report from the committed results with
# `bench-harness plot` into a fresh directory (or DIR), opens it in headless Chromium and
# checks it (browser/check.cjs); the screenshot goes to SHOT (default DIR/report.png).
#
#   bench-harness/browser/run.sh [DIR [SHOT]]
#
# Installs Debian's chromium with apt-get and playwright-core from npm (cached in
# ~/.cache/bloomlab/browser-check) when they are missing, and fails if either cannot be had.
set -euo pipefail
cd "$(dirname "$0")/../.."
dir="${1:-$(mktemp -d)}"
shot="${2:-$dir/report.png}"
playwright="playwright-core@1.64.1"

if ! command -v chromium >/dev/null 2>&1; then
    echo "installing chromium (Debian)"
    if ! { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; }; then
        echo "chromium could not be installed: the browser check cannot run" >&2
        exit 1
    fi
fi
cache="${XDG_CACHE_HOME:-$HOME/.cache}/bloomlab/browser-check"
if [ ! -f "$cache/node_modules/playwright-core/package.json" ]; then
    mkdir -p "$cache"
    if ! npm install --prefix "$cache" --no-audit --no-fund --silent "$playwright"; then
        echo "$playwright could not be installed from npm: the browser check cannot run" >&2
        exit 1
    fi
fi

# The report from the committed results, drawn by this tree's harness: the binary that
# `cargo test --workspace` builds (so in CI, right after the tests, nothing is compiled again).
exe="$(cargo test --workspace --no-run --message-format=json 2>/dev/null | node -e '
let out = "";
require("readline").createInterface({ input: process.stdin }).on("line", (l) => {
  const m = JSON.parse(l);
  if (m.reason === "compiler-artifact" && m.target.name === "bench-harness"
      && m.target.kind.includes("bin") && !m.profile.test && m.executable) out = m.executable;
}).on("close", () => console.log(out));
')"
if [ -z "$exe" ]; then
    echo "the bench-harness binary was not built (cargo test --workspace --no-run)" >&2
    exit 1
fi
mkdir -p "$dir/large"
cp results/results.json "$dir/"
cp results/large/results.json "$dir/large/"
"$exe" plot --results "$dir/results.json" >/dev/null
NODE_PATH="$cache/node_modules" node bench-harness/browser/check.cjs "$dir" "$shot"
