#!/bin/sh
# The official postgres image's contract, in short: POSTGRES_USER (default postgres), POSTGRES_PASSWORD or
# POSTGRES_PASSWORD_FILE, POSTGRES_DB (default: the user); $PGDATA initialised once; passwords (scram) over TCP.
set -eu
if [ "$(id -u)" = 0 ]; then
    mkdir -p "$PGDATA" && chown postgres:postgres "$PGDATA" && chmod 0700 "$PGDATA"
    exec setpriv --reuid=postgres --regid=postgres --init-groups "$0" "$@"
fi
user="${POSTGRES_USER:-postgres}"
db="${POSTGRES_DB:-$user}"
if [ ! -s "$PGDATA/PG_VERSION" ]; then
    if [ -n "${POSTGRES_PASSWORD_FILE:-}" ]; then
        password="$(cat "$POSTGRES_PASSWORD_FILE")"
    else
        password="${POSTGRES_PASSWORD:-}"
    fi
    [ -n "$password" ] || { echo "set POSTGRES_PASSWORD or POSTGRES_PASSWORD_FILE" >&2; exit 1; }
    pwfile="$(mktemp)"
    printf '%s\n' "$password" > "$pwfile"
    initdb --pgdata="$PGDATA" --username="$user" --pwfile="$pwfile" --encoding=UTF8 --no-locale \
        --auth-local=trust --auth-host=scram-sha-256
    rm -f "$pwfile"
    echo "host all all all scram-sha-256" >> "$PGDATA/pg_hba.conf"
    if [ "$db" != postgres ]; then
        # on the socket only, so nothing over TCP sees a half-made database
        pg_ctl --pgdata="$PGDATA" --wait --options="-c listen_addresses=''" start
        createdb --username="$user" "$db"
        pg_ctl --pgdata="$PGDATA" --wait --mode=fast stop
    fi
fi
exec postgres -D "$PGDATA" -c listen_addresses='*' "$@"
