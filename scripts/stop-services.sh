#!/usr/bin/env bash
#
# stop-services.sh — stop the private PostgreSQL, ClickHouse and Redis
# instances started by scripts/services.sh.
#
# Usage:  scripts/stop-services.sh [--purge]
#
#   --purge   also delete the state directory
#             (${CAUSEWAY_SERVICES_DIR:-/tmp/causeway-services}), so the next
#             services.sh run starts from scratch.
#
# Servers that services.sh merely reused (or that were given through
# TEST_DATABASE_URL / TEST_CLICKHOUSE_URL / TEST_REDIS_URL) are not ours and are
# not touched.
#
set -euo pipefail

STATE_DIR=$(realpath -m -- "${CAUSEWAY_SERVICES_DIR:-/tmp/causeway-services}")
PG_DATA=$STATE_DIR/pg/data
CH_DIR=$STATE_DIR/ch
CH_PID_FILE=$CH_DIR/clickhouse-server.pid
CH_STOP_TIMEOUT=30
REDIS_PID_FILE=$STATE_DIR/redis/redis-server.pid
REDIS_STOP_TIMEOUT=30

log() { printf 'stop-services: %s\n' "$*" >&2; }
die() { printf 'stop-services: ERROR: %s\n' "$*" >&2; exit 1; }

usage() {
	printf 'usage: %s [--purge]\n' "$0" >&2
	exit 2
}

PURGE=false
for arg in "$@"; do
	case $arg in
	--purge) PURGE=true ;;
	-h | --help) usage ;;
	*)
		printf 'stop-services: unknown argument: %s\n' "$arg" >&2
		usage
		;;
	esac
done

# Run a command as the given user (or directly if that is us), from /.
as_user() {
	local user=$1
	shift
	if [[ $user == "$(id -un)" ]]; then
		(cd / && exec "$@")
	else
		(cd / && exec runuser -u "$user" -- "$@")
	fi
}

stop_postgres() {
	if [[ ! -f $PG_DATA/PG_VERSION ]]; then
		log "no PostgreSQL cluster in $PG_DATA"
		return 0
	fi
	local ver owner pg_ctl
	ver=$(<"$PG_DATA/PG_VERSION")
	pg_ctl=/usr/lib/postgresql/$ver/bin/pg_ctl
	[[ -x $pg_ctl ]] || die "$pg_ctl not found; cannot stop the cluster in $PG_DATA"
	# pg_ctl must run as the cluster owner (postgres when services.sh ran as
	# root, the invoking user otherwise).
	owner=$(stat -c %U "$PG_DATA")

	if ! as_user "$owner" "$pg_ctl" -D "$PG_DATA" status >/dev/null 2>&1; then
		log "PostgreSQL is not running"
		return 0
	fi
	log "stopping PostgreSQL ($PG_DATA)"
	as_user "$owner" "$pg_ctl" -D "$PG_DATA" -m fast -w -t 60 stop >&2
}

# True if $1 is a live process that looks like a ClickHouse server (guards
# against a stale pid file whose pid has been reused).
is_clickhouse_pid() {
	[[ $1 =~ ^[0-9]+$ ]] && kill -0 "$1" 2>/dev/null &&
		[[ $(tr '\0' ' ' <"/proc/$1/cmdline" 2>/dev/null) == *clickhouse* ]]
}

stop_clickhouse() {
	local pid=""
	[[ -f $CH_PID_FILE ]] && pid=$(<"$CH_PID_FILE")
	if [[ -z $pid ]] || ! is_clickhouse_pid "$pid"; then
		# No (valid) pid file: look for a server started with our config.
		pid=$(pgrep -o -f -- "--config-file=$CH_DIR/config.xml" || true)
	fi
	if [[ -z $pid ]] || ! is_clickhouse_pid "$pid"; then
		log "ClickHouse is not running"
		rm -f "$CH_PID_FILE"
		return 0
	fi

	log "stopping ClickHouse (pid $pid)"
	kill -TERM "$pid" || die "cannot signal ClickHouse pid $pid (it runs as $(stat -c %U "/proc/$pid"))"
	local deadline=$((SECONDS + CH_STOP_TIMEOUT))
	while kill -0 "$pid" 2>/dev/null; do
		if ((SECONDS >= deadline)); then
			log "ClickHouse did not exit within ${CH_STOP_TIMEOUT}s; sending SIGKILL"
			kill -KILL "$pid" 2>/dev/null || true
			break
		fi
		sleep 0.2
	done
	rm -f "$CH_PID_FILE"
}

# True if $1 is a live redis-server process (guards against a stale pid file
# whose pid has been reused).
is_redis_pid() {
	[[ $1 =~ ^[0-9]+$ ]] && kill -0 "$1" 2>/dev/null &&
		[[ $(tr '\0' ' ' <"/proc/$1/cmdline" 2>/dev/null) == *redis-server* ]]
}

stop_redis() {
	local pid=""
	[[ -f $REDIS_PID_FILE ]] && pid=$(<"$REDIS_PID_FILE")
	if [[ -z $pid ]] || ! is_redis_pid "$pid"; then
		log "Redis is not running"
		rm -f "$REDIS_PID_FILE"
		return 0
	fi

	log "stopping Redis (pid $pid)"
	kill -TERM "$pid" || die "cannot signal Redis pid $pid"
	local deadline=$((SECONDS + REDIS_STOP_TIMEOUT))
	while kill -0 "$pid" 2>/dev/null; do
		if ((SECONDS >= deadline)); then
			log "Redis did not exit within ${REDIS_STOP_TIMEOUT}s; sending SIGKILL"
			kill -KILL "$pid" 2>/dev/null || true
			break
		fi
		sleep 0.2
	done
	rm -f "$REDIS_PID_FILE"
}

if [[ ! -d $STATE_DIR ]]; then
	log "nothing to do: $STATE_DIR does not exist"
	exit 0
fi

# Same lock as services.sh, so we don't stop a server it is starting.
exec 9>"$STATE_DIR/.lock" || die "cannot open lock file $STATE_DIR/.lock"
flock -w 900 9 || die "timed out waiting for lock $STATE_DIR/.lock"

stop_postgres
stop_clickhouse
stop_redis

if $PURGE; then
	# Belt and braces before an rm -rf of a path that came from the environment.
	case $STATE_DIR in
	/ | /tmp | /root | /home | "$HOME" | "")
		die "refusing to delete state dir '$STATE_DIR'"
		;;
	esac
	log "deleting $STATE_DIR"
	rm -rf -- "$STATE_DIR"
fi
