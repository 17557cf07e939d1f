#!/usr/bin/env bash
# Install PostgreSQL from the Debian packages (if needed), initialise a private cluster, start it
# on 127.0.0.1 and create the test database. Idempotent; works as root (the server runs as the
# `postgres` user). Prints the URL and, when sourced, exports it:
#
#   source .ci/postgres.sh        # exports KAKEHIKI_TEST_DATABASE_URL
#   eval "$(.ci/postgres.sh)"     # same, from a subshell
#
# Settings (environment): KAKEHIKI_PG_PORT (default 54329), KAKEHIKI_PG_DATA (default
# /var/tmp/kakehiki-pg), KAKEHIKI_PG_DB (default kakehiki_test).
set -euo pipefail

PORT="${KAKEHIKI_PG_PORT:-54329}"
DATA="${KAKEHIKI_PG_DATA:-/var/tmp/kakehiki-pg}"
DB="${KAKEHIKI_PG_DB:-kakehiki_test}"
USER_NAME="kakehiki"
PASSWORD="kakehiki"

log() { echo "postgres.sh: $*" >&2; }

find_bindir() {
    local d
    for d in /usr/lib/postgresql/*/bin; do
        if [ -x "$d/initdb" ] && [ -x "$d/pg_ctl" ]; then
            echo "$d"
        fi
    done | sort -V | tail -n 1
}

BINDIR="$(find_bindir || true)"
if [ -z "$BINDIR" ]; then
    if [ "$(id -u)" != "0" ]; then
        log "PostgreSQL is not installed and installing it needs root (apt-get install postgresql)"
        exit 1
    fi
    log "installing PostgreSQL from the Debian packages"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq >&2
    apt-get install -y -qq postgresql >&2
    BINDIR="$(find_bindir || true)"
    if [ -z "$BINDIR" ]; then
        log "apt-get installed postgresql but no initdb/pg_ctl was found under /usr/lib/postgresql/*/bin"
        exit 1
    fi
fi

# Run a command as the cluster owner.
as_owner() {
    if [ "$(id -u)" = "0" ]; then
        runuser -u postgres -- "$@"
    else
        "$@"
    fi
}

if [ "$(id -u)" = "0" ] && ! id postgres >/dev/null 2>&1; then
    log "the postgres system user is missing (the Debian package creates it)"
    exit 1
fi

if [ ! -s "$DATA/PG_VERSION" ]; then
    log "initialising a cluster in $DATA"
    mkdir -p "$DATA"
    if [ "$(id -u)" = "0" ]; then chown postgres:postgres "$DATA"; fi
    chmod 700 "$DATA"
    as_owner "$BINDIR/initdb" -D "$DATA" -A trust -U postgres --encoding=UTF8 --locale=C >/dev/null
fi

if ! as_owner "$BINDIR/pg_ctl" -D "$DATA" status >/dev/null 2>&1; then
    log "starting the server on 127.0.0.1:$PORT"
    as_owner "$BINDIR/pg_ctl" -D "$DATA" -l "$DATA/server.log" -w -t 60 \
        -o "-c listen_addresses=127.0.0.1 -p $PORT -k /tmp -c max_connections=200 -c fsync=off" start >/dev/null
fi

for _ in $(seq 1 60); do
    if "$BINDIR/pg_isready" -h 127.0.0.1 -p "$PORT" -q; then break; fi
    sleep 0.5
done
if ! "$BINDIR/pg_isready" -h 127.0.0.1 -p "$PORT" -q; then
    log "the server did not become ready on 127.0.0.1:$PORT; see $DATA/server.log"
    exit 1
fi

PSQL=("$BINDIR/psql" -h 127.0.0.1 -p "$PORT" -U postgres -v ON_ERROR_STOP=1 -qtA)
if [ "$("${PSQL[@]}" -c "SELECT 1 FROM pg_roles WHERE rolname = '$USER_NAME'")" != "1" ]; then
    "${PSQL[@]}" -c "CREATE ROLE $USER_NAME LOGIN PASSWORD '$PASSWORD' CREATEDB" >/dev/null
fi
if [ "$("${PSQL[@]}" -c "SELECT 1 FROM pg_database WHERE datname = '$DB'")" != "1" ]; then
    "${PSQL[@]}" -c "CREATE DATABASE $DB OWNER $USER_NAME" >/dev/null
fi

KAKEHIKI_TEST_DATABASE_URL="postgres://$USER_NAME:$PASSWORD@127.0.0.1:$PORT/$DB"
export KAKEHIKI_TEST_DATABASE_URL
echo "export KAKEHIKI_TEST_DATABASE_URL=$KAKEHIKI_TEST_DATABASE_URL"
