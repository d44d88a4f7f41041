#!/usr/bin/env bash
# Import throughput of ferry against SQLite's own limit on this machine.
#
#   scripts/bench.sh                 # ROWS=1000000 RUNS=3
#   scripts/bench.sh --quick         # ROWS=100000 RUNS=1
#   ROWS=250000 RUNS=5 scripts/bench.sh
#   scripts/bench.sh --sqlite-only   # only the sqlite3 baselines (no ferry needed)
#   scripts/bench.sh --no-build      # use .build/release/ferry as it is
#   scripts/bench.sh --export-only   # only the export section
#   scripts/bench.sh --mutations     # only batch update/delete against sqlite3
#   scripts/bench.sh --verify        # only ferry verify against sqlite3 (reuses bench-out/run/ferry.sqlite)
#   scripts/bench.sh --imports-only  # only the import section (no export, verify, update/delete)
#   scripts/bench.sh --postgres      # only PostgreSQL: ferry import vs psql \copy FROM, ferry export
#                                    # (CSV, NDJSON) vs psql \copy (SELECT …) TO and row_to_json
#                                    # (server: FERRY_BENCH_POSTGRES_URL, else FERRY_TEST_POSTGRES_URL;
#                                    #  eval "$(scripts/pg-test-server.sh start)" makes one)
#   scripts/bench.sh --rows 10000000 --imports-only   # the 10M-row scale run (same as ROWS=10000000)
#
# Measures, alternating the tools, RUNS times each, into a fresh database every time:
#   ferry import customers-N.csv|.ndjson|.json --store fresh.sqlite --entity customers --model scripts/bench/customers.yml
#   ferry import customers-N.csv --store fresh.sqlite --entity customers   (an inferred model)
#   sqlite3 fresh.db '.import --csv --skip 1 customers-N.csv customers'   (same table, types, constraints, indexes)
#   csv2sqlite fresh.db customers-N.csv customers   (scripts/bench/csv2sqlite.c, built with cc -O2: a
#                                                    hand-written C loader into the same table; its rows
#                                                    are checked against sqlite3's by count and checksum)
# and orders-N.csv (N orders, each naming a customer by id) into a copy of the customers store,
# with `customer` resolved per row (scripts/bench/orders-job.yml), against sqlite3 .import of
# the same file into a table with the same indexes (no resolution: the ids are stored as they are)
# and prints median wall time, records/s, peak RSS, the ratios to sqlite3 and to the C loader, and
# the CPU time (user + sys) with its ratio to sqlite3's, then SQLite's own
# limit: INSERT ... SELECT of the same rows from an attached database (no parsing at all).
# Then the export section: `ferry export` of the N-row store (CSV, NDJSON, and a predicate export)
# against `sqlite3 -csv STORE "SELECT ..."` of the same columns and rows, with the targets
# CSV <= 1.5x, NDJSON <= 2x, predicate <= 1.5x.
# Then `ferry verify --checks all` on the imported store against sqlite3's integrity_check,
# foreign_key_check and counts on the same file. See docs/benchmarks.md.
# Then batch update and batch delete of half the rows (ferry update/delete against the same
# UPDATE/DELETE statement in sqlite3, each on a fresh copy of the store).
# See docs/benchmarks.md.
set -euo pipefail

cd "$(dirname "$0")/.."
ROOT=$(pwd)

ROWS=${ROWS:-1000000}
RUNS=${RUNS:-3}
BUILD=1
FERRY_RUNS=1
IMPORTS=1
IMPORTS_ONLY=0
MUTATIONS_ONLY=0
VERIFY_ONLY=0
POSTGRES_ONLY=0
while [ $# -gt 0 ]; do
    case "$1" in
        --quick) ROWS=100000; RUNS=1 ;;
        --sqlite-only) FERRY_RUNS=0 ;;
        --no-build) BUILD=0 ;;
        --export-only) IMPORTS=0 ;;
        -h|--help) sed -n '2,38p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        --mutations) MUTATIONS_ONLY=1 ;;
        --imports-only) IMPORTS_ONLY=1 ;;
        --rows)
            [ $# -ge 2 ] || { echo "bench.sh: --rows needs a number" >&2; exit 2; }
            ROWS=$2
            shift ;;
        --verify) VERIFY_ONLY=1 ;;
        --postgres) POSTGRES_ONLY=1 ;;
        *) echo "bench.sh: unknown argument '$1' (try --help)" >&2; exit 2 ;;
    esac
    shift
done
case "$ROWS$RUNS" in *[!0-9]*) echo "bench.sh: ROWS and RUNS must be whole numbers" >&2; exit 2 ;; esac
[ "$ROWS" -gt 0 ] && [ "$RUNS" -gt 0 ] || { echo "bench.sh: ROWS and RUNS must be positive" >&2; exit 2; }

FERRY=${FERRY:-$ROOT/.build/release/ferry}
MODEL=$ROOT/scripts/bench/customers.yml
OUT=$ROOT/bench-out
WORK=$OUT/run
TIME=/usr/bin/time

die() { echo "bench.sh: $*" >&2; exit 1; }
command -v sqlite3 >/dev/null || die "sqlite3 not found (apt-get install sqlite3)"
command -v python3 >/dev/null || die "python3 not found (needed to generate the data)"
[ -x "$TIME" ] || die "$TIME not found (apt-get install time); it measures wall time and peak RSS"

if [ "$FERRY_RUNS" = 1 ]; then
    if [ "$BUILD" = 1 ]; then
        echo "building: swift build -c release --product ferry" >&2
        swift build -c release --product ferry >&2 || die "swift build -c release failed"
    fi
    [ -x "$FERRY" ] || die "ferry binary not found at $FERRY; build it with 'swift build -c release' (or set FERRY=path, or run with --sqlite-only)"
    "$FERRY" --help >/dev/null 2>&1 || die "$FERRY does not run ('$FERRY --help' failed)"
