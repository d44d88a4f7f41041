#!/usr/bin/env bash
# ferry check for a CI job: builds ferry (or your package that runs ferry's command line with
# your migration policies), migrates a copy of every snapshot to the current model, verifies it
# and writes a JUnit report. The GitHub Action (action.yml) and the GitLab job
# (ci/gitlab-ferry-check.yml) run this script; so does ferry's own CI, on its samples.
#
# Settings, from the environment:
#   FERRY_CHECK_SNAPSHOTS   snapshot stores or folders of them, separated by spaces (required)
#   FERRY_CHECK_MODEL       the model: an .xcdatamodeld or a ferry model bundle (required)
#   FERRY_CHECK_MAPPINGS    folders of mapping files or Xcode mapping models, by spaces (optional)
#   FERRY_CHECK_EXPECT      an expectations file (optional)
#   FERRY_CHECK_JUNIT       the JUnit report to write (default ferry-check.xml)
#   FERRY_CHECK_PACKAGE     the Swift package to build (default: ferry's own, beside this script)
#   FERRY_CHECK_PRODUCT     its executable product (default ferry)
#   FERRY_CHECK_ARGS        more arguments for ferry check, by spaces (e.g. "--to 3 --checksums")
# Paths are relative to the directory the script is started in (the app's repository).
# Exit status: ferry check's (0 every snapshot passed, 3 a check failed, 64 a usage error, …).
set -euo pipefail
ferry_root="$(cd "$(dirname "$0")/.." && pwd)"
: "${FERRY_CHECK_SNAPSHOTS:?set FERRY_CHECK_SNAPSHOTS to the snapshot stores or folders}"
: "${FERRY_CHECK_MODEL:?set FERRY_CHECK_MODEL to the model (.xcdatamodeld or a ferry model bundle)}"
package="${FERRY_CHECK_PACKAGE:-$ferry_root}"
product="${FERRY_CHECK_PRODUCT:-ferry}"
junit="${FERRY_CHECK_JUNIT:-ferry-check.xml}"

echo "ferry-check: building $product in $package" >&2
swift build --package-path "$package" --product "$product" >&2
binary="$(swift build --package-path "$package" --show-bin-path)/$product"

read -r -a snapshots <<<"$FERRY_CHECK_SNAPSHOTS"
arguments=(check "${snapshots[@]}" --model "$FERRY_CHECK_MODEL" --junit "$junit")
if [ -n "${FERRY_CHECK_MAPPINGS:-}" ]; then
    read -r -a mappings <<<"$FERRY_CHECK_MAPPINGS"
    for folder in "${mappings[@]}"; do arguments+=(--mappings "$folder"); done
fi
[ -n "${FERRY_CHECK_EXPECT:-}" ] && arguments+=(--expect "$FERRY_CHECK_EXPECT")
if [ -n "${FERRY_CHECK_ARGS:-}" ]; then
    read -r -a extra <<<"$FERRY_CHECK_ARGS"
    arguments+=("${extra[@]}")
fi
mkdir -p "$(dirname "$junit")"
exec "$binary" "${arguments[@]}"
