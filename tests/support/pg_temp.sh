# A PostgreSQL server of its own for a test or a benchmark, sourced: `pg_temp_start DIR`
# makes a cluster in DIR (initdb), starts it on a unix socket in DIR only (no TCP port),
# and sets PG_TEMP_URL to a libpq URL of its database; `pg_temp_stop` stops it. The
# server runs unprivileged: as the caller, or as nobody when the caller is root
# (PostgreSQL refuses to run as root). Binaries: PG_BIN, default /usr/lib/postgresql/15/bin.
# PG_TEMP_OPTIONS: more server settings (default "-c fsync=off": tests need no durability;
# benchmarks set it empty to measure the server as configured by default).
PG_BIN=${PG_BIN:-/usr/lib/postgresql/15/bin}
PG_TEMP_DIR=

pg_temp_as() {
  if [ "$(id -u)" -eq 0 ]; then
    setpriv --reuid=nobody --regid=nogroup --clear-groups -- "$@"
  else
    "$@"
  fi
}

pg_temp_start() {
  rm -rf "$1" && mkdir -p "$1" || return 1
  PG_TEMP_DIR=$(cd "$1" && pwd) # the server runs elsewhere: the socket's path is absolute
  [ "$(id -u)" -ne 0 ] || chown nobody:nogroup "$PG_TEMP_DIR" || return 1
  pg_temp_as "$PG_BIN/initdb" -D "$PG_TEMP_DIR/data" -U fleet --auth=trust -E UTF8 \
    >"$PG_TEMP_DIR/initdb.log" 2>&1 || { cat "$PG_TEMP_DIR/initdb.log" >&2; return 1; }
  pg_temp_as "$PG_BIN/pg_ctl" -D "$PG_TEMP_DIR/data" -l "$PG_TEMP_DIR/server.log" -w -t 60 \
    -o "-c listen_addresses='' -c unix_socket_directories='$PG_TEMP_DIR' ${PG_TEMP_OPTIONS--c fsync=off}" start \
    >/dev/null || { cat "$PG_TEMP_DIR/server.log" >&2; return 1; }
  PG_TEMP_URL="postgresql://fleet@/postgres?host=$PG_TEMP_DIR"
}

pg_temp_stop() {
  [ -n "$PG_TEMP_DIR" ] && [ -d "$PG_TEMP_DIR/data" ] || return 0
  pg_temp_as "$PG_BIN/pg_ctl" -D "$PG_TEMP_DIR/data" -m fast -w stop >/dev/null 2>&1
}