fi

mkdir -p "$OUT" "$WORK"

# --- data (cached by N) -------------------------------------------------------------------
data() {   # data N: makes sure customers-N.{csv,ndjson,json} exist
    local n=$1
    if [ ! -f "$OUT/customers-$n.csv" ] || [ ! -f "$OUT/customers-$n.ndjson" ] || [ ! -f "$OUT/customers-$n.json" ]; then
        echo "generating $n records: python3 scripts/bench_data.py $n bench-out" >&2
        python3 "$ROOT/scripts/bench_data.py" "$n" "$OUT"
    fi
}
# orders-N.csv: N orders, order i naming customer ((i * 7919) mod N) + 1 (every id exists).
orders_data() {   # orders_data N
    local n=$1
    [ -f "$OUT/orders-$n.csv" ] && return
    echo "generating $n orders: bench-out/orders-$n.csv" >&2
    python3 - "$n" "$OUT/orders-$n.csv" <<'PY'
import sys
n, path = int(sys.argv[1]), sys.argv[2]
with open(path + ".tmp", "w", encoding="utf-8", newline="") as out:
    out.write("number,customer_id,total,placed_at\n")
    rows = []
    for i in range(1, n + 1):
        cents = (i * 37) % 100000 + 1
        rows.append(f"O-{i:08d},{(i * 7919) % n + 1},{cents // 100}.{cents % 100:02d},2022-{i % 12 + 1:02d}-{i % 28 + 1:02d}T10:{i % 60:02d}:00.000Z\n")
        if len(rows) == 20000:
            out.write("".join(rows))
            rows = []
    out.write("".join(rows))
import os
os.replace(path + ".tmp", path)
PY
}
data "$ROWS"
CSV=$OUT/customers-$ROWS.csv
NDJSON=$OUT/customers-$ROWS.ndjson
JSON=$OUT/customers-$ROWS.json

# --- the sqlite3 table: the DDL of a store ferry made ---------------------------------------
# ferry's table has `ferry_pk INTEGER PRIMARY KEY` (an alias of the rowid) besides the nine
# attribute columns. `.import` of a 9-column CSV into a 10-column table prints a warning per row
# (costing about a quarter of the import time), so the baseline table leaves the ferry_* columns
# out: without an INTEGER PRIMARY KEY column SQLite still keys the table by its rowid, the same
# b-tree ferry writes. Every other column, type, constraint, index and trigger is kept.
DDL=$WORK/customers.sql
if [ "$FERRY_RUNS" = 1 ]; then
    data 1000
    rm -f "$WORK"/schema.sqlite*
    "$FERRY" import "$OUT/customers-1000.csv" --store "$WORK/schema.sqlite" --entity customers --model "$MODEL" \
        >"$WORK/schema.log" 2>&1 || { cat "$WORK/schema.log" >&2; die "ferry import of a 1000-row sample failed"; }
    sqlite3 "$WORK/schema.sqlite" '.schema customers' >"$WORK/ferry-schema.sql"
    [ -s "$WORK/ferry-schema.sql" ] || die "the store ferry made has no table 'customers'"
    python3 - "$WORK/ferry-schema.sql" >"$DDL" <<'PY'
import re, sys
text = open(sys.argv[1], encoding="utf-8").read()
statements = [s.strip() for s in re.split(r";\s*\n", text.strip().rstrip(";")) if s.strip()]
out = []
def is_ferry(part):
    """A ferry_* column, or a table constraint over one (PRIMARY KEY ("ferry_pk"), ...)."""
    if re.match(r'\s*["`\[]?ferry_', part):
        return True
    return re.match(r"\s*(CONSTRAINT|PRIMARY|UNIQUE|CHECK|FOREIGN)\b", part, re.I) is not None and "ferry_" in part
for statement in statements:
    if re.match(r"CREATE TABLE", statement, re.I):
        head, body = statement.split("(", 1)
        body, tail = body.rsplit(")", 1)             # tail: WITHOUT ROWID, STRICT, ...
        parts, depth, current = [], 0, ""
        for ch in body:                      # split the column list at top-level commas
            if ch == "(":
                depth += 1
            elif ch == ")":
                depth -= 1
            if ch == "," and depth == 0:
                parts.append(current)
                current = ""
            else:
                current += ch
        parts.append(current)
        kept = [p.strip() for p in parts if not is_ferry(p)]
        out.append(head + "(" + ", ".join(kept) + ")" + tail + ";")
    elif re.search(r"\bferry_pk\b", statement.split(" ON ", 1)[-1]):
        continue                              # an index or trigger over a dropped column
    else:
        out.append(statement + ";")
print("\n".join(out))
PY
else
    # No ferry: the table ferry's store layout describes (docs/files.md, FerryLayout).
    cat >"$DDL" <<'SQL'
CREATE TABLE "customers" ("id" INTEGER NOT NULL, "uuid" TEXT, "email" TEXT, "name" TEXT, "age" INTEGER, "balance" TEXT, "created_at" TEXT, "active" INTEGER, "notes" TEXT);
CREATE UNIQUE INDEX "ferry_unique_customers_id" ON "customers" ("id");
SQL
fi

