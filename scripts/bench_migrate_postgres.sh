#!/usr/bin/env bash
# Migration speed of a PostgreSQL store against a hand-written CREATE TABLE … AS SELECT, in one
# run, alternating the two.
#
#   eval "$(scripts/pg-test-server.sh start)"       # or PGURL=postgresql://user@host:port/db
#   scripts/bench_migrate_postgres.sh               # ROWS=1000000 RUNS=3, release build
#   ROWS=100000 scripts/bench_migrate_postgres.sh
#
# On a store of ROWS customers (scripts/bench/migrate, version 1) in the schema bench_mig_v1:
#   psql         CREATE TABLE … AS SELECT of the version-2 rows (the rename, the new columns, the
#                widening) from bench_mig_v1 into a fresh schema, then the same primary key and
#                unique index ferry makes, in one transaction
#   lightweight  ferry migrate --to 2 --no-backup of a copy of bench_mig_v1 (inferred: it runs in
#                the server, INSERT … SELECT from schema to schema, verified there), target <= 1.5x
# The copy each ferry run migrates is made by `ferry copy` beforehand, untimed. See
# docs/benchmarks.md.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
ROWS=${ROWS:-1000000}
RUNS=${RUNS:-3}
FERRY=${FERRY:-$ROOT/.build/release/ferry}
PGURL=${PGURL:-${FERRY_TEST_POSTGRES_URL:-}}
BUNDLE=$ROOT/scripts/bench/migrate
OUT=$ROOT/bench-out
WORK=$OUT/migrate-postgres
TIME=/usr/bin/time
die() { echo "bench_migrate_postgres.sh: $*" >&2; exit 1; }
[ -x "$FERRY" ] || die "ferry binary not found at $FERRY; build it with 'swift build -c release --product ferry' (or set FERRY=path)"
[ -n "$PGURL" ] || die "no server: set PGURL, or start one with eval \"\$(scripts/pg-test-server.sh start)\""
command -v psql >/dev/null || die "psql is needed for the baseline"
mkdir -p "$WORK"
CSV=$OUT/customers-$ROWS.csv
[ -f "$CSV" ] || python3 "$ROOT/scripts/bench_data.py" "$ROWS" "$OUT" >&2

V1=$WORK/v1-$ROWS.sqlite
if [ ! -f "$V1" ]; then
    echo "making a version-1 store of $ROWS customers" >&2
    "$FERRY" import "$CSV" --store "$V1.tmp" --entity customers --model "$BUNDLE/v1.yml" --quiet && mv "$V1.tmp" "$V1"
fi
store() { printf '%s?schema=%s' "$PGURL" "$1"; }
drop() { psql "$PGURL" -qAt -v ON_ERROR_STOP=1 -c "SET client_min_messages = warning; DROP SCHEMA IF EXISTS $1 CASCADE" >/dev/null; }
drop bench_mig_v1
"$FERRY" copy "$V1" "$(store bench_mig_v1)" --quiet

BASELINE="BEGIN;
DROP SCHEMA IF EXISTS bench_mig_base CASCADE; CREATE SCHEMA bench_mig_base;
CREATE TABLE bench_mig_base.customers AS SELECT ferry_pk, id, uuid, email, name AS full_name, CAST(age AS integer) AS age,
    balance, created_at, active, notes, CAST(NULL AS text) AS segment, CAST(0 AS integer) AS score FROM bench_mig_v1.customers;
ALTER TABLE bench_mig_base.customers ADD PRIMARY KEY (ferry_pk);
CREATE UNIQUE INDEX ON bench_mig_base.customers (id);
COMMIT;"

RESULTS=$WORK/runs-$ROWS.tsv
printf 'case\trun\twall_s\tpeak_rss_kib\n' >"$RESULTS"
# measure CASE RUN -- command...
. "$ROOT/scripts/bench/measure.sh"
echo "PostgreSQL migration benchmark: $ROWS customers, $RUNS run(s) each; load average $(cut -d' ' -f1-3 /proc/loadavg)" >&2
for run in $(seq 1 "$RUNS"); do
    drop bench_mig_base
    measure psql "$run" -- psql "$PGURL" -qAt -v ON_ERROR_STOP=1 -c "$BASELINE"
    [ "$(psql "$PGURL" -qAt -c 'SELECT count(*) FROM bench_mig_base.customers')" = "$ROWS" ] || die "the psql baseline did not copy $ROWS rows"
    drop bench_mig_light
    psql "$PGURL" -qAt -v ON_ERROR_STOP=1 -c "SET client_min_messages = warning; DROP SCHEMA IF EXISTS bench_mig_light_next CASCADE" >/dev/null
    "$FERRY" copy "$V1" "$(store bench_mig_light)" --quiet
    measure lightweight "$run" -- "$FERRY" migrate "$(store bench_mig_light)" --model "$BUNDLE" --to 2 --no-backup --quiet
    [ "$(psql "$PGURL" -qAt -c "SELECT count(*) FROM bench_mig_light.customers WHERE score = 0")" = "$ROWS" ] || die "the migration did not write $ROWS version-2 rows"
done
drop bench_mig_base
drop bench_mig_light
drop bench_mig_v1
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
python3 - "$RESULTS" "$ROWS" <<'PY'
import statistics, sys
runs = {}
for line in open(sys.argv[1]).read().splitlines()[1:]:
    name, _, wall, rss = line.split("\t")
    runs.setdefault(name, []).append((float(wall), int(rss)))
base = statistics.median(w for w, _ in runs["psql"])
print(f"PostgreSQL migration of {int(sys.argv[2])} customers; wall time is the median, RSS the largest")
print(f"{'case':<12} {'median s':>9} {'records/s':>11} {'peak MiB':>9} {'vs psql':>8} {'target':>7}")
for name, target in [("psql", None), ("lightweight", 1.5)]:
    wall = statistics.median(w for w, _ in runs[name])
    rss = max(r for _, r in runs[name]) / 1024
    ratio = wall / base
    mark = "" if target is None else (f"<= {target}x" + ("" if ratio <= target else "  MISSED"))
    print(f"{name:<12} {wall:>9.2f} {int(int(sys.argv[2]) / wall):>11,} {rss:>9.1f} {ratio:>7.2f}x {mark:>7}")
PY
