#!/bin/sh
# Measures the JSON and NDJSON readers on generated 1M-record files (release build).
# FERRY_BENCH_RECORDS=100000 scripts/bench-json.sh for a quicker run.
set -e
cd "$(dirname "$0")/.."
FERRY_BENCH=1 swift test -c release --filter JSONReaderBenchmark 2>&1 | grep -E 'Reader:|passed|failed|error'