# --- batch update and batch delete (a function; runs after the imports, or alone with --mutations) ----------------------------------------------------------
# Half the rows of the store ferry just made, changed by ferry (`ferry update` / `ferry delete`
# with predicate `id BETWEEN {1, N/2}`) and by the same statement typed into sqlite3, each on a
# fresh copy of the same store file.
bench_mutations() {
    HALF=$((ROWS / 2))
    IMPORT_RESULTS=${RESULTS:-}
    RESULTS=$OUT/mutations-$ROWS.tsv
    printf 'tool\tformat\trun\twall_s\tpeak_rss_kib\tcpu_s\n' >"$RESULTS"
    MUT_DB=$WORK/mutate.sqlite
    MUT_SOURCE=$WORK/mutate-source.sqlite
    fresh "$MUT_SOURCE"
    "$FERRY" import "$CSV" --store "$MUT_SOURCE" --entity customers --model "$MODEL" --quiet \
        >"$WORK/mutate-source.log" 2>&1 || { cat "$WORK/mutate-source.log" >&2; die "ferry import of the store to change failed"; }
    copy_store() { fresh "$MUT_DB"; cp "$MUT_SOURCE" "$MUT_DB"; }
    expect_rows() {   # expect_rows SQL VALUE
        local got
        got=$(sqlite3 "$MUT_DB" "$1") || die "cannot query $MUT_DB"
        [ "$got" = "$2" ] || die "$MUT_DB: '$1' gave $got, expected $2"
    }
    echo "batch update and delete of $HALF of $ROWS rows, $RUNS run(s) each" >&2
    for run in $(seq 1 "$RUNS"); do
        copy_store
        measure sqlite3 update "$run" "$WORK/sqlite3-update.log" -- \
            sqlite3 "$MUT_DB" "UPDATE customers SET active = 0 WHERE id BETWEEN 1 AND $HALF"
        expect_rows "SELECT count(*) FROM customers WHERE active = 0 AND id <= $HALF" "$HALF"
        copy_store
        measure ferry update "$run" "$WORK/ferry-update.log" -- \
            "$FERRY" update --store "$MUT_DB" --entity customers --where "id BETWEEN {1, $HALF}" --set active=false --quiet
        expect_rows "SELECT count(*) FROM customers WHERE active = 0 AND id <= $HALF" "$HALF"
        copy_store
        measure sqlite3 delete "$run" "$WORK/sqlite3-delete.log" -- \
            sqlite3 "$MUT_DB" "DELETE FROM customers WHERE id BETWEEN 1 AND $HALF"
        expect_rows "SELECT count(*) FROM customers" "$((ROWS - HALF))"
        copy_store
        measure ferry delete "$run" "$WORK/ferry-delete.log" -- \
            "$FERRY" delete --store "$MUT_DB" --entity customers --where "id BETWEEN {1, $HALF}" --quiet
        expect_rows "SELECT count(*) FROM customers" "$((ROWS - HALF))"
    done
    fresh "$MUT_DB"
    fresh "$MUT_SOURCE"
    python3 - "$RESULTS" "$HALF" <<'PY'
import statistics, sys
path, half = sys.argv[1], int(sys.argv[2])
runs = {}
for line in open(path).read().splitlines()[1:]:
    tool, op, _, wall, rss = line.split("\t")[:5]
    runs.setdefault((op, tool), []).append((float(wall), int(rss)))
print(f"batch update / delete of {half} rows (median wall time; target: ferry <= 1.5x sqlite3)")
print(f"{'operation':<10} {'sqlite3 s':>10} {'ferry s':>9} {'ferry MiB':>10} {'ratio':>7}")
for op in ("update", "delete"):
    base = statistics.median(w for w, _ in runs[(op, "sqlite3")])
    ferry = statistics.median(w for w, _ in runs[(op, "ferry")])
    rss = max(r for _, r in runs[(op, "ferry")]) / 1024
    ratio = ferry / base if base > 0 else float("inf")
    print(f"{op:<10} {base:>10.2f} {ferry:>9.2f} {rss:>10.1f} {ratio:>6.2f}x")
PY
    echo "raw runs: ${RESULTS#$ROOT/}" >&2
    RESULTS=$IMPORT_RESULTS
}

# --- verification (a function; runs after the imports, or alone with --verify) -------------------
# `ferry verify --checks all` on the store the last ferry import made (ROWS customers) against
# sqlite3 running PRAGMA integrity_check; PRAGMA foreign_key_check; and one SELECT COUNT(*) per
# entity on the same file, alternating, RUNS times each. Target: ferry at most 2x sqlite3.
# ferry's JSON reports (bench-out/run/verify-ferry-RUN.json) give the time of each check.
bench_verification() {
    local saved=${RESULTS:-}
    RESULTS=$OUT/verify-$ROWS.tsv
    printf 'tool\tformat\trun\twall_s\tpeak_rss_kib\tcpu_s\n' >"$RESULTS"
    COUNTS=$(sqlite3 "$FERRY_DB" "SELECT group_concat('SELECT COUNT(*) FROM \"' || name || '\";', ' ') FROM ferry_entities")
    echo "verification of $ROWS records, $RUNS run(s) each" >&2
    for run in $(seq 1 "$RUNS"); do
        measure sqlite3 verify "$run" "$WORK/verify-sqlite3.log" -- \
            sqlite3 "$FERRY_DB" "PRAGMA integrity_check; PRAGMA foreign_key_check; $COUNTS"
        measure ferry verify "$run" "$WORK/verify-ferry.log" -- \
            "$FERRY" verify "$FERRY_DB" --checks all --model "$MODEL" --quiet --report "$WORK/verify-ferry-$run.json"
    done
    grep -q '^ok$' "$WORK/verify-sqlite3.log" || die "sqlite3's integrity_check did not say ok (see $WORK/verify-sqlite3.log)"
    python3 - "$RESULTS" "$ROWS" "$WORK" "$RUNS" <<'PY'
import json, statistics, sys
runs = {}
for line in open(sys.argv[1]).read().splitlines()[1:]:
    tool, _, _, wall, rss = line.split("\t")[:5]
    runs.setdefault(tool, []).append((float(wall), int(rss)))
base = statistics.median(w for w, _ in runs["sqlite3"])
print(f"verification of {int(sys.argv[2])} records (every check vs integrity_check + foreign_key_check + counts)")
print(f"{'tool':<8} {'median s':>9} {'peak MiB':>9} {'vs sqlite3':>11}")
for tool, values in runs.items():
    wall = statistics.median(w for w, _ in values)
    rss = max(r for _, r in values) / 1024
    print(f"{tool:<8} {wall:>9.2f} {rss:>9.1f} {(wall / base if base > 0 else float('inf')):>10.2f}x   (target: ferry <= 2.00x)")
checks = {}
for run in range(1, int(sys.argv[4]) + 1):
    report = json.load(open(f"{sys.argv[3]}/verify-ferry-{run}.json"))
    # The report shape of docs/report.schema.json: the verification is the first step's.
    for result in report["steps"][0]["verification"]["results"]:
        checks.setdefault(result["name"], []).append(result["elapsed_seconds"])
print("ferry's checks, median s (integrity_check runs on a second connection meanwhile):")
for name, values in checks.items():
    if statistics.median(values) >= 0.001:
        print(f"  {name:<32} {statistics.median(values):>7.3f}")
PY
    echo "raw runs: ${RESULTS#$ROOT/}" >&2
    RESULTS=$saved
}

