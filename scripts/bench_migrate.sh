#!/usr/bin/env bash
# Migration speed against SQLite's own INSERT ... SELECT, in one run, alternating the tools.
#
#   scripts/bench_migrate.sh            # ROWS=1000000 RUNS=3, release build at .build/release/ferry
#   ROWS=100000 RUNS=1 scripts/bench_migrate.sh
#
# On a store of ROWS customers (scripts/bench/migrate, version 1):
#   sqlite3      SQLite's copy limit: a hand-written ATTACH + INSERT INTO customers (…) SELECT … FROM
#                src.customers into a fresh database with exactly the version-2 table ferry makes,
#                journal and sync off, the same indexes built after the rows, no verification
#   lightweight  ferry migrate --to 2 (inferred: a rename, new attributes, a widening), target <= 1.2x
#   expressions  ferry migrate --to 3 from version 2 (lowercase, split, if on every row), target <= 2.5x
#   policy       shop-ferry migrate --to 4 from version 3 (a Swift policy, the sample PhoneNormalizer,
#                called for every object), target <= 4x; shop-ferry is samples/custom-policy built in
#                release (built here when missing; SHOP_FERRY=path to use another)
#   coredata     ferry migrate of a Core Data store in place: the wibosco Revised app's version-3
#                store (../shared/data/coredata, FERRY_COREDATA_SAMPLES=folder to use another) filled
#                with ROWS objects (ROWS/2 Posts, one Section each) to version 4 (lightweight: a new
#                non-optional softDeleted with a default), target <= 1.5x of cd-sqlite3, the same
#                ATTACH + INSERT ... SELECT into the version-4 tables ferry writes
# ferry's time includes verifying the result (integrity_check, foreign keys, uniqueness, required
# values) and flushing it to disk before the swap. See docs/benchmarks.md.
#
#   CASES="lightweight coredata" scripts/bench_migrate.sh   # only these ferry cases (default: all);
#                                                          # the sqlite3 baselines always run
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
ROWS=${ROWS:-1000000}
RUNS=${RUNS:-3}
CASES=${CASES:-lightweight expressions policy coredata}
wants() { case " $CASES " in *" $1 "*) return 0 ;; *) return 1 ;; esac; }
FERRY=${FERRY:-$ROOT/.build/release/ferry}
BUNDLE=$ROOT/scripts/bench/migrate
OUT=$ROOT/bench-out
WORK=$OUT/migrate
TIME=/usr/bin/time
die() { echo "bench_migrate.sh: $*" >&2; exit 1; }
[ -x "$FERRY" ] || die "ferry binary not found at $FERRY; build it with 'swift build -c release' (or set FERRY=path)"
command -v sqlite3 >/dev/null || die "sqlite3 is needed for the baseline"
mkdir -p "$WORK"
CSV=$OUT/customers-$ROWS.csv
[ -f "$CSV" ] || python3 "$ROOT/scripts/bench_data.py" "$ROWS" "$OUT" >&2

V1=$WORK/v1-$ROWS.sqlite
V2=$WORK/v2-$ROWS.sqlite
V3=$WORK/v3-$ROWS.sqlite
SHOP_FERRY=${SHOP_FERRY:-$ROOT/samples/custom-policy/.build/release/shop-ferry}
if wants policy && [ ! -x "$SHOP_FERRY" ]; then
    echo "building samples/custom-policy in release for the policy case" >&2
    swift build -c release --package-path "$ROOT/samples/custom-policy" >&2 || die "cannot build samples/custom-policy"
fi
if [ ! -f "$V1" ]; then
    echo "making a version-1 store of $ROWS customers" >&2
    "$FERRY" import "$CSV" --store "$V1" --entity customers --model "$BUNDLE/v1.yml" --quiet
fi
if [ ! -f "$V2" ]; then
    cp "$V1" "$V2.tmp" && "$FERRY" migrate "$V2.tmp" --model "$BUNDLE" --to 2 --no-backup --quiet && mv "$V2.tmp" "$V2"
fi
if [ ! -f "$V3" ]; then
    cp "$V2" "$V3.tmp" && "$FERRY" migrate "$V3.tmp" --model "$BUNDLE" --to 3 --no-backup --quiet && mv "$V3.tmp" "$V3"
