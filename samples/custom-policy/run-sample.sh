#!/usr/bin/env bash
# Builds shop-ferry and migrates a copy of the Shop v2 snapshot to version 3 with it, checking
# that PhoneNormalizer rewrote every phone number to E.164 and that a number it cannot
# normalise fails the migration with the original left in place. Run by .ci/run.
#
#   samples/custom-policy/run-sample.sh
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
cd "$root"

started=$(date +%s)
swift build --package-path "$here" 2>&1 | tail -1
echo "run-sample: shop-ferry built in $(( $(date +%s) - started )) s"
shop_ferry="$here/.build/debug/shop-ferry"

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
fail() { echo "run-sample: FAILED: $*" >&2; exit 1; }

# A copy of the v2 snapshot, with phone numbers written the ways people write them.
cp samples/snapshots/shop-v2.sqlite "$work/shop.sqlite"
sqlite3 "$work/shop.sqlite" "
    UPDATE Customer SET phone = '+64 22 792 8244' WHERE id = (SELECT min(id) FROM Customer WHERE phone IS NOT NULL);
    UPDATE Customer SET phone = '(022) 792-8245' WHERE id = (SELECT min(id) FROM Customer WHERE phone IS NOT NULL) + 1;
    UPDATE Customer SET phone = '022 792 8246' WHERE id = (SELECT min(id) FROM Customer WHERE phone IS NOT NULL) + 2;
    UPDATE Customer SET phone = '0061 2 9374 4000' WHERE id = (SELECT min(id) FROM Customer WHERE phone IS NOT NULL) + 3;"
first=$(sqlite3 "$work/shop.sqlite" "SELECT min(id) FROM Customer WHERE phone IS NOT NULL")
phones=$(sqlite3 "$work/shop.sqlite" "SELECT count(phone) FROM Customer")
customers=$(sqlite3 "$work/shop.sqlite" "SELECT count(*) FROM Customer")
cp "$work/shop.sqlite" "$work/junk.sqlite"

# ferry itself has no PhoneNormalizer: it refuses the step and says how to get one.
if .build/debug/ferry migrate "$work/shop.sqlite" --model samples/models/Shop --quiet 2>"$work/err"; then
    fail "plain ferry migrated a store whose mapping names PhoneNormalizer"
fi
grep -q "no migration policy named 'PhoneNormalizer' is registered" "$work/err" || fail "unexpected error: $(cat "$work/err")"

"$shop_ferry" migrate "$work/shop.sqlite" --model samples/models/Shop --no-backup 2>"$work/err" || fail "shop-ferry migrate: $(cat "$work/err")"
grep -q "shop-ferry: Shop 2 → 3: $phones of $customers customers have a phone number, all in E.164 form" "$work/err" \
    || fail "the stage hook did not report: $(cat "$work/err")"
[ "$(sqlite3 "$work/shop.sqlite" "SELECT value FROM ferry_metadata WHERE key = 'model_version'")" = 3 ] || fail "the store is not at version 3"
got=$(sqlite3 "$work/shop.sqlite" "SELECT phone FROM Customer WHERE id BETWEEN $first AND $first + 3 ORDER BY id" | tr '\n' ' ')
[ "$got" = "+64227928244 +64227928245 +64227928246 +61293744000 " ] || fail "phone numbers: $got"
bad=$(sqlite3 "$work/shop.sqlite" "SELECT count(*) FROM Customer WHERE phone IS NOT NULL AND phone NOT GLOB '+[1-9][0-9][0-9][0-9][0-9][0-9]*'")
[ "$bad" = 0 ] || fail "$bad phone numbers are not in E.164 form"
[ "$(sqlite3 "$work/shop.sqlite" "SELECT count(phone) FROM Customer")" = "$phones" ] || fail "phone numbers were lost"

# A number the policy cannot normalise fails the migration; the original stays as it was.
sqlite3 "$work/junk.sqlite" "UPDATE Customer SET phone = '(((  12  )))' WHERE id = $first"
before=$(sqlite3 "$work/junk.sqlite" "SELECT * FROM Customer ORDER BY id" | md5sum)
if "$shop_ferry" migrate "$work/junk.sqlite" --model samples/models/Shop 2>"$work/err"; then
    fail "a phone number without digits was migrated"
fi
grep -q "error: Customer $first: cannot normalise the phone number '(((  12  )))' (fewer than 6 digits)" "$work/err" || fail "unexpected error: $(cat "$work/err")"
[ "$(sqlite3 "$work/junk.sqlite" "SELECT * FROM Customer ORDER BY id" | md5sum)" = "$before" ] || fail "the original store changed"
[ "$(sqlite3 "$work/junk.sqlite" "SELECT value FROM ferry_metadata WHERE key = 'model_version'")" = 2 ] || fail "the original store is not at version 2"
ls "$work" | grep -q "ferry-migrating\|backup" && fail "scratch or backup files were left: $(ls "$work")"

echo "run-sample: ok ($phones phone numbers normalised; a bad number refused; $(( $(date +%s) - started )) s in all)"