# --- PostgreSQL import and export -----------------------------------------------------------
# ferry import of the CSV into a new PostgreSQL store (schema bench_ferry, made by each run)
# against psql's \copy of the same file into a table with the same columns, types, identity key,
# constraints and indexes (made from ferry's table with LIKE … INCLUDING ALL, emptied before each
# run), alternating, RUNS times each. psql sends the file and the server parses the CSV. When
# pgloader is installed (Debian: apt-get install pgloader), it is timed too, as a second anchor:
# LOAD CSV of the same file into a third such table (bench_pgloader), truncated by each run.
bench_postgres() {
    local url=${FERRY_BENCH_POSTGRES_URL:-${FERRY_TEST_POSTGRES_URL:-}}
    [ -n "$url" ] || die "--postgres needs a server: FERRY_BENCH_POSTGRES_URL or FERRY_TEST_POSTGRES_URL (eval \"\$(scripts/pg-test-server.sh start)\")"
    command -v psql >/dev/null || die "psql not found (apt-get install postgresql-client)"
    local store="$url?schema=bench_ferry" cols
    echo "benchmark: PostgreSQL import of $ROWS records, $RUNS run(s) each, $(nproc) CPU(s), $(psql --version), load $(cut -d' ' -f1-3 /proc/loadavg)" >&2
    psql -q -v ON_ERROR_STOP=1 "$url" -c 'SET client_min_messages = warning' -c 'DROP SCHEMA IF EXISTS bench_ferry CASCADE' -c 'DROP SCHEMA IF EXISTS bench_psql CASCADE' >/dev/null
    "$FERRY" import "$OUT/customers-1000.csv" --store "$store" --entity customers --model "$MODEL" --quiet >"$WORK/pg-schema.log" 2>&1 \
        || { cat "$WORK/pg-schema.log" >&2; die "ferry import into PostgreSQL failed"; }
    psql -q -v ON_ERROR_STOP=1 "$url" -c 'CREATE SCHEMA bench_psql' \
        -c 'CREATE TABLE bench_psql.customers (LIKE bench_ferry.customers INCLUDING ALL)' >/dev/null
    cols=$(head -1 "$CSV")
    local pgloader=""
    if command -v pgloader >/dev/null; then
        pgloader=$WORK/pgloader.load
        psql -q -v ON_ERROR_STOP=1 "$url" -c 'SET client_min_messages = warning' -c 'DROP SCHEMA IF EXISTS bench_pgloader CASCADE' \
            -c 'CREATE SCHEMA bench_pgloader' \
            -c 'CREATE TABLE bench_pgloader.customers (LIKE bench_ferry.customers INCLUDING ALL)' >/dev/null
        cat >"$pgloader" <<LOAD
LOAD CSV
     FROM '$CSV' ($cols)
     INTO ${url%%\?*}
     TARGET TABLE bench_pgloader.customers ($cols)
     WITH skip header = 1, fields terminated by ',', fields optionally enclosed by '"',
          fields escaped by double-quote, truncate;
LOAD
        echo "second anchor: $(pgloader --version 2>&1 | head -1)" >&2
    fi
    for run in $(seq 1 "$RUNS"); do
        psql -q "$url" -c 'SET client_min_messages = warning' -c 'DROP SCHEMA bench_ferry CASCADE' >/dev/null
        measure ferry postgres "$run" "$WORK/pg-ferry.log" -- \
            "$FERRY" import "$CSV" --store "$store" --entity customers --model "$MODEL"
        [ "$(psql -tA "$url" -c 'SELECT count(*) FROM bench_ferry.customers')" = "$ROWS" ] || die "bench_ferry.customers does not hold $ROWS rows"
        psql -q "$url" -c 'TRUNCATE bench_psql.customers' >/dev/null
        measure psql postgres "$run" "$WORK/pg-psql.log" -- \
            psql -v ON_ERROR_STOP=1 "$url" -c "\\copy bench_psql.customers ($cols) FROM '$CSV' WITH (FORMAT csv, HEADER true)"
        [ "$(psql -tA "$url" -c 'SELECT count(*) FROM bench_psql.customers')" = "$ROWS" ] || die "bench_psql.customers does not hold $ROWS rows"
        if [ -n "$pgloader" ]; then
            # pgloader exits 0 even when it rejected rows: the count decides.
            measure pgloader postgres "$run" "$WORK/pg-pgloader.log" -- pgloader "$pgloader"
            [ "$(psql -tA "$url" -c 'SELECT count(*) FROM bench_pgloader.customers')" = "$ROWS" ] || { tail -20 "$WORK/pg-pgloader.log" >&2; die "bench_pgloader.customers does not hold $ROWS rows"; }
        fi
    done
    # Export of the same rows: ferry export (CSV, NDJSON) of the store against psql writing the
    # same columns in the same order, alternating. CSV: psql's \copy (SELECT …) TO (the server
    # formats the CSV); NDJSON: one row_to_json per row, printed unaligned by psql.
    local select="SELECT $cols FROM bench_psql.customers ORDER BY ferry_pk"
    for run in $(seq 1 "$RUNS"); do
        measure ferry export-csv "$run" "$WORK/pg-export-ferry.csv" -- \
            "$FERRY" export --store "$store" --entity customers --format csv --quiet
        measure psql export-csv "$run" "$WORK/pg-export-psql.log" -- \
            psql -v ON_ERROR_STOP=1 "$url" -c "\\copy ($select) TO '$WORK/pg-export-psql.csv' WITH (FORMAT csv, HEADER true)"
        measure ferry export-ndjson "$run" "$WORK/pg-export-ferry.ndjson" -- \
            "$FERRY" export --store "$store" --entity customers --format ndjson --quiet
        measure psql export-ndjson "$run" "$WORK/pg-export-psql.ndjson" -- \
            psql -v ON_ERROR_STOP=1 -At "$url" -c "SELECT row_to_json(c) FROM ($select) AS c"
    done
    python3 - "$WORK" "$ROWS" <<'PY'
import csv, sys
work, rows = sys.argv[1], int(sys.argv[2])
def records(path, kind):
    with open(path, encoding="utf-8", newline="") as f:
        return sum(1 for _ in csv.reader(f)) - 1 if kind == "csv" else sum(1 for line in f if line.strip())
for name, kind in (("pg-export-ferry.csv", "csv"), ("pg-export-psql.csv", "csv"), ("pg-export-ferry.ndjson", "ndjson"), ("pg-export-psql.ndjson", "ndjson")):
    got = records(f"{work}/{name}", kind)
    if got != rows:
        sys.exit(f"bench.sh: {name} holds {got} records, expected {rows}")
PY
    python3 - "$RESULTS" "$ROWS" <<'PY'
import statistics, sys
runs = {}
for line in open(sys.argv[1]).read().splitlines()[1:]:
    tool, fmt, _, wall, rss = line.split("\t")[:5]
    runs.setdefault((fmt, tool), []).append((float(wall), int(rss)))
rows = int(sys.argv[2])
print(f"PostgreSQL import and export of {rows} records; wall time is the median, RSS the largest")
print(f"{'case':<14} {'tool':<8} {'median s':>9} {'records/s':>11} {'peak MiB':>9} {'vs psql':>9}")
for fmt in ("postgres", "export-csv", "export-ndjson"):
    base = statistics.median(w for w, _ in runs[(fmt, "psql")])
    for tool in ("ferry", "psql", "pgloader"):
        if (fmt, tool) not in runs:
            continue
        values = runs[(fmt, tool)]
        wall = statistics.median(w for w, _ in values)
        runs_text = ", ".join(f"{w:.2f}" for w, _ in values)
        case = "import" if fmt == "postgres" else fmt
        target = "   (target: ferry <= 1.20x)" if tool == "ferry" else ""
        print(f"{case:<14} {tool:<8} {wall:>9.2f} {rows / wall:>11,.0f} {max(r for _, r in values) / 1024:>9.1f} {wall / base:>8.2f}x{target}  [{runs_text}]")
PY
    echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg); raw runs: ${RESULTS#$ROOT/}" >&2
}

