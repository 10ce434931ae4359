#!/usr/bin/env bash
# Runs a command beside a throwaway PostgreSQL server (unix socket only, no TCP port), then stops it.
# The command finds the server in ASSAY_TEST_POSTGRES. PostgreSQL is installed with apt when missing.
set -euo pipefail

pg_bin() { ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1; }

if [ -z "$(pg_bin)" ]; then
	echo ">>> Installing PostgreSQL (apt) for the team-mode tests"
	if [ "$(id -u)" = 0 ]; then SUDO=""; else SUDO="sudo"; fi
	$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq postgresql >/dev/null
fi
BIN="$(pg_bin)"

DIR="$(mktemp -d /tmp/assay-pg.XXXXXX)"
chmod 755 "$DIR"
# PostgreSQL refuses to run as root: the server runs as the packaged postgres user then.
if [ "$(id -u)" = 0 ]; then
	id postgres >/dev/null 2>&1 || useradd --system --no-create-home postgres
	chown postgres "$DIR"
	AS_SERVER=(runuser -u postgres --)
else
	AS_SERVER=()
fi

stop() {
	"${AS_SERVER[@]}" "$BIN/pg_ctl" -D "$DIR/data" -m immediate stop >/dev/null 2>&1 || true
	rm -rf "$DIR"
}
trap stop EXIT

"${AS_SERVER[@]}" "$BIN/initdb" -D "$DIR/data" -U assay -A trust --no-sync -E UTF8 >"$DIR/initdb.log"
"${AS_SERVER[@]}" "$BIN/pg_ctl" -D "$DIR/data" -l "$DIR/server.log" -w \
	-o "-k $DIR -c listen_addresses='' -c fsync=off -c max_connections=200" start >/dev/null
export ASSAY_TEST_POSTGRES="postgresql+psycopg://assay@/postgres?host=$DIR"
echo ">>> PostgreSQL $("$BIN/postgres" --version | awk '{print $3}') running for the tests at $DIR"
"$@"
