#!/usr/bin/env bash
# A throwaway PostgreSQL server for ferry's tests: a fresh cluster in a temporary directory,
# listening on a free loopback port and on a Unix socket in that directory, trust authentication
# (except for members of the role `ferry_password_login`, who must give their password).
#
#   eval "$(scripts/pg-test-server.sh start)"   # starts it; exports FERRY_TEST_POSTGRES_URL and
#                                               # FERRY_TEST_POSTGRES_DIR
#   scripts/pg-test-server.sh env               # prints those exports again (needs the DIR)
#   scripts/pg-test-server.sh stop              # stops the server and deletes its directory
#   scripts/pg-test-server.sh start --durable   # the same with fsync, synchronous commits and
#                                               # full-page writes on, as a production server runs:
#                                               # for the tests that crash the server
#   scripts/pg-test-server.sh start --ssl CERT KEY
#                                               # TLS on (ssl=on) with that server certificate and
#                                               # key (PEM files, copied into the cluster); plain
#                                               # connections are still accepted
#   scripts/pg-test-server.sh crash DIR         # stops it as a power cut would (-m immediate)
#   scripts/pg-test-server.sh restart DIR       # starts it again on its port, after a crash
#
# `stop` and `env` find the server through FERRY_TEST_POSTGRES_DIR (or a directory argument).
# Uses Debian's PostgreSQL binaries (apt-get install postgresql postgresql-client); set
# PG_BINDIR to use others. PostgreSQL refuses to run as root: run as root, the server runs as
# the `postgres` system user (the package creates it) through runuser. The cluster is tuned for
# tests (fsync off): never put data you want to keep in it.
set -euo pipefail