# --- runs -----------------------------------------------------------------------------------
fresh() { rm -f "$1" "$1-wal" "$1-shm" "$1-journal"; }

count_rows() {   # count_rows DB: rows in customers, or fails
    local got
    got=$(sqlite3 "$1" 'SELECT count(*) FROM customers') || die "cannot count rows in $1"
    [ "$got" = "$ROWS" ] || die "$1 holds $got rows, expected $ROWS (see $WORK/*.log)"
}

measure() {   # measure TOOL FORMAT RUN LOG -- command...: appends wall time and peak RSS
    local tool=$1 format=$2 run=$3 log=$4
    shift 5
    if ! "$TIME" -o "$WORK/time.txt" -f '%e %M %U %S' "$@" >"$log" 2>&1; then
        tail -20 "$log" >&2
        die "$tool ($format) failed, run $run: $*"
    fi
    read -r wall rss user sys <"$WORK/time.txt"
    local cpu
    cpu=$(awk "BEGIN{print $user + $sys}")
    printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$tool" "$format" "$run" "$wall" "$rss" "$cpu" >>"$RESULTS"
    printf '  %-10s %-8s run %d: %6.2f s  %7.1f MiB  %6.2f s CPU\n' "$tool" "$format" "$run" "$wall" "$(awk "BEGIN{print $rss/1024}")" "$cpu" >&2
}

if [ "$IMPORTS" = 1 ]; then
RESULTS=$OUT/runs-$ROWS.tsv
printf 'tool\tformat\trun\twall_s\tpeak_rss_kib\tcpu_s\n' >"$RESULTS"
if [ "$MUTATIONS_ONLY" = 1 ]; then
    bench_mutations
    exit 0
