#!/usr/bin/env bash
# Builds ferry's libFuzzer targets (the separate package in Fuzz/) and runs each on its seed corpus.
#
#   scripts/fuzz.sh [--seconds N] [--jobs J] [target…]
#
# Targets: csv json yaml xml predicate expression (default: all). Each runs N seconds (default 60).
# Seeds come from ../shared/data (csv-spectrum, JSONTestSuite; set FERRY_SHARED_DATA to move it),
# the test fixtures, the samples and Fuzz/Seeds; the corpus grows in Fuzz/.build/corpus/<target>.
# A crash, a sanitizer report or a slow input stops the run with a non-zero status and leaves the
# input in Fuzz/crashes/; turn it into a regression test, fix it, and run again.
#
# CI runs `scripts/fuzz.sh --seconds 20` (all six targets, about five minutes with the build);
# for a longer local run: `scripts/fuzz.sh --seconds 3600 --jobs 4 yaml`.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
fuzz="$root/Fuzz"

seconds=60
jobs=1
targets=()
while [ $# -gt 0 ]; do
    case "$1" in
        --seconds) seconds="$2"; shift 2 ;;
        --jobs) jobs="$2"; shift 2 ;;
        -h|--help) sed -n '2,13p' "$0"; exit 0 ;;
        csv|json|yaml|xml|predicate|expression) targets+=("$1"); shift ;;
        *) echo "fuzz.sh: unknown argument '$1' (targets: csv json yaml xml predicate expression)" >&2; exit 64 ;;
    esac
done
[ ${#targets[@]} -gt 0 ] || targets=(csv json yaml xml predicate expression)

shared="${FERRY_SHARED_DATA:-$root/../shared/data}"

# Copies the files matching `find` arguments (under 64 KiB) into a corpus, each named by its
# hash: Xcode's documents all have the same names (`contents`, `xcmapping.xml`).
seed_by_hash() {
    local corpus="$1" from="$2"
    shift 2
    [ -d "$from" ] || return 0
    find "$from" -type f -size -64k "$@" -print0 | while IFS= read -r -d '' file; do
        cp -n "$file" "$corpus/$(sha1sum <"$file" | cut -c1-16)"
    done
}

# Copies the files matching `find` arguments (under 64 KiB, so that seeds stay quick) into a corpus.
seed() {
    local corpus="$1" from="$2"
    shift 2
    [ -d "$from" ] || return 0
    find "$from" -type f -size -64k "$@" -exec cp -n {} "$corpus"/ \; 2>/dev/null || true
}

echo "fuzz: building ${targets[*]} (debug, -sanitize=fuzzer,address)"
# lld: gold fails with an internal error on the sanitizer runtime's symbols.
flags=(-c debug -Xswiftc -sanitize=fuzzer,address -Xswiftc -parse-as-library -Xswiftc -use-ld=lld)
# One product per build (swift build takes one --product); after the first, the rest only link.
for target in "${targets[@]}"; do (cd "$fuzz" && swift build "${flags[@]}" --product "fuzz-$target"); done
bin="$(cd "$fuzz" && swift build "${flags[@]}" --show-bin-path)"

mkdir -p "$fuzz/crashes"
status=0
for target in "${targets[@]}"; do
    corpus="$fuzz/.build/corpus/$target"
    mkdir -p "$corpus"
    case "$target" in
        csv)
            seed "$corpus" "$shared/csv-spectrum" -name '*.csv'
            seed "$corpus" "$root/Tests/FerryFormatsTests/Fixtures/csv"
            seed "$corpus" "$root/samples/data" -name '*.csv' ;;
        json)
            seed "$corpus" "$shared/JSONTestSuite/test_parsing"
            seed "$corpus" "$root/Tests/FerryFormatsTests/Fixtures/json"
            seed "$corpus" "$root/samples/data" \( -name '*.json' -o -name '*.ndjson' \) ;;
        yaml)
            seed "$corpus" "$root/samples" -name '*.yml'
            seed "$corpus" "$root/pipelines" -name '*.yml'
            seed "$corpus" "$root/Tests" -path '*Fixtures*' -name '*.yml' ;;
        xml)
            seed_by_hash "$corpus" "$shared/coredata" \( -name contents -o -name xcmapping.xml \)
            seed_by_hash "$corpus" "$root/Tests" -path '*Fixtures*' \( -name contents -o -name xcmapping.xml \)
            seed_by_hash "$corpus" "$root/samples" \( -name contents -o -name xcmapping.xml \) ;;
        predicate|expression)
            seed "$corpus" "$fuzz/Seeds/$target" ;;
    esac
    echo "fuzz: $target for ${seconds}s on $(find "$corpus" -type f | wc -l) inputs"
    parallel=()
    # Parallel jobs write their logs to fuzz-<n>.log in the working folder: run them in .build.
    [ "$jobs" -gt 1 ] && parallel=(-jobs="$jobs" -workers="$jobs")
    if ! (cd "$fuzz/.build" && "$bin/fuzz-$target" "$corpus" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
        -max_len=8192 -print_final_stats=1 -artifact_prefix="$fuzz/crashes/$target-" ${parallel[@]+"${parallel[@]}"} \
        2>"$fuzz/.build/$target.log"); then
        echo "fuzz: $target found a problem; input saved in Fuzz/crashes/ (log: Fuzz/.build/$target.log)" >&2
        grep -E "ERROR|SUMMARY|Fatal error|Test unit written" "$fuzz/.build/$target.log" >&2 || tail -20 "$fuzz/.build/$target.log" >&2
        status=1
    else
        grep -E "stat::number_of_executed_units|stat::new_units_added" "$fuzz/.build/$target.log" | sed "s/^/fuzz: $target /" || true
    fi
done
exit $status