fi
DDL=$(sqlite3 "$V2" "SELECT group_concat(sql, ';' || char(10)) || ';' FROM sqlite_schema WHERE tbl_name = 'customers' AND type = 'table'")
INDEXES=$(sqlite3 "$V2" "SELECT group_concat(sql, ';' || char(10)) || ';' FROM sqlite_schema WHERE tbl_name = 'customers' AND type = 'index' AND sql IS NOT NULL")
INSERT="PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF; ATTACH '$V1' AS src; BEGIN;
INSERT INTO customers (ferry_pk, id, uuid, email, full_name, age, balance, created_at, active, notes, segment, score)
SELECT ferry_pk, id, uuid, email, name, age, balance, created_at, active, notes, NULL, 0 FROM src.customers;
$INDEXES COMMIT;"

CD_APP=${FERRY_COREDATA_SAMPLES:-$ROOT/../shared/data/coredata}/wibosco-CoreDataMigrationRevised
CD_MODEL=$CD_APP/CoreDataMigration-Example/CoreData/Model/CoreDataMigration_Example.xcdatamodeld
CD_V3=$WORK/coredata-v3-$ROWS.sqlite
[ -d "$CD_MODEL" ] || die "the wibosco Revised app is not at $CD_APP (set FERRY_COREDATA_SAMPLES)"
if [ ! -f "$CD_V3" ]; then
    echo "making a version-3 Core Data store of $ROWS objects" >&2
    cp "$CD_APP/CoreDataMigration-ExampleTests/Resources/SQLite/CoreDataMigration_Example_3.sqlite" "$CD_V3.tmp" && chmod u+w "$CD_V3.tmp"
    POSTS=$((ROWS / 2))
    sqlite3 "$CD_V3.tmp" "BEGIN; DELETE FROM ZSECTION; DELETE FROM ZPOST;
        WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < $POSTS)
        INSERT INTO ZPOST (Z_PK, Z_ENT, Z_OPT, ZDATE, ZHEXCOLOR, ZPOSTID) SELECT i, 1, 1, 569186950.5 + i, printf('%06X', i % 16777216), printf('POST-%08d', i) FROM n;
        INSERT INTO ZSECTION (Z_PK, Z_ENT, Z_OPT, ZINDEX, ZPOST, ZBODY, ZTITLE) SELECT Z_PK, 2, 1, 0, Z_PK, 'Body of ' || ZPOSTID, 'Titl...' FROM ZPOST;
        UPDATE Z_PRIMARYKEY SET Z_MAX = $POSTS WHERE Z_NAME IN ('Post', 'Section'); COMMIT; VACUUM;"
    mv "$CD_V3.tmp" "$CD_V3"
fi
# The version-4 tables as ferry writes them, from a migrated copy of the app's own store.
cp "$CD_APP/CoreDataMigration-ExampleTests/Resources/SQLite/CoreDataMigration_Example_3.sqlite" "$WORK/cd-ddl.sqlite" && chmod u+w "$WORK/cd-ddl.sqlite"
"$FERRY" migrate "$WORK/cd-ddl.sqlite" --model "$CD_MODEL" --no-backup --quiet
CD_DDL=$(sqlite3 "$WORK/cd-ddl.sqlite" "SELECT group_concat(sql, ';' || char(10)) || ';' FROM sqlite_schema WHERE tbl_name IN ('ZPOST', 'ZSECTION') AND sql IS NOT NULL")
rm -f "$WORK/cd-ddl.sqlite"*
CD_INSERT="ATTACH '$CD_V3' AS src; BEGIN;
INSERT INTO ZPOST (Z_PK, Z_ENT, Z_OPT, ZSOFTDELETED, ZDATE, ZHEXCOLOR, ZPOSTID) SELECT Z_PK, Z_ENT, Z_OPT, 0, ZDATE, ZHEXCOLOR, ZPOSTID FROM src.ZPOST;
INSERT INTO ZSECTION (Z_PK, Z_ENT, Z_OPT, ZINDEX, ZPOST, ZBODY, ZTITLE) SELECT Z_PK, Z_ENT, Z_OPT, ZINDEX, ZPOST, ZBODY, ZTITLE FROM src.ZSECTION; COMMIT;"

