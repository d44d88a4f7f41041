#!/usr/bin/env bash
# Statements ferry sends to PostgreSQL per 10,000 records, by operation: counted in the server's
# log (log_statement = all, turned on for the run and off after). Run by
# `scripts/bench_postgres_network.sh --statements`; needs the throwaway server of
# scripts/pg-test-server.sh (FERRY_TEST_POSTGRES_DIR, FERRY_TEST_POSTGRES_URL), whose log it
# reads. A COPY counts as one statement (its rows travel in the same exchange).
#
#   scripts/bench/statements.sh FLIGHTS_DATA_DIR     # as written by scripts/bench_flights_data.py
set -euo pipefail
cd "$(dirname "$0")/../.."
ROOT=$(pwd)
FERRY=${FERRY:-$ROOT/.build/release/ferry}
PGURL=${FERRY_TEST_POSTGRES_URL:?start a server: eval \"\$(scripts/pg-test-server.sh start)\"}
LOG=${FERRY_TEST_POSTGRES_DIR:?the server directory of scripts/pg-test-server.sh}/server.log
FLIGHTS=$1
WORK=$ROOT/bench-out/statements
mkdir -p "$WORK"
N=10000
[ -f "$ROOT/bench-out/customers-$N.csv" ] || python3 "$ROOT/scripts/bench_data.py" "$N" "$ROOT/bench-out" >&2
CUSTOMERS=$ROOT/bench-out/customers-$N.csv
# 10,000 flights: the first 10,000 of the flights file.
head -n $((N + 1)) "$FLIGHTS/flights.csv" >"$WORK/flights.csv"
for f in airlines airports planes; do cp "$FLIGHTS/$f.csv" "$WORK/"; done
# 10,000 owners each nesting two pets (an array of objects) and a vet (a to-one object).
python3 "$ROOT/scripts/bench/nested/owners.py" "$N" "$WORK/owners.ndjson"
psql "$PGURL" -qAt -c "ALTER SYSTEM SET log_statement = 'all'" -c "SELECT pg_reload_conf()" >/dev/null
trap 'psql "$PGURL" -qAt -c "ALTER SYSTEM RESET log_statement" -c "SELECT pg_reload_conf()" >/dev/null' EXIT
sleep 0.5
store() { printf '%s?schema=%s' "$PGURL" "$1"; }
drop() { psql "$PGURL" -qAt -c "SET client_min_messages = warning; DROP SCHEMA IF EXISTS $1 CASCADE" >/dev/null; }
# count NAME -- command...: runs it, prints the statements the server logged meanwhile.
count() {
    local name=$1
    shift 2
    sleep 0.2
    local before
    before=$(wc -l <"$LOG")
    "$@" >"$WORK/last.log" 2>&1 || { cat "$WORK/last.log" >&2; echo "statements.sh: $name failed" >&2; exit 1; }
    sleep 0.3
    local statements
    statements=$(tail -n +$((before + 1)) "$LOG" | grep -cE 'LOG:  (statement|execute [^:]*):' || true)
    printf '| %s | %s |\n' "$name" "$statements"
}
for s in st_plain st_flights st_nested st_mig st_mig_next st_mig_next_1; do drop "$s"; done
rm -f "$WORK/mig-v1.sqlite" "$WORK/mig-back.sqlite"
echo "| operation (10,000 records) | statements |"
echo "| --- | --- |"
count "import, no relationships" -- "$FERRY" import "$CUSTOMERS" --store "$(store st_plain)" --entity customers \
    --model "$ROOT/scripts/bench/customers.yml" --quiet
cat >"$WORK/flights-job.yml" <<YML
job: statements
store: \${store}
model: $ROOT/scripts/bench/flights/model.yml
steps:
  - import: {source: $WORK/airlines.csv, entity: airlines}
  - import: {source: $WORK/airports.csv, entity: airports}
  - import: {source: $WORK/planes.csv, entity: planes}
YML
"$FERRY" run "$WORK/flights-job.yml" --quiet --param "store=$(store st_flights)"
cat >"$WORK/flights-only.yml" <<YML
job: statements-flights
store: \${store}
model: $ROOT/scripts/bench/flights/model.yml
steps:
  - import:
      source: $WORK/flights.csv
      entity: flights
      rejects: $WORK/flights.rejects.ndjson
      max_rejects: 100000
      relationships:
        airline: {field: carrier, match: carrier}
        origin: {field: origin, match: faa}
        dest: {field: dest, match: faa}
        plane: {field: tailnum, match: tailnum}
YML
count "import, 4 to-one relationships by text key" -- "$FERRY" run "$WORK/flights-only.yml" --quiet --param "store=$(store st_flights)"
count "import, nested (2 pets and a vet per owner)" -- "$FERRY" import "$WORK/owners.ndjson" --store "$(store st_nested)" \
    --entity owners --model "$ROOT/scripts/bench/nested/model.yml" --nested --quiet
cat >"$WORK/sync.yml" <<YML
job: statements-sync
store: \${store}
model: $ROOT/scripts/bench/customers.yml
steps:
  - import: {source: $CUSTOMERS, entity: customers, mode: sync}
YML
count "sync (every record unchanged)" -- "$FERRY" run "$WORK/sync.yml" --quiet --param "store=$(store st_plain)"
count "update (--where over all rows)" -- "$FERRY" update --store "$(store st_plain)" --entity customers --where 'id > 0' \
    --set 'age=1' --quiet
count "export (CSV)" -- "$FERRY" export --store "$(store st_plain)" --entity customers --format csv --output "$WORK/out.csv" --quiet
count "verify (--checks all)" -- "$FERRY" verify "$(store st_plain)" --checks all --quiet
count "delete (--where over all rows)" -- "$FERRY" delete --store "$(store st_plain)" --entity customers --where 'id > 0' --quiet
# Copies and migrations: the migration benchmark's version-1 store (scripts/bench/migrate).
BUNDLE=$ROOT/scripts/bench/migrate
"$FERRY" import "$CUSTOMERS" --store "$WORK/mig-v1.sqlite" --entity customers --model "$BUNDLE/v1.yml" --quiet
count "copy, SQLite file into a new schema" -- "$FERRY" copy "$WORK/mig-v1.sqlite" "$(store st_mig)" --quiet
count "migrate, lightweight step (in the server)" -- "$FERRY" migrate "$(store st_mig)" --model "$BUNDLE" --to 2 \
    --no-backup --quiet
count "migrate, expressions on every row" -- "$FERRY" migrate "$(store st_mig)" --model "$BUNDLE" --to 3 --no-backup --quiet
count "copy, schema into a new SQLite file" -- "$FERRY" copy "$(store st_mig)" "$WORK/mig-back.sqlite" --quiet
for s in st_plain st_flights st_nested st_mig; do drop "$s"; done
