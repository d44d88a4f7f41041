#!/usr/bin/env bash
# Builds a ferry binary that carries the Swift runtime inside it (--static-swift-stdlib), so it
# runs on a Linux machine without the Swift toolchain, and proves it:
#
#   scripts/static-binary.sh [OUT]              default OUT: .build-static/ferry
#   scripts/static-binary.sh --check BINARY     only the checks, on a binary already built
#
# The build is a release build in its own scratch path (.build-static), so it never disturbs the
# debug build of `swift build`. Then, on the binary:
#   1. `ldd` lists the shared libraries it needs: none may be a Swift runtime library (the
#      toolchain's lib/swift/linux), and each must be found on this system;
#   2. it runs the sample job (pipelines/import-shop.yml with its model and data, copied to a
#      temporary folder outside the repository) with an empty environment (`env -i`,
#      PATH=/usr/bin:/bin, no LD_LIBRARY_PATH), and with the toolchain's folder hidden when
#      `unshare` may mount (root, or a user namespace): a tmpfs over it for that run only.
#
# What the binary still needs from the system (Debian package names), printed at the end:
# glibc (libc, libm, libstdc++, libgcc_s), libsqlite3-0, libyaml-0-2, zlib1g, libzstd1, libbz2-1.0,
# liblzma5; and libpq5 only for PostgreSQL stores (opened with dlopen on the first connection).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"

if [ "${1:-}" = "--check" ]; then
    binary="$(cd "$(dirname "${2:?usage: static-binary.sh --check BINARY}")" && pwd)/$(basename "$2")"
else
    out="${1:-$root/.build-static/ferry}"
    mkdir -p "$(dirname "$out")"
    out="$(cd "$(dirname "$out")" && pwd)/$(basename "$out")"
    cd "$root"
    started=$(date +%s)
    swift build -c release --product ferry --static-swift-stdlib --scratch-path "$root/.build-static"
    echo "static-binary: built in $(($(date +%s) - started)) s"
    built="$(swift build -c release --static-swift-stdlib --scratch-path "$root/.build-static" --show-bin-path)/ferry"
    [ "$built" -ef "$out" ] || cp "$built" "$out"
    binary="$out"
fi

# The toolchain's runtime folder (…/usr/lib/swift/linux), where the shared Swift libraries are.
toolchain=""
if command -v swift >/dev/null 2>&1; then
    toolchain="$(dirname "$(dirname "$(readlink -f "$(command -v swift)")")")"
fi

# 1. The libraries it needs.
libraries="$(ldd "$binary")"
if grep -q "not found" <<<"$libraries"; then
    grep "not found" <<<"$libraries" >&2
    echo "static-binary: $binary needs libraries this system lacks" >&2
    exit 1
fi
swift_runtime="$(grep -E 'libswift|libFoundation|lib_FoundationICU|libdispatch|libBlocksRuntime' <<<"$libraries" || true)"
if [ -n "$swift_runtime" ] || { [ -n "$toolchain" ] && grep -qF "$toolchain/" <<<"$libraries"; }; then
    echo "$swift_runtime" >&2
    echo "static-binary: $binary still needs the Swift runtime's shared libraries" >&2
    exit 1
fi

# 2. The sample job, outside the repository, with nothing from the toolchain in reach.
work="$(mktemp -d "${TMPDIR:-/tmp}/ferry-static-XXXXXX")"
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/pipelines" "$work/samples/models"
cp "$binary" "$work/ferry"
cp "$root/pipelines/import-shop.yml" "$work/pipelines/"
cp -R "$root/samples/models/Shop" "$work/samples/models/"
cp -R "$root/samples/data" "$work/samples/"
# A compressed source and a job written by `ferry init`: zlib and libyaml, not only SQLite.
mkdir -p "$work/init"
printf 'id,name,joined\n1,Ann,2024-01-05\n2,Bob,2024-02-11\n3,Cléo,2024-03-02\n' | gzip -c >"$work/init/people.csv.gz"
cat >"$work/run.sh" <<'EOF'
set -e
./ferry run pipelines/import-shop.yml --quiet --report out/run.json
./ferry store info out/shop.sqlite
./ferry init init/people.csv.gz --output init >/dev/null
./ferry run init/job.yml --quiet
./ferry export --store init/init.sqlite --entity people --format csv
EOF
hide=()
if [ -n "$toolchain" ] && unshare -m --propagation private true 2>/dev/null; then
    hide=(unshare -m --propagation private sh -c "mount -t tmpfs none '$toolchain' && exec \"\$0\" \"\$@\"")
    echo "static-binary: running with $toolchain hidden (an empty tmpfs over it)"
else
    echo "static-binary: unshare cannot mount here; running with an empty environment only"
fi
(cd "$work" && "${hide[@]}" env -i PATH=/usr/bin:/bin sh run.sh) >"$work/output.txt" 2>&1 || {
    cat "$work/output.txt" >&2
    echo "static-binary: the binary failed to run the sample job on its own" >&2
    exit 1
}
grep -q '"outcome" : "succeeded"\|"outcome": "succeeded"' "$work/out/run.json" || {
    cat "$work/out/run.json" >&2
    echo "static-binary: the sample job did not succeed" >&2
    exit 1
}
cat "$work/output.txt"
echo "static-binary: $binary ($(du -h "$binary" | cut -f1)) ran the sample job on its own; it needs from the system:"
grep -oE '^\s*\S+\.so[^ ]*' <<<"$libraries" | tr -d '\t ' | grep -v '^linux-vdso' | sort | tr '\n' ' '
echo
echo "static-binary: and libpq.so.5 (Debian libpq5) only for PostgreSQL stores, loaded on the first connection"