fi
if [ "$POSTGRES_ONLY" = 1 ]; then
    bench_postgres
    exit 0
fi
if [ "$VERIFY_ONLY" = 1 ]; then
    FERRY_DB=$WORK/ferry.sqlite
    if [ "$(sqlite3 "$FERRY_DB" 'SELECT count(*) FROM customers' 2>/dev/null)" != "$ROWS" ]; then
        fresh "$FERRY_DB"
        "$FERRY" import "$CSV" --store "$FERRY_DB" --entity customers --model "$MODEL" --quiet \
            >"$WORK/verify-import.log" 2>&1 || { cat "$WORK/verify-import.log" >&2; die "ferry import of the store to verify failed"; }
    fi
    bench_verification
    exit 0
fi

SQLITE_DB=$WORK/sqlite3.db
FERRY_DB=$WORK/ferry.sqlite
echo "benchmark: $ROWS records, $RUNS run(s) each, $(nproc) CPU(s), sqlite3 $(sqlite3 --version | cut -d' ' -f1)" >&2
# The relationship runs: orders into a store that holds the customers (made once, copied per run).
ORDERS=$OUT/orders-$ROWS.csv
ORDERS_BASE=$WORK/orders-base.sqlite
ORDERS_DB=$WORK/orders.sqlite
ORDERS_SQLITE=$WORK/orders-sqlite3.db
if [ "$FERRY_RUNS" = 1 ]; then
    orders_data "$ROWS"
    fresh "$ORDERS_BASE"
    "$FERRY" import "$CSV" --store "$ORDERS_BASE" --entity customers --model "$ROOT/scripts/bench/shop.yml" --quiet \
        >"$WORK/orders-base.log" 2>&1 || { cat "$WORK/orders-base.log" >&2; die "ferry import of the customers for the relationship runs failed"; }
fi
count_orders() {   # count_orders DB: N orders, or fails
    local got
    got=$(sqlite3 "$1" 'SELECT count(*) FROM orders') || die "cannot count orders in $1"
    [ "$got" = "$ROWS" ] || die "$1 holds $got orders, expected $ROWS (see $WORK/*.log)"
}
# The physical anchor: a hand-written C loader (scripts/bench/csv2sqlite.c: 1 MiB block reads, an
# RFC 4180 byte loop, one prepared INSERT bound straight from the read buffer, one transaction,
# journal and sync off) into the same table sqlite3 loads.
C_LOADER=$WORK/csv2sqlite
C_DB=$WORK/csv2sqlite.db
command -v cc >/dev/null || die "cc not found (apt-get install gcc); it builds the C loader"
cc -O2 -o "$C_LOADER" "$ROOT/scripts/bench/csv2sqlite.c" -lsqlite3 \
    || die "cannot build scripts/bench/csv2sqlite.c with 'cc -O2 ... -lsqlite3' (apt-get install libsqlite3-dev)"
for run in $(seq 1 "$RUNS"); do
    fresh "$SQLITE_DB"
    sqlite3 "$SQLITE_DB" <"$DDL"
    measure sqlite3 csv "$run" "$WORK/sqlite3.log" -- sqlite3 "$SQLITE_DB" ".import --csv --skip 1 '$CSV' customers"
    count_rows "$SQLITE_DB"
    fresh "$C_DB"
    sqlite3 "$C_DB" <"$DDL"
    measure csv2sqlite csv "$run" "$WORK/csv2sqlite.log" -- "$C_LOADER" "$C_DB" "$CSV" customers
    count_rows "$C_DB"
    if [ "$FERRY_RUNS" = 1 ]; then
        for format in csv ndjson json; do
            case $format in csv) file=$CSV ;; ndjson) file=$NDJSON ;; json) file=$JSON ;; esac
            fresh "$FERRY_DB"
            measure ferry "$format" "$run" "$WORK/ferry-$format.log" -- \
                "$FERRY" import "$file" --store "$FERRY_DB" --entity customers --model "$MODEL"
            count_rows "$FERRY_DB"
        done
        fresh "$FERRY_DB"
        measure ferry inferred "$run" "$WORK/ferry-inferred.log" -- "$FERRY" import "$CSV" --store "$FERRY_DB" --entity customers
        count_rows "$FERRY_DB"
        # The same orders file: sqlite3 stores the customer ids as they are, ferry resolves each.
        fresh "$ORDERS_SQLITE"
        sqlite3 "$ORDERS_SQLITE" 'CREATE TABLE orders ("number" TEXT NOT NULL, "customer" INTEGER, "total" TEXT, "placed_at" TEXT);
            CREATE UNIQUE INDEX orders_number ON orders ("number"); CREATE INDEX orders_customer ON orders ("customer");'
        measure sqlite3 orders "$run" "$WORK/sqlite3-orders.log" -- sqlite3 "$ORDERS_SQLITE" ".import --csv --skip 1 '$ORDERS' orders"
        count_orders "$ORDERS_SQLITE"
        fresh "$ORDERS_DB"
        cp "$ORDERS_BASE" "$ORDERS_DB"
        measure ferry orders "$run" "$WORK/ferry-orders.log" -- \
            "$FERRY" run "$ROOT/scripts/bench/orders-job.yml" --param "store=$ORDERS_DB" --param "orders=$ORDERS"
        count_orders "$ORDERS_DB"
    fi
done

