#!/usr/bin/env bash
# Builds revised-ferry and runs `ferry check` on the wibosco "Revised" app's real Core Data
# stores (versions 1, 2 and 3, read from ../shared/data/coredata/, never copied into git):
# each snapshot migrates on a private copy to version 4 through the app's Xcode model and
# mapping model, with the app's Post2ToPost3MigrationPolicy, and meets the values of the app's
# own tests (expectations/, from EXPECTED.md). Exits 0 only when every expectation holds.
# Run by .ci/run.
#
#   samples/coredata-migration/run-sample.sh
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
cd "$root"

app="${FERRY_COREDATA_SAMPLES:-$root/../shared/data/coredata}/wibosco-CoreDataMigrationRevised"
model="$app/CoreDataMigration-Example/CoreData/Model/CoreDataMigration_Example.xcdatamodeld"
mappings="$app/CoreDataMigration-Example/CoreData/Migration/Mappings"
snapshots="$app/CoreDataMigration-ExampleTests/Resources/SQLite"
[ -d "$model" ] && [ -d "$snapshots" ] || { echo "run-sample: the wibosco Revised app is not at $app" >&2; exit 1; }

started=$(date +%s)
swift build --package-path "$here" 2>&1 | tail -1
echo "run-sample: revised-ferry built in $(( $(date +%s) - started )) s"
revised_ferry="$here/.build/debug/revised-ferry"

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
fail() { echo "run-sample: FAILED: $*" >&2; exit 1; }
fingerprint() { cat "$snapshots"/* | md5sum; }
before=$(fingerprint)

# Plain ferry has no Post2ToPost3MigrationPolicy: the 2 → 3 step fails (exit 1), naming it.
status=0
.build/debug/ferry check "$snapshots/CoreDataMigration_Example_2.sqlite" --model "$model" --mappings "$mappings" >"$work/out" || status=$?
[ "$status" = 1 ] || fail "plain ferry check exited $status: $(cat "$work/out")"
grep -q "no migration policy named 'CoreDataMigration_Example.Post2ToPost3MigrationPolicy' is registered" "$work/out" \
    || fail "unexpected output: $(cat "$work/out")"

# Every snapshot with its expectations: a JUnit report each (a test case per version step).
mkdir -p "$root/out"
for number in 1 2 3; do
    name="CoreDataMigration_Example_$number"
    "$revised_ferry" check "$snapshots/$name.sqlite" --model "$model" --mappings "$mappings" \
        --expect "$here/expectations/$name.yml" --junit "$root/out/coredata-$name.xml" \
        || fail "$name did not meet its expectations (report: out/coredata-$name.xml)"
done
grep -q 'name="migrate CoreDataMigration_Example 2 → CoreDataMigration_Example 3"' "$root/out/coredata-CoreDataMigration_Example_1.xml" \
    || fail "the JUnit report has no test case for the 2 → 3 step"

# A wrong expectation fails the check (exit 3), naming the count.
sed 's/^  Section: 14$/  Section: 15/' "$here/expectations/CoreDataMigration_Example_3.yml" > "$work/wrong.yml"
status=0
"$revised_ferry" check "$snapshots/CoreDataMigration_Example_3.sqlite" --model "$model" --expect "$work/wrong.yml" >"$work/out" || status=$?
[ "$status" = 3 ] || fail "a wrong expectation exited $status: $(cat "$work/out")"
grep -q "count Section \[Section\]: expected exactly 15 rows, found 14" "$work/out" || fail "unexpected output: $(cat "$work/out")"

[ "$(fingerprint)" = "$before" ] || fail "a snapshot changed"
echo "run-sample: ok (3 Core Data snapshots migrated to version 4 and met their expectations; $(( $(date +%s) - started )) s in all)"
