#!/usr/bin/env bash
# A throw-away PostgreSQL cluster on a loopback port, for the tests of the engine's PostgreSQL
# backend, the CLI and the shard router.
#
#   eval "$(scripts/pg-test-cluster.sh start)"   # prints: export INDEXA_TEST_PG_URL=postgres://postgres@127.0.0.1:PORT
#                                                # (and export INDEXA_TEST_PG_CA=… with TLS)
#   cargo test -p indexa-shard
#   scripts/pg-test-cluster.sh stop
#
# start installs Debian's postgresql package when no initdb is found (needs root), creates a
# cluster owned by the postgres user (initdb and pg_ctl refuse to run as root) with trust
# authentication in $INDEXA_PG_DIR (default /tmp/indexa-pg-test), listening only on 127.0.0.1
# at $INDEXA_PG_PORT (default: the first free port from 54329), and writes the export lines to
# $INDEXA_PG_DIR/env as well. Tests create their own databases from that URL. When the openssl
# tool is at hand (Debian's postgresql package brings it), the cluster also accepts TLS with a
# certificate for 127.0.0.1 from a throw-away certificate authority, whose certificate
# INDEXA_TEST_PG_CA names (a second export line).
# stop stops the cluster and removes its directory.
set -euo pipefail

dir="${INDEXA_PG_DIR:-/tmp/indexa-pg-test}"

log() { echo "pg-test-cluster: $*" >&2; }

# Runs a command as the postgres user, from / (it may not be allowed into the current folder).
as_postgres() {
    if [ "$(id -un)" = postgres ]; then
        "$@"
    elif command -v runuser >/dev/null 2>&1; then
        (cd / && runuser -u postgres -- "$@")
    else
        (cd / && su postgres -s /bin/bash -c "$(printf '%q ' "$@")")
    fi
}

find_bin() {
    local found
    found=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1 || true)
    if [ -n "$found" ] && [ -x "$found/initdb" ]; then
        echo "$found"
    fi
}

port_free() {
    ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
}

start() {
    local bin port
    bin=$(find_bin)
    if [ -z "$bin" ]; then
        log "installing postgresql from Debian's packages"
        export DEBIAN_FRONTEND=noninteractive
        apt-get update -qq >&2
        apt-get install -y -qq postgresql >&2
        bin=$(find_bin)
        [ -n "$bin" ] || { log "initdb not found after installing postgresql"; exit 1; }
    fi
    if [ -f "$dir/data/postmaster.pid" ]; then
        log "a cluster is already running in $dir; stopping it first"
        stop
    fi
    port="${INDEXA_PG_PORT:-}"
    if [ -z "$port" ]; then
        port=54329
        while ! port_free "$port"; do
            port=$((port + 1))
            [ "$port" -lt 54429 ] || { log "no free port in 54329-54428"; exit 1; }
        done
    fi
    rm -rf "$dir"
    mkdir -p "$dir"
    chown postgres: "$dir" 2>/dev/null || chown postgres "$dir"
    as_postgres "$bin/initdb" -D "$dir/data" -U postgres -A trust -E UTF8 --no-sync >"$dir/initdb.log" 2>&1 \
        || { cat "$dir/initdb.log" >&2; exit 1; }
    local tls="" ca_line=""
    if command -v openssl >/dev/null 2>&1 && make_certificates; then
        tls="-c ssl=on -c ssl_cert_file=$dir/server.crt -c ssl_key_file=$dir/server.key"
        ca_line="export INDEXA_TEST_PG_CA=$dir/ca.crt"
    fi
    as_postgres "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 \
        -o "-c listen_addresses=127.0.0.1 -p $port -k $dir -c fsync=off -c max_connections=300 $tls" start >&2 \
        || { cat "$dir/server.log" >&2; exit 1; }
    echo "$bin" >"$dir/bin"
    local line="export INDEXA_TEST_PG_URL=postgres://postgres@127.0.0.1:$port"
    if [ -n "$ca_line" ]; then
        line="$line
$ca_line"
    fi
    echo "$line" >"$dir/env"
    log "started on 127.0.0.1:$port (data in $dir)"
    echo "$line"
}

# A certificate authority (ca.crt) and a server certificate for 127.0.0.1 signed by it
# (server.crt, server.key, readable by the postgres user only), in $dir.
make_certificates() {
    (
        cd "$dir"
        openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 \
            -subj "/CN=Indexa test CA" -keyout ca.key -out ca.crt
        openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
            -subj "/CN=127.0.0.1" -keyout server.key -out server.csr
        printf 'subjectAltName=IP:127.0.0.1\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n' >server.ext
        openssl x509 -req -in server.csr -CA ca.crt -CAkey ca.key -CAcreateserial -days 2 \
            -extfile server.ext -out server.crt
        chown postgres: server.key server.crt 2>/dev/null || chown postgres server.key server.crt
        chmod 600 server.key
    ) >"$dir/certificates.log" 2>&1 || { log "no TLS: $(tail -n 1 "$dir/certificates.log")"; return 1; }
}

stop() {
    if [ ! -d "$dir/data" ]; then
        log "no cluster in $dir"
        return 0
    fi
    local bin
    bin=$(cat "$dir/bin" 2>/dev/null || find_bin)
    as_postgres "$bin/pg_ctl" -D "$dir/data" -m fast -w stop >&2 || true
    rm -rf "$dir"
    log "stopped"
}

case "${1:-}" in
    start) start ;;
    stop) stop ;;
    *)
        echo "usage: $0 start|stop" >&2
        exit 2
        ;;
esac
