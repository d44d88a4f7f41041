#!/usr/bin/env bash
# Writes the sample HTML run report the docs show, and a screenshot of it in headless Chromium:
#
#   scripts/sample-report.sh          (ferry: .build/debug/ferry, or FERRY=path)
#
# docs/images/import-shop-report.html: `ferry run pipelines/import-shop.yml --report …` (the
# README's quick start), run in a fresh copy of the job, model and data at /tmp/ferry-sample so
# that the paths the report names are the same on every machine; and
# docs/images/import-shop-report.png: the page as headless Chromium draws it, offline (every host
# name unresolvable). Needs Chromium (Debian: apt-get install chromium). Run it again after a
# change to the report's page and commit both files.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
ferry="${FERRY:-$root/.build/debug/ferry}"
[ -x "$ferry" ] || { echo "sample-report: no ferry at $ferry; run swift build first (or set FERRY)" >&2; exit 1; }
chromium="$(command -v chromium || command -v chromium-browser || command -v google-chrome || true)"
[ -n "$chromium" ] || { echo "sample-report: Chromium is not on PATH (Debian: apt-get install chromium)" >&2; exit 1; }

sample=/tmp/ferry-sample
rm -rf "$sample"
mkdir -p "$sample/pipelines" "$sample/samples/models" "$sample/out"
cp "$root/pipelines/import-shop.yml" "$sample/pipelines/"
cp -R "$root/samples/models/Shop" "$sample/samples/models/"
cp -R "$root/samples/data" "$sample/samples/"
mkdir -p "$root/docs/images"
html="$root/docs/images/import-shop-report.html"
png="$root/docs/images/import-shop-report.png"
(cd "$sample" && "$ferry" run pipelines/import-shop.yml --report "$html" --quiet)

profile="$(mktemp -d)"
trap 'rm -rf "$profile" "$sample"' EXIT
"$chromium" --headless --no-sandbox --disable-gpu --hide-scrollbars --no-first-run \
    --user-data-dir="$profile" --host-resolver-rules="MAP * ~NOTFOUND" --window-size=1500,1250 \
    --screenshot="$png" "file://$html" >/dev/null 2>&1
echo "sample-report: $html"
echo "sample-report: $png"
