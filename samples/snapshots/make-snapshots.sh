#!/usr/bin/env bash
# Rebuilds the Shop snapshot stores from the sample data:
#
#   samples/snapshots/shop-v1.sqlite   Shop version 1: pipelines/import-shop.yml's store
#   samples/snapshots/shop-v2.sqlite   Shop version 2: a copy of v1 migrated to version 2, then
#                                      given product brands, a few reviews and two telling names
#
#   samples/snapshots/make-snapshots.sh            # builds ferry (debug) first
#   FERRY=/path/to/ferry samples/snapshots/make-snapshots.sh
#
# Deterministic: the sample data is fixed, and the timestamps and absolute paths that a run
# records (ferry_metadata.created_at, ferry_runs, the model's file locations) are normalised, so
# running it again gives stores with the same content. Needs sqlite3.
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$(pwd)

if [ -z "${FERRY:-}" ]; then
    swift build --product ferry >&2
    FERRY="$root/.build/debug/ferry"
fi
command -v sqlite3 >/dev/null || { echo "make-snapshots: sqlite3 is needed" >&2; exit 1; }

out=samples/snapshots
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# Timestamps and absolute paths a run records, made the same on every machine and every run.
normalise() {
    local store=$1 escaped=${root//\//\\\/}
    sqlite3 "$store" >/dev/null <<SQL
UPDATE ferry_metadata SET value = '2024-07-01T00:00:00.000Z' WHERE key = 'created_at';
UPDATE ferry_metadata SET value = replace(replace(value, '$escaped\/', ''), '$root/', '') WHERE key = 'model_json';
UPDATE ferry_runs SET source = replace(source, '$root/', ''), message = NULL, started_at = '2024-07-01T00:00:00.000Z',
    ended_at = '2024-07-01T00:00:00.000Z';
PRAGMA journal_mode = DELETE;
VACUUM;
SQL
}

# ---- version 1: the import job (it pins model version 1) -------------------------------------
"$FERRY" run pipelines/import-shop.yml --param out="$work/import" --quiet
cp "$work/import/shop.sqlite" "$work/shop-v1.sqlite"
normalise "$work/shop-v1.sqlite"

# ---- version 2: migrate a copy of v1 ----------------------------------------------------------
cp "$work/shop-v1.sqlite" "$work/shop-v2.sqlite"
if "$FERRY" --help | grep -qE "^  migrate( |$)"; then
    "$FERRY" migrate "$work/shop-v2.sqlite" --model samples/models/Shop --to 2 --no-backup --quiet
else
    # FALLBACK until `ferry migrate` exists: the same lightweight step written by hand. An empty
    # version-2 store is made by a job without steps, then filled from v1 with INSERT … SELECT
    # (the inferred mapping of 1 → 2: name → full_name, tier gets its default, notes dropped,
    # brand nil, OrderItem → LineItem, Review empty).
    echo "make-snapshots: ferry has no migrate command yet; migrating 1 → 2 with SQL" >&2
    rm -f "$work/shop-v2.sqlite"
    cat > "$work/empty-v2.yml" <<YAML
job: make-snapshots
store: $work/shop-v2.sqlite
model: {path: $root/samples/models/Shop, version: "2"}
steps: []
YAML
    "$FERRY" run "$work/empty-v2.yml" --quiet
    sqlite3 "$work/shop-v2.sqlite" <<SQL
ATTACH '$work/shop-v1.sqlite' AS v1;
BEGIN;
INSERT INTO Customer (ferry_pk, id, email, full_name, phone, age, balance, created_at, active, tier, address)
    SELECT ferry_pk, id, email, name, phone, age, balance, created_at, active, 'standard', address FROM v1.Customer;
INSERT INTO Product (ferry_pk, sku, name, brand, price, weight_kg, tags, uuid)
    SELECT ferry_pk, sku, name, NULL, price, weight_kg, tags, uuid FROM v1.Product;
INSERT INTO "Order" (ferry_pk, number, placed_at, status, total, customer)
    SELECT ferry_pk, number, placed_at, status, total, customer FROM v1."Order";
INSERT INTO LineItem (ferry_pk, quantity, unit_price, "order", product)
    SELECT ferry_pk, quantity, unit_price, "order", product FROM v1.OrderItem;
COMMIT;
DETACH v1;
SQL
fi

# ---- version 2 data that version 3's mapping has something to do with --------------------------
# Brands: several products per brand; gift cards and refills have none (→ no Brand, nil link).
# Reviews: one per tenth customer. Two names show the split: "Ana María López" → "Ana" +
# "María López", and a one-word name "Cher" → "Cher" + nil.
sqlite3 "$work/shop-v2.sqlite" <<'SQL'
BEGIN;
UPDATE Product SET brand = CASE substr(sku, 1, 3)
        WHEN 'COF' THEN 'Origin Roasters'
        WHEN 'TEA' THEN 'Leaf & Co.'
        WHEN 'MUG' THEN 'Kōgei'
        WHEN 'KET' THEN 'Kōgei'
        WHEN 'GRN' THEN 'Burr Works'
    END
    WHERE name NOT LIKE '%(refill)%';
INSERT INTO Review (rating, body, created_at, customer, product)
    SELECT 1 + ferry_pk % 5,
           CASE WHEN ferry_pk % 3 = 0 THEN NULL ELSE 'Review ' || ferry_pk || ': ' || (1 + ferry_pk % 5) || ' of 5' END,
           '2024-06-' || printf('%02d', 1 + ferry_pk % 28) || 'T12:00:00.000Z',
           ferry_pk, 1 + (ferry_pk * 7) % 50
    FROM Customer WHERE ferry_pk % 10 = 0 ORDER BY ferry_pk;
UPDATE Customer SET full_name = 'Ana María López' WHERE ferry_pk = 2;
UPDATE Customer SET full_name = 'Cher' WHERE ferry_pk = 3;
COMMIT;
SQL
normalise "$work/shop-v2.sqlite"

for version in 1 2; do
    sqlite3 "$work/shop-v$version.sqlite" "PRAGMA integrity_check; PRAGMA foreign_key_check;" | grep -qx ok \
        || { echo "make-snapshots: shop-v$version.sqlite fails its integrity check" >&2; exit 1; }
    mv "$work/shop-v$version.sqlite" "$out/shop-v$version.sqlite"
done
"$FERRY" store info "$out/shop-v1.sqlite"
"$FERRY" store info "$out/shop-v2.sqlite"
