# Shared by the migration benchmarks (bench_migrate.sh, bench_migrate_postgres.sh); sourced, not run.
# Needs TIME (GNU time), WORK (a scratch folder), RESULTS (the runs file) and die().
#
#   measure CASE RUN -- command...   runs the command, appends CASE, RUN, wall seconds and peak
#                                     RSS (KiB) to RESULTS, prints them; its output goes to
#                                     WORK/CASE.log (the last lines are shown if it fails)
measure() {
    local name=$1 run=$2
    shift 3
    "$TIME" -o "$WORK/time.txt" -f '%e %M' "$@" >"$WORK/$name.log" 2>&1 || { tail -20 "$WORK/$name.log" >&2; die "$name failed: $*"; }
    read -r wall rss <"$WORK/time.txt"
    printf '%s\t%s\t%s\t%s\n' "$name" "$run" "$wall" "$rss" >>"$RESULTS"
    printf '  %-12s run %d: %6.2f s  %7.1f MiB\n' "$name" "$run" "$wall" "$(awk "BEGIN{print $rss/1024}")" >&2
}