# The C loader's rows against sqlite3's, value by value with their storage classes (quote()
# tells 42 from '42'): the same checksum, or the comparison would not be of the same work.
# ferry's store (a CSV import) holds the same nine columns besides its own ferry_* ones, with
# the decimal `balance` in its canonical spelling (5985.4 for the file's 5985.40): compared with
# `balance` printed with two places on both sides.
table_checksum() {   # table_checksum DB [decimal]: sha256 of every row of customers, in rowid order
    local cols two_places="printf('%.2f', \"balance\")"
    cols=$(sqlite3 "$SQLITE_DB" "SELECT group_concat('quote(\"' || name || '\")', ', ') FROM pragma_table_info('customers')")
    [ "${2:-}" = decimal ] && cols=${cols/quote(\"balance\")/$two_places}
    sqlite3 "$1" "SELECT $cols FROM customers ORDER BY rowid" | sha256sum | cut -d' ' -f1
}
SQLITE_SUM=$(table_checksum "$SQLITE_DB")
C_SUM=$(table_checksum "$C_DB")
[ "$C_SUM" = "$SQLITE_SUM" ] || die "the C loader's table differs from sqlite3's ($C_SUM vs $SQLITE_SUM)"
CHECKSUMS="sqlite3 and csv2sqlite: $ROWS rows each, the same checksum (${SQLITE_SUM:0:16}…)"
if [ "$FERRY_RUNS" = 1 ]; then
    fresh "$FERRY_DB"
    "$FERRY" import "$CSV" --store "$FERRY_DB" --entity customers --model "$MODEL" --quiet >"$WORK/ferry-checksum.log" 2>&1 \
        || { cat "$WORK/ferry-checksum.log" >&2; die "ferry import for the checksum failed"; }
    count_rows "$FERRY_DB"
    FERRY_SUM=$(table_checksum "$FERRY_DB" decimal)
    if [ "$FERRY_SUM" = "$(table_checksum "$SQLITE_DB" decimal)" ]; then
        CHECKSUMS="$CHECKSUMS; ferry's store: the same rows (balance compared with two places)"
    else
        die "ferry's store differs from sqlite3's table (balance compared with two places)"
    fi
fi

# SQLite's own limit: the same rows, already in SQLite's record format, inserted by
# INSERT ... SELECT into the same table in a fresh database (no parsing, no coercion).
LIMIT_DB=$WORK/limit.db
fresh "$LIMIT_DB"
sqlite3 "$LIMIT_DB" <"$DDL"
COLS=$(sqlite3 "$SQLITE_DB" "SELECT group_concat('\"' || name || '\"', ', ') FROM pragma_table_info('customers')")
"$TIME" -o "$WORK/time.txt" -f '%e %M' sqlite3 "$LIMIT_DB" \
    "ATTACH '$SQLITE_DB' AS source; BEGIN; INSERT INTO main.customers ($COLS) SELECT $COLS FROM source.customers ORDER BY rowid; COMMIT;" \
    >"$WORK/limit.log" 2>&1 || { cat "$WORK/limit.log" >&2; die "the INSERT ... SELECT limit run failed"; }
read -r limit_wall limit_rss <"$WORK/time.txt"
count_rows "$LIMIT_DB"

# --- report ---------------------------------------------------------------------------------
python3 - "$RESULTS" "$ROWS" "$limit_wall" "$limit_rss" <<'PY'
import statistics, sys
path, rows, limit_wall, limit_rss = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), int(sys.argv[4])
runs = {}
for line in open(path).read().splitlines()[1:]:
    tool, fmt, _, wall, rss, cpu = line.split("\t")[:6]
    runs.setdefault((tool, fmt), []).append((float(wall), int(rss), float(cpu)))
def median(key, column=0):
    return statistics.median(v[column] for v in runs[key]) if key in runs else None
base, base_cpu = median(("sqlite3", "csv")), median(("sqlite3", "csv"), 2)
c_base = median(("csv2sqlite", "csv"))
print(f"{rows} records, {len(runs[('sqlite3', 'csv')])} run(s) each; wall and CPU (user + sys, all threads) time are medians, RSS the largest")
print(f"{'tool':<10} {'format':<8} {'median s':>9} {'records/s':>11} {'peak MiB':>9} {'vs sqlite3':>11} {'vs C':>7} {'CPU s':>7} {'CPU vs sqlite3':>15}")
orders_base = median(("sqlite3", "orders"))
for (tool, fmt), values in runs.items():
    wall, cpu = median((tool, fmt)), median((tool, fmt), 2)
    rss = max(v[1] for v in values) / 1024
    rate = rows / wall if wall > 0 else float("inf")
    # Orders (a to-one relationship resolved per row) compare with sqlite3 .import of the orders file.
    reference = orders_base if fmt == "orders" else base
    ratio = wall / reference if reference else float("inf")
    # Against the C loader: the same customers file (every format holds the same records).
    c_ratio = f"{wall / c_base:>6.2f}x" if c_base and fmt != "orders" else f"{'':>7}"
    cpu_ratio = f"{cpu / base_cpu:>14.2f}x" if base_cpu and fmt != "orders" else f"{'':>15}"
    print(f"{tool:<10} {fmt:<8} {wall:>9.2f} {rate:>11,.0f} {rss:>9.1f} {ratio:>10.2f}x {c_ratio} {cpu:>7.2f} {cpu_ratio}")
rate = rows / limit_wall if limit_wall > 0 else float("inf")
print(f"SQLite's own limit (INSERT ... SELECT of the same rows, same table and indexes, no parsing): "
      f"{limit_wall:.2f} s, {rate:,.0f} records/s, {limit_rss / 1024:.1f} MiB")
PY
echo "checksums: $CHECKSUMS"
echo "raw runs: ${RESULTS#$ROOT/}" >&2

fi

[ "$IMPORTS_ONLY" = 1 ] && exit 0

# --- export ---------------------------------------------------------------------------------
# ferry export of the whole entity (CSV, NDJSON) and a predicate export, against sqlite3 -csv of
# the same columns and rows from the same store, alternating, RUNS times each. The store is the
# one the last ferry CSV import made (or, with --sqlite-only, none: the section is skipped).
if [ "$FERRY_RUNS" = 1 ]; then
    EXPORT_STORE=$WORK/export.sqlite
    fresh "$EXPORT_STORE"
    "$FERRY" import "$CSV" --store "$EXPORT_STORE" --entity customers --model "$MODEL" --quiet \
        >"$WORK/export-import.log" 2>&1 || { cat "$WORK/export-import.log" >&2; die "ferry import for the export store failed"; }
    count_rows "$EXPORT_STORE"
    COLS=$(sqlite3 "$EXPORT_STORE" "SELECT group_concat('\"' || name || '\"', ', ') FROM pragma_table_info('customers') WHERE name NOT LIKE 'ferry_%'")
    PREDICATE='age > 40 AND email ENDSWITH "example.com"'
    # The same rows in SQL: a byte-exact suffix test (LIKE would ignore case).
    PREDICATE_SQL="age > 40 AND substr(email, -length('example.com')) = 'example.com'"
    EXPORTS=$OUT/exports-$ROWS.tsv
    printf 'tool\tcase\trun\twall_s\tpeak_rss_kib\trows\n' >"$EXPORTS"
    export_measure() {   # export_measure TOOL CASE RUN OUTFILE -- command...
        local tool=$1 case=$2 run=$3 file=$4
        shift 5
        if ! "$TIME" -o "$WORK/time.txt" -f '%e %M' "$@" >"$file" 2>"$WORK/export-$tool-$case.log"; then
            tail -20 "$WORK/export-$tool-$case.log" >&2
            die "$tool export ($case) failed, run $run: $*"
        fi
        read -r wall rss <"$WORK/time.txt"
        local lines
        case $case in ndjson) lines=$(wc -l <"$file") ;; *) lines=$(python3 -c "import csv,sys; print(sum(1 for _ in csv.reader(open(sys.argv[1], newline='', encoding='utf-8'))) - 1)" "$file") ;; esac
        printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$tool" "$case" "$run" "$wall" "$rss" "$lines" >>"$EXPORTS"
        printf '  %-8s %-10s run %d: %6.2f s  %7.1f MiB  %s rows\n' "$tool" "$case" "$run" "$wall" "$(awk "BEGIN{print $rss/1024}")" "$lines" >&2
    }
    echo "export: $ROWS records from $EXPORT_STORE" >&2
    for run in $(seq 1 "$RUNS"); do
        export_measure sqlite3 all "$run" "$WORK/sqlite3-all.csv" -- sqlite3 -csv -header "$EXPORT_STORE" "SELECT $COLS FROM customers ORDER BY ferry_pk"
        export_measure ferry csv "$run" "$WORK/ferry-all.csv" -- "$FERRY" export --store "$EXPORT_STORE" --entity customers --format csv --quiet
        export_measure ferry ndjson "$run" "$WORK/ferry-all.ndjson" -- "$FERRY" export --store "$EXPORT_STORE" --entity customers --format ndjson --quiet
        export_measure sqlite3 predicate "$run" "$WORK/sqlite3-predicate.csv" -- sqlite3 -csv -header "$EXPORT_STORE" "SELECT $COLS FROM customers WHERE $PREDICATE_SQL ORDER BY ferry_pk"
        export_measure ferry predicate "$run" "$WORK/ferry-predicate.csv" -- "$FERRY" export --store "$EXPORT_STORE" --entity customers --format csv --quiet --where "$PREDICATE"
    done
    python3 - "$EXPORTS" "$ROWS" <<'PY'