RESULTS=$WORK/runs-$ROWS.tsv
printf 'case\trun\twall_s\tpeak_rss_kib\n' >"$RESULTS"
# measure CASE RUN -- command...
. "$ROOT/scripts/bench/measure.sh"
echo "migration benchmark: $ROWS customers, $RUNS run(s) each" >&2
for run in $(seq 1 "$RUNS"); do
    rm -f "$WORK/base.db" && sqlite3 "$WORK/base.db" "$DDL"
    measure sqlite3 "$run" -- sqlite3 "$WORK/base.db" "$INSERT"
    [ "$(sqlite3 "$WORK/base.db" 'SELECT count(*) FROM customers')" = "$ROWS" ] || die "the sqlite3 baseline did not copy $ROWS rows"
    if wants lightweight; then
        cp "$V1" "$WORK/light.sqlite" && rm -f "$WORK/light.sqlite-"*
        measure lightweight "$run" -- "$FERRY" migrate "$WORK/light.sqlite" --model "$BUNDLE" --to 2 --no-backup --quiet
    fi
    if wants expressions; then
        cp "$V2" "$WORK/expr.sqlite" && rm -f "$WORK/expr.sqlite-"*
        measure expressions "$run" -- "$FERRY" migrate "$WORK/expr.sqlite" --model "$BUNDLE" --to 3 --no-backup --quiet
    fi
    rm -f "$WORK/cd-base.db" && sqlite3 "$WORK/cd-base.db" "$CD_DDL"
    measure cd-sqlite3 "$run" -- sqlite3 "$WORK/cd-base.db" "$CD_INSERT"
    if wants coredata; then
        cp "$CD_V3" "$WORK/coredata.sqlite" && rm -f "$WORK/coredata.sqlite-"*
        measure coredata "$run" -- "$FERRY" migrate "$WORK/coredata.sqlite" --model "$CD_MODEL" --no-backup --quiet
    fi
    if wants policy; then
        cp "$V3" "$WORK/policy.sqlite" && rm -f "$WORK/policy.sqlite-"*
        measure policy "$run" -- "$SHOP_FERRY" migrate "$WORK/policy.sqlite" --model "$BUNDLE" --to 4 --no-backup --quiet
    fi
done
if wants lightweight; then
    [ "$(sqlite3 "$WORK/light.sqlite" "SELECT value FROM ferry_metadata WHERE key = 'model_version'")" = "2" ] || die "the lightweight step did not reach version 2"
    [ "$(sqlite3 "$WORK/light.sqlite" "SELECT count(*) FROM customers")" = "$ROWS" ] || die "the lightweight step did not keep $ROWS customers"
fi
if wants policy; then
    [ "$(sqlite3 "$WORK/policy.sqlite" "SELECT value FROM ferry_metadata WHERE key = 'model_version'")" = "4" ] || die "the policy step did not reach version 4"
fi
if wants expressions; then
    [ "$(sqlite3 "$WORK/expr.sqlite" "SELECT count(*) FROM customers WHERE first_name IS NOT NULL")" = "$ROWS" ] || die "the expression step did not fill first_name"
fi
if wants coredata; then
    [ "$(sqlite3 "$WORK/coredata.sqlite" "SELECT count(*) FROM ZPOST WHERE ZSOFTDELETED = 0") + $(sqlite3 "$WORK/coredata.sqlite" "SELECT count(*) FROM ZSECTION")" = "$((ROWS / 2)) + $((ROWS / 2))" ] \
        || die "the Core Data store did not reach version 4 with every object"
fi
python3 - "$RESULTS" "$ROWS" <<'PY'
import statistics, sys
runs = {}
for line in open(sys.argv[1]).read().splitlines()[1:]:
    name, _, wall, rss = line.split("\t")
    runs.setdefault(name, []).append((float(wall), int(rss)))
base = statistics.median(w for w, _ in runs["sqlite3"])
print(f"migration of {int(sys.argv[2])} customers; wall time is the median, RSS the largest")
print(f"{'case':<14} {'median s':>9} {'records/s':>11} {'peak MiB':>9} {'vs sqlite3':>11} {'target':>7}  (Core Data cases vs cd-sqlite3)")
cd_base = statistics.median(w for w, _ in runs["cd-sqlite3"])
for name, target in [("sqlite3", None), ("lightweight", 1.2), ("expressions", 2.5), ("policy", 4.0), ("cd-sqlite3", None), ("coredata", 1.5)]:
    if name not in runs:
        continue  # not among CASES
    wall = statistics.median(w for w, _ in runs[name])
    rss = max(r for _, r in runs[name]) / 1024
    ratio = wall / (cd_base if name.startswith("c") else base)
    mark = "" if target is None else (f"<= {target}x" + ("" if ratio <= target else "  MISSED"))
    print(f"{name:<14} {wall:>9.2f} {int(int(sys.argv[2]) / wall):>11,} {rss:>9.1f} {ratio:>10.2f}x {mark:>7}")
PY
