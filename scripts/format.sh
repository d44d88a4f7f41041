#!/usr/bin/env bash
# Formats every tracked Swift file with the project's .swift-format (4 spaces, 120 columns,
# swift-log's settings plus the three Never* lint rules), as swift-argument-parser's
# Scripts/format.sh does.
#
#   scripts/format.sh           format in place
#   scripts/format.sh --check   fail (exit 1) if any file is not formatted; CI runs this
#   scripts/format.sh --lint    swift format lint --strict over ferry's sources, the fuzz targets and
#                               the samples (the Never* rules: no force unwrap, force try or implicitly
#                               unwrapped optional); tests may unwrap; CI runs this too
set -euo pipefail
cd "$(dirname "$0")/.."

mapfile -t files < <(git ls-files '*.swift')
if [[ "${1:-}" == "--lint" ]]; then
    mapfile -t linted < <(git ls-files 'Sources/*.swift' 'Fuzz/*.swift' 'samples/*.swift')
    exec swift format lint --strict --configuration .swift-format --parallel "${linted[@]}"
fi
if [[ "${1:-}" == "--check" ]]; then
    scratch=$(mktemp -d)
    trap 'rm -rf "$scratch"' EXIT
    printf '%s\0' "${files[@]}" | xargs -0 cp --parents -t "$scratch"
    cp .swift-format "$scratch/"
    (cd "$scratch" && swift format format --configuration .swift-format --parallel --in-place "${files[@]}")
    unformatted=0
    for file in "${files[@]}"; do
        if ! cmp -s "$file" "$scratch/$file"; then
            echo "not formatted: $file (run scripts/format.sh)"
            unformatted=1
        fi
    done
    exit "$unformatted"
fi
swift format format --configuration .swift-format --parallel --in-place "${files[@]}"