import statistics, sys
path, rows = sys.argv[1], int(sys.argv[2])
runs, counts = {}, {}
for line in open(path).read().splitlines()[1:]:
    tool, case, _, wall, rss, lines = line.split("\t")
    runs.setdefault((tool, case), []).append((float(wall), int(rss)))
    counts[(tool, case)] = int(lines)
def median(key):
    return statistics.median(w for w, _ in runs[key])
print(f"export of {rows} records; wall time is the median, RSS the largest")
print(f"{'case':<28} {'median s':>9} {'peak MiB':>9} {'rows':>9} {'vs sqlite3':>11} {'target':>7}")
rows_out = [
    ("sqlite3 -csv (all)", ("sqlite3", "all"), None, None),
    ("ferry export csv", ("ferry", "csv"), ("sqlite3", "all"), 1.5),
    ("ferry export ndjson", ("ferry", "ndjson"), ("sqlite3", "all"), 2.0),
    ("sqlite3 -csv (predicate)", ("sqlite3", "predicate"), None, None),
    ("ferry export --where", ("ferry", "predicate"), ("sqlite3", "predicate"), 1.5),
]
failed = False
for label, key, base, target in rows_out:
    wall = median(key)
    rss = max(r for _, r in runs[key]) / 1024
    ratio = f"{wall / median(base):>10.2f}x" if base else f"{'':>11}"
    mark = ""
    if base:
        ok = wall / median(base) <= target
        failed |= not ok
        mark = f"{'<= ' + str(target) + 'x':>7}" + ("" if ok else "  MISSED")
        if counts[key] != counts[base]:
            mark += f"  ROWS DIFFER ({counts[key]} vs {counts[base]})"
    print(f"{label:<28} {wall:>9.2f} {rss:>9.1f} {counts[key]:>9} {ratio} {mark}")
PY
    echo "raw export runs: ${EXPORTS#$ROOT/}" >&2
fi

# --export-only is only the export section: verification and mutations need the import runs' store.
if [ "$FERRY_RUNS" = 1 ] && [ "$IMPORTS" = 1 ]; then
    bench_verification
    bench_mutations
fi