bindir=${PG_BINDIR:-}
if [ -z "$bindir" ]; then
    for candidate in /usr/lib/postgresql/*/bin; do
        [ -x "$candidate/initdb" ] && bindir=$candidate
    done
fi
if [ -z "$bindir" ] || [ ! -x "$bindir/initdb" ]; then
    echo "pg-test-server: no PostgreSQL server binaries found (apt-get install postgresql, or set PG_BINDIR)" >&2
    exit 1
fi

superuser=ferry
database=ferry_test

# Runs a server binary as the cluster's owner: the postgres system user when we are root.
as_owner() {
    if [ "$(id -u)" -eq 0 ]; then
        runuser -u postgres -- "$@"
    else
        "$@"
    fi
}

free_port() {
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

print_env() {
    local dir=$1
    echo "export FERRY_TEST_POSTGRES_DIR='$dir'"
    echo "export FERRY_TEST_POSTGRES_URL='$(cat "$dir/url")'"
}

server_dir() {
    local dir=${1:-${FERRY_TEST_POSTGRES_DIR:-}}
    if [ -z "$dir" ] || [ ! -f "$dir/url" ]; then
        echo "pg-test-server: no server directory (set FERRY_TEST_POSTGRES_DIR or pass it)" >&2
        exit 1
    fi
    echo "$dir"
}

start() {
    local dir durability ssl_cert= ssl_key= ssl_options=
    durability="-c fsync=off -c synchronous_commit=off -c full_page_writes=off"
    while [ $# -gt 0 ]; do
        case "$1" in
        --durable) durability="-c fsync=on -c synchronous_commit=on -c full_page_writes=on" ;;
        --ssl)
            [ $# -ge 3 ] || { echo "pg-test-server: --ssl needs CERT and KEY" >&2; exit 2; }
            ssl_cert=$2 ssl_key=$3
            shift 2
            ;;
        *) echo "pg-test-server: unknown start option '$1'" >&2; exit 2 ;;
        esac
        shift
    done
    dir=$(mktemp -d "${TMPDIR:-/tmp}/ferry-pg.XXXXXX")
    chmod 755 "$dir"
    [ "$(id -u)" -eq 0 ] && chown postgres: "$dir"
    # Every server program's output goes to files in $dir: the server keeps running after this
    # script, and must not hold the caller's stdout or stderr open (a pipe would never end).
    as_owner "$bindir/initdb" --pgdata="$dir/data" --username="$superuser" --auth=trust \
        --encoding=UTF8 --locale=C --no-sync >"$dir/initdb.log" 2>&1 || {
        cat "$dir/initdb.log" >&2
        exit 1
    }
    # Password logins for members of ferry_password_login (the tests' password roles), trust for
    # everyone else; first matching line wins.
    cat >"$dir/data/pg_hba.conf" <<HBA
local all +ferry_password_login scram-sha-256
host  all +ferry_password_login 127.0.0.1/32 scram-sha-256
local all all trust
host  all all 127.0.0.1/32 trust
HBA
    if [ -n "$ssl_cert" ]; then
        # The server reads its key only when the key is private to the cluster's owner.
        install -m 600 "$ssl_cert" "$dir/data/server.crt"
        install -m 600 "$ssl_key" "$dir/data/server.key"
        [ "$(id -u)" -eq 0 ] && chown postgres: "$dir/data/server.crt" "$dir/data/server.key"
        ssl_options=" -c ssl=on -c ssl_cert_file=server.crt -c ssl_key_file=server.key"
    fi
    local port attempt
    for attempt in 1 2 3 4 5; do
        port=$(free_port)
        echo "-c listen_addresses=127.0.0.1 -p $port -c unix_socket_directories=$dir $durability$ssl_options" >"$dir/options"
        if start_server "$dir"; then
            break
        fi
        port=
    done
    if [ -z "$port" ]; then
        echo "pg-test-server: the server did not start; its log:" >&2
        cat "$dir/pg_ctl.log" "$dir/server.log" >&2 2>/dev/null
        exit 1
    fi
    as_owner "$bindir/psql" -X -q -h "$dir" -p "$port" -U "$superuser" -d postgres \
        -v ON_ERROR_STOP=1 -c "CREATE DATABASE $database" \
        -c "CREATE ROLE ferry_password_login NOLOGIN" >/dev/null
    echo "postgresql://$superuser@127.0.0.1:$port/$database" >"$dir/url"
    echo "$port" >"$dir/port"
    print_env "$dir"
}

# Starts the cluster in DIR with the options it was made with.
# The server is a daemon: it gets no descriptor of ours beyond stdin/out/err (a server started
# inside `flock LOCK cmd` would otherwise hold LOCK for as long as it runs).
start_server() {
    local dir=$1 fd
    for fd in /proc/$$/fd/*; do
        fd=${fd##*/}
        [ "$fd" -gt 2 ] 2>/dev/null && [ "$fd" -ne 255 ] && eval "exec $fd>&-" 2>/dev/null
    done
    as_owner "$bindir/pg_ctl" --pgdata="$dir/data" --log="$dir/server.log" --wait \
        --options="$(cat "$dir/options")" start </dev/null >>"$dir/pg_ctl.log" 2>&1
}

crash() {
    local dir
    dir=$(server_dir "${1:-}")
    as_owner "$bindir/pg_ctl" --pgdata="$dir/data" --mode=immediate stop >>"$dir/pg_ctl.log" 2>&1
}

restart() {
    local dir
    dir=$(server_dir "${1:-}")
    start_server "$dir" || {
        echo "pg-test-server: the server did not start again; its log:" >&2
        tail -20 "$dir/server.log" >&2
        exit 1
    }
}

stop() {
    local dir
    dir=$(server_dir "${1:-}")
    as_owner "$bindir/pg_ctl" --pgdata="$dir/data" --mode=immediate stop >/dev/null 2>&1 || true
    rm -rf -- "$dir"
}

case "${1:-}" in
start)
    shift
    start "$@"
    ;;
stop) stop "${2:-}" ;;
crash) crash "${2:-}" ;;
restart) restart "${2:-}" ;;
env) print_env "$(server_dir "${2:-}")" ;;
*)
    echo "usage: $0 start [--durable] [--ssl CERT KEY] | stop|env|crash|restart [DIR]" >&2
    exit 2
    ;;
esac
