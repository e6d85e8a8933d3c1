#!/usr/bin/env bash
#
# services.sh — make a throwaway PostgreSQL, ClickHouse and Redis available for
# the test suite and print their URLs as shell `export` lines; and find Chromium
# for the web console's browser tests (CHROMIUM_PATH), installing it with
# apt-get when it is missing and we are root.
#
# Usage:  eval "$(scripts/services.sh)"
#
# stdout carries ONLY the export lines; every progress message goes to stderr.
#
# For each service:
#   1. if TEST_DATABASE_URL / TEST_CLICKHOUSE_URL / TEST_REDIS_URL is already
#      set, it is echoed back untouched and the service is left alone;
#   2. otherwise, if something already answers on the port, it is reused;
#   3. otherwise a private instance is started from a state directory
#      (${CAUSEWAY_SERVICES_DIR:-/tmp/causeway-services}), installing the
#      server package with apt-get first if it is missing and we are root.
#
# The private instances listen on 127.0.0.1 only and never touch the system
# clusters/services. Stop them with scripts/stop-services.sh [--purge].
#
set -euo pipefail

# Absolute, because the servers run with / as their working directory.
STATE_DIR=$(realpath -m -- "${CAUSEWAY_SERVICES_DIR:-/tmp/causeway-services}")

PG_PORT=55432
PG_DB=causeway_test
PG_DIR=$STATE_DIR/pg
PG_DATA=$PG_DIR/data
PG_SOCK_DIR=$PG_DIR/run
PG_LOG=$PG_DIR/postgres.log

CH_TCP_PORT=19000
CH_DIR=$STATE_DIR/ch
CH_PID_FILE=$CH_DIR/clickhouse-server.pid
CH_LOG=$CH_DIR/log/clickhouse-server.log
CH_ERR_LOG=$CH_DIR/log/clickhouse-server.err.log
CH_START_TIMEOUT=60

REDIS_PORT=56379
REDIS_DIR=$STATE_DIR/redis
REDIS_PID_FILE=$REDIS_DIR/redis-server.pid
REDIS_LOG=$REDIS_DIR/redis-server.log
REDIS_START_TIMEOUT=20

DEFAULT_PG_URL="postgres://postgres@127.0.0.1:${PG_PORT}/${PG_DB}?sslmode=disable"
DEFAULT_CH_URL="clickhouse://127.0.0.1:${CH_TCP_PORT}/default"
DEFAULT_REDIS_URL="redis://127.0.0.1:${REDIS_PORT}/0"

# Keep the real stdout on fd 3 for the final export lines and send everything
# else (our messages, apt-get, initdb, pg_ctl, ...) to stderr, so nothing can
# leak into the caller's `eval`.
exec 3>&1 1>&2

log() { printf 'services: %s\n' "$*" >&2; }
die() { printf 'services: ERROR: %s\n' "$*" >&2; exit 1; }

is_root() { [[ $(id -u) -eq 0 ]]; }

# Single-quote a value for the shell (the URL might come from the caller's
# environment and contain anything).
shell_quote() {
	local s=${1//\'/\'\\\'\'}
	printf "'%s'" "$s"
}

# True if a TCP connection to 127.0.0.1:$1 succeeds.
tcp_open() {
	timeout 2 bash -c "exec 5<>/dev/tcp/127.0.0.1/$1" 2>/dev/null
}

# apt-get install, running `apt-get update` only if the first attempt fails
# (e.g. the package lists are missing on a fresh machine). The lock timeout
# makes us wait for another apt/dpkg run instead of failing straight away.
apt_install() {
	local apt=(apt-get -y -o DPkg::Lock::Timeout=600 install "$@")
	log "installing $* with apt-get"
	if ! DEBIAN_FRONTEND=noninteractive "${apt[@]}"; then
		log "apt-get install failed; running apt-get update and retrying"
		apt-get -o DPkg::Lock::Timeout=600 update
		DEBIAN_FRONTEND=noninteractive "${apt[@]}"
	fi
}

# Close every file descriptor above 2 in the current (sub)shell. Servers
# started from here must not inherit any: our fd 3 is the caller's stdout
# pipe, fd 9 holds the lock, and the caller may have passed others (process
# substitutions, make's jobserver, a `| tee`, ...). A daemon holding such a
# pipe makes `$(scripts/services.sh)` or a pipeline wait forever.
close_extra_fds() {
	local fd
	for fd in "/proc/$BASHPID/fd"/*; do
		fd=${fd##*/}
		if [[ $fd =~ ^[0-9]+$ ]] && ((fd > 2)); then
			eval "exec $fd>&-" 2>/dev/null || true
		fi
	done
}

# Run a command as the given user (or directly if that is us), from / so that
# the service user is not bothered by a cwd it cannot read, and without any
# inherited fd beyond stdin/stdout/stderr.
as_user() {
	local user=$1
	shift
	(
		close_extra_fds
		cd /
		if [[ $user == "$(id -un)" ]]; then
			exec "$@"
		else
			exec runuser -u "$user" -- "$@"
		fi
	)
}

# Take an exclusive lock on the state dir so that concurrent runs (parallel
# `make` targets, ...) don't both try to initdb / start the same server. The
# second run waits, then finds the server up and reuses it.
take_lock() {
	mkdir -p "$STATE_DIR"
	# Service users (postgres, clickhouse) must be able to traverse it.
	chmod 755 "$STATE_DIR" 2>/dev/null || true
	exec 9>"$STATE_DIR/.lock" ||
		die "cannot open lock file $STATE_DIR/.lock (state dir created by another user?)"
	# Generous: the holder may be running apt-get install.
	if ! flock -w 900 9; then
		die "timed out waiting for lock $STATE_DIR/.lock"
	fi
}

###########################################################################
# PostgreSQL
###########################################################################

# Prints the bin directory of the newest installed PostgreSQL, or nothing.
pg_find_bindir() {
	local d
	d=$(find /usr/lib/postgresql -mindepth 2 -maxdepth 2 -name bin -type d 2>/dev/null |
		sort -V | tail -n1) || true
	if [[ -n $d && -x $d/initdb && -x $d/pg_ctl ]]; then
		printf '%s\n' "$d"
	fi
}

pg_answers() {
	local isready=${PG_BIN:+$PG_BIN/pg_isready}
	[[ -x ${isready:-} ]] || isready=$(command -v pg_isready || true)
	if [[ -n $isready ]]; then
		"$isready" -q -h 127.0.0.1 -p "$PG_PORT" -t 2
	else
		tcp_open "$PG_PORT"
	fi
}

# Create the test database if it does not exist yet (over TCP, as postgres).
pg_ensure_db() {
	local psql=("$PG_BIN/psql" -X -q -v ON_ERROR_STOP=1 -h 127.0.0.1 -p "$PG_PORT" -U postgres)
	local exists
	exists=$("${psql[@]}" -d postgres -tA \
		-c "SELECT 1 FROM pg_database WHERE datname = '$PG_DB'") ||
		die "cannot connect to PostgreSQL on 127.0.0.1:$PG_PORT as user postgres"
	if [[ $exists != 1 ]]; then
		log "creating database $PG_DB"
		"$PG_BIN/createdb" -h 127.0.0.1 -p "$PG_PORT" -U postgres "$PG_DB"
	fi
}

pg_start() {
	local user
	if is_root; then
		user=postgres
		# The Debian package creates this user; be robust if it is missing.
		id -u postgres >/dev/null 2>&1 ||
			useradd --system --user-group --no-create-home \
				--home-dir /var/lib/postgresql --shell /bin/bash postgres
	else
		user=$(id -un)
	fi

	mkdir -p "$PG_DIR"
	if is_root; then
		chown postgres: "$PG_DIR"
	fi
	chmod 700 "$PG_DIR"

	# A data dir without PG_VERSION is a leftover of an interrupted initdb.
	if [[ -d $PG_DATA && ! -f $PG_DATA/PG_VERSION ]]; then
		log "removing incomplete data directory $PG_DATA"
		rm -rf "$PG_DATA"
	fi

	if [[ -f $PG_DATA/PG_VERSION ]]; then
		# Reuse the existing cluster with the binaries it was created by.
		local ver
		ver=$(<"$PG_DATA/PG_VERSION")
		if [[ -x /usr/lib/postgresql/$ver/bin/pg_ctl ]]; then
			PG_BIN=/usr/lib/postgresql/$ver/bin
		else
			die "$PG_DATA was created by PostgreSQL $ver, which is not installed;" \
				"run scripts/stop-services.sh --purge"
		fi
	else
		log "initialising PostgreSQL cluster in $PG_DATA ($PG_BIN)"
		as_user "$user" "$PG_BIN/initdb" -D "$PG_DATA" -A trust -U postgres -E UTF8 \
			--locale=C.UTF-8 --no-sync >/dev/null
		# Our settings go last so they win over anything initdb wrote.
		# It is a throwaway test server: durability is traded for speed.
		cat >>"$PG_DATA/postgresql.conf" <<-EOF

			# --- causeway test server (scripts/services.sh) ---
			listen_addresses = '127.0.0.1'
			port = $PG_PORT
			unix_socket_directories = '$PG_SOCK_DIR'
			max_connections = 200
			fsync = off
			synchronous_commit = off
			full_page_writes = off
		EOF
	fi

	# The socket dir is (re)created at every start: it lives under /tmp-like
	# storage that may have been cleaned.
	as_user "$user" mkdir -p "$PG_SOCK_DIR"

	log "starting PostgreSQL on 127.0.0.1:$PG_PORT (log: $PG_LOG)"
	local pg_ctl=("$PG_BIN/pg_ctl" -D "$PG_DATA" -l "$PG_LOG" -w -t 60 start)
	if ! as_user "$user" "${pg_ctl[@]}" >&2; then
		# Typical cause: a previous postmaster died moments ago and its pid in
		# postmaster.pid still looks alive (not reaped yet). Try once more.
		log "PostgreSQL did not start; retrying once in 3s"
		sleep 3
		if ! as_user "$user" "${pg_ctl[@]}" >&2; then
			log "last 40 lines of $PG_LOG:"
			tail -n 40 "$PG_LOG" >&2 || true
			die "PostgreSQL failed to start"
		fi
	fi
}

pg_setup() {
	if [[ -n ${TEST_DATABASE_URL:-} ]]; then
		log "TEST_DATABASE_URL already set; leaving PostgreSQL alone"
		PG_URL=$TEST_DATABASE_URL
		return
	fi
	PG_URL=$DEFAULT_PG_URL

	PG_BIN=$(pg_find_bindir)
	if pg_answers; then
		log "PostgreSQL already answering on 127.0.0.1:$PG_PORT; reusing it"
	else
		if [[ -z $PG_BIN ]]; then
			is_root || die "PostgreSQL server binaries not found in /usr/lib/postgresql/*/bin." \
				"Install them (e.g. 'sudo apt-get install postgresql') or set TEST_DATABASE_URL."
			apt_install postgresql
			PG_BIN=$(pg_find_bindir)
			[[ -n $PG_BIN ]] || die "PostgreSQL still not found after apt-get install"
		fi
		pg_start
	fi

	# Reusing a server also gets the database (re)created if it was dropped.
	if [[ -z $PG_BIN ]]; then
		PG_BIN=$(dirname "$(command -v psql || echo /nonexistent/psql)")
	fi
	[[ -x $PG_BIN/psql ]] || die "psql not found; cannot create database $PG_DB"
	pg_ensure_db
}

###########################################################################
# ClickHouse
###########################################################################

# Sets CH_SERVER and CH_CLIENT (arrays) to the commands to use, if found.
# Debian ships separate clickhouse-server/clickhouse-client binaries; the
# upstream packages ship a single `clickhouse` multi-call binary.
ch_find_binaries() {
	CH_SERVER=()
	CH_CLIENT=()
	if command -v clickhouse-server >/dev/null; then
		CH_SERVER=("$(command -v clickhouse-server)")
	elif command -v clickhouse >/dev/null; then
		CH_SERVER=("$(command -v clickhouse)" server)
	fi
	if command -v clickhouse-client >/dev/null; then
		CH_CLIENT=("$(command -v clickhouse-client)")
	elif command -v clickhouse >/dev/null; then
		CH_CLIENT=("$(command -v clickhouse)" client)
	fi
}

# `SELECT 1` over the native protocol; falls back to a plain TCP connect if
# there is no client binary.
ch_answers() {
	if ((${#CH_CLIENT[@]})); then
		timeout 5 "${CH_CLIENT[@]}" --host 127.0.0.1 --port "$CH_TCP_PORT" \
			-q 'SELECT 1' </dev/null >/dev/null 2>&1
	else
		tcp_open "$CH_TCP_PORT"
	fi
}

# Prints the pid of our ClickHouse server if its pid file points at a live
# clickhouse process (a stale pid file's pid may have been reused).
ch_running_pid() {
	local pid
	[[ -f $CH_PID_FILE ]] || return 1
	pid=$(<"$CH_PID_FILE")
	[[ $pid =~ ^[0-9]+$ ]] && kill -0 "$pid" 2>/dev/null || return 1
	[[ $(tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null) == *clickhouse* ]] || return 1
	printf '%s\n' "$pid"
}

# Minimal config for a private, loopback-only server. The format is the one
# of Debian's release 18.16 (<yandex> root); newer releases still accept it.
# Ports that are not mentioned (http, interserver, https, ...) are not opened:
# the tests only use the native protocol. For HTTP while debugging, add
# <http_port>18123</http_port> and restart.
ch_write_config() {
	cat >"$CH_DIR/config.xml" <<-EOF
		<?xml version="1.0"?>
		<!-- Generated by scripts/services.sh; rewritten at every start. -->
		<yandex>
		    <logger>
		        <level>information</level>
		        <log>$CH_LOG</log>
		        <errorlog>$CH_ERR_LOG</errorlog>
		        <size>100M</size>
		        <count>2</count>
		    </logger>

		    <listen_host>127.0.0.1</listen_host>
		    <tcp_port>$CH_TCP_PORT</tcp_port>

		    <max_connections>1024</max_connections>
		    <max_concurrent_queries>100</max_concurrent_queries>
		    <keep_alive_timeout>3</keep_alive_timeout>

		    <!-- Test box: keep the caches small. -->
		    <uncompressed_cache_size>268435456</uncompressed_cache_size>
		    <mark_cache_size>268435456</mark_cache_size>

		    <path>$CH_DIR/data/</path>
		    <tmp_path>$CH_DIR/tmp/</tmp_path>
		    <user_files_path>$CH_DIR/user_files/</user_files_path>
		    <format_schema_path>$CH_DIR/format_schemas/</format_schema_path>

		    <users_config>$CH_DIR/users.xml</users_config>
		    <default_profile>default</default_profile>
		    <default_database>default</default_database>

		    <!-- Deterministic DateTime rendering in tests. -->
		    <timezone>UTC</timezone>
		    <mlock_executable>false</mlock_executable>
		</yandex>
	EOF

	cat >"$CH_DIR/users.xml" <<-EOF
		<?xml version="1.0"?>
		<!-- Generated by scripts/services.sh; rewritten at every start. -->
		<yandex>
		    <profiles>
		        <default>
		            <max_memory_usage>4000000000</max_memory_usage>
		            <load_balancing>random</load_balancing>
		        </default>
		    </profiles>
		    <users>
		        <default>
		            <password></password>
		            <networks>
		                <ip>127.0.0.1</ip>
		                <ip>::1</ip>
		            </networks>
		            <profile>default</profile>
		            <quota>default</quota>
		        </default>
		    </users>
		    <quotas>
		        <default>
		            <interval>
		                <duration>3600</duration>
		                <queries>0</queries>
		                <errors>0</errors>
		                <result_rows>0</result_rows>
		                <read_rows>0</read_rows>
		                <execution_time>0</execution_time>
		            </interval>
		        </default>
		    </quotas>
		</yandex>
	EOF
}

ch_start() {
	local user pid
	if is_root && id -u clickhouse >/dev/null 2>&1; then
		user=clickhouse
	else
		user=$(id -un)
	fi

	# A pid file pointing at a live process means our server is running but
	# not answering (yet?): don't start a second one on top of it.
	if pid=$(ch_running_pid); then
		log "ClickHouse (pid $pid) is running but not answering yet; waiting for it"
	else
		rm -f "$CH_PID_FILE"
		mkdir -p "$CH_DIR"/{data,tmp,user_files,format_schemas,log}
		ch_write_config
		# The server writes config-preprocessed.xml next to its config, so the
		# whole dir must belong to the user it runs as.
		if is_root; then
			chown -R "$user": "$CH_DIR"
		fi

		log "starting ClickHouse on 127.0.0.1:$CH_TCP_PORT as $user (logs: $CH_DIR/log)"
		# --daemon: the server forks, writes its own pid file and, once
		# detached, reopens its stdout/stderr as stdout.log/stderr.log in the
		# log dir (those names must therefore not be created by us as root).
		# Until then its output goes to launch.log, away from our pipes.
		as_user "$user" "${CH_SERVER[@]}" --daemon \
			--config-file="$CH_DIR/config.xml" --pid-file="$CH_PID_FILE" \
			</dev/null >>"$CH_DIR/log/launch.log" 2>&1 ||
			log "clickhouse-server exited with status $? (see below if it does not come up)"
	fi

	local started=$SECONDS failed=""
	until ch_answers; do
		if ((SECONDS - started >= CH_START_TIMEOUT)); then
			failed="did not answer on 127.0.0.1:$CH_TCP_PORT within ${CH_START_TIMEOUT}s"
		elif ((SECONDS - started >= 5)) && ! ch_running_pid >/dev/null; then
			# The daemon writes its pid file early; no live pid after a few
			# seconds means it has died: no point in waiting the full minute.
			failed="is not running (no live pid in $CH_PID_FILE)"
		fi
		if [[ -n $failed ]]; then
			log "ClickHouse $failed"
			local f
			for f in "$CH_ERR_LOG" "$CH_DIR/log/stderr.log" "$CH_DIR/log/launch.log"; do
				if [[ -s $f ]]; then
					log "last 40 lines of $f:"
					tail -n 40 "$f" >&2
				fi
			done
			die "ClickHouse failed to start"
		fi
		sleep 0.5
	done
	log "ClickHouse is up (pid $(ch_running_pid || echo '?'))"
}

ch_setup() {
	if [[ -n ${TEST_CLICKHOUSE_URL:-} ]]; then
		log "TEST_CLICKHOUSE_URL already set; leaving ClickHouse alone"
		CH_URL=$TEST_CLICKHOUSE_URL
		return
	fi
	CH_URL=$DEFAULT_CH_URL

	ch_find_binaries
	if tcp_open "$CH_TCP_PORT"; then
		log "something already answers on 127.0.0.1:$CH_TCP_PORT; reusing it as ClickHouse"
		return
	fi

	if ((${#CH_SERVER[@]} == 0)); then
		is_root || die "ClickHouse server binary not found (clickhouse-server or clickhouse)." \
			"Install it or set TEST_CLICKHOUSE_URL."
		apt_install clickhouse-server clickhouse-client
		ch_find_binaries
		((${#CH_SERVER[@]})) || die "ClickHouse still not found after apt-get install"
	fi
	ch_start
}

###########################################################################
# Redis
###########################################################################

# PING answered with PONG; falls back to a plain TCP connect if there is no
# redis-cli.
redis_answers() {
	if command -v redis-cli >/dev/null; then
		[[ $(timeout 5 redis-cli -h 127.0.0.1 -p "$REDIS_PORT" ping </dev/null 2>/dev/null) == PONG ]]
	else
		tcp_open "$REDIS_PORT"
	fi
}

redis_start() {
	local user
	if is_root && id -u redis >/dev/null 2>&1; then
		user=redis
	else
		user=$(id -un)
	fi
	mkdir -p "$REDIS_DIR"
	if is_root; then
		chown "$user": "$REDIS_DIR"
	fi

	log "starting Redis on 127.0.0.1:$REDIS_PORT as $user (log: $REDIS_LOG)"
	# A test cache: nothing is saved (no RDB snapshots, no AOF). --daemonize makes
	# the server fork and write its pid file; its output goes to the log file.
	as_user "$user" redis-server --bind 127.0.0.1 --port "$REDIS_PORT" \
		--daemonize yes --pidfile "$REDIS_PID_FILE" --logfile "$REDIS_LOG" \
		--dir "$REDIS_DIR" --save '' --appendonly no \
		</dev/null >>"$REDIS_DIR/launch.log" 2>&1 ||
		log "redis-server exited with status $? (see below if it does not come up)"

	local started=$SECONDS
	until redis_answers; do
		if ((SECONDS - started >= REDIS_START_TIMEOUT)); then
			log "Redis did not answer on 127.0.0.1:$REDIS_PORT within ${REDIS_START_TIMEOUT}s"
			local f
			for f in "$REDIS_LOG" "$REDIS_DIR/launch.log"; do
				if [[ -s $f ]]; then
					log "last 40 lines of $f:"
					tail -n 40 "$f" >&2
				fi
			done
			die "Redis failed to start"
		fi
		sleep 0.2
	done
	log "Redis is up (pid $(cat "$REDIS_PID_FILE" 2>/dev/null || echo '?'))"
}

redis_setup() {
	if [[ -n ${TEST_REDIS_URL:-} ]]; then
		log "TEST_REDIS_URL already set; leaving Redis alone"
		REDIS_URL=$TEST_REDIS_URL
		return
	fi
	REDIS_URL=$DEFAULT_REDIS_URL

	if tcp_open "$REDIS_PORT"; then
		log "something already answers on 127.0.0.1:$REDIS_PORT; reusing it as Redis"
		return
	fi
	if ! command -v redis-server >/dev/null; then
		is_root || die "redis-server not found." \
			"Install it (e.g. 'sudo apt-get install redis-server') or set TEST_REDIS_URL."
		apt_install redis-server
		command -v redis-server >/dev/null || die "redis-server still not found after apt-get install"
	fi
	redis_start
}

###########################################################################
# Chromium (the web console's browser tests)
###########################################################################

# Prints the path of an installed Chromium, or nothing.
chromium_find() {
	local name
	for name in chromium chromium-browser; do
		if command -v "$name"; then
			return 0
		fi
	done
	return 1
}

chromium_setup() {
	if [[ -n ${CHROMIUM_PATH:-} ]]; then
		log "CHROMIUM_PATH already set; leaving Chromium alone"
		CHROME=$CHROMIUM_PATH
		return
	fi
	CHROME=$(chromium_find) || CHROME=""
	if [[ -z $CHROME ]]; then
		if ! is_root; then
			log "chromium not found: the console's browser tests skip (and fail with CI set);" \
				"install it (e.g. 'sudo apt-get install chromium') or set CHROMIUM_PATH"
			return
		fi
		apt_install chromium
		CHROME=$(chromium_find) || die "chromium still not found after apt-get install"
	fi
}

###########################################################################

main() {
	# Only take the lock (and create the state dir) if there is something to
	# manage.
	if [[ -z ${TEST_DATABASE_URL:-} || -z ${TEST_CLICKHOUSE_URL:-} || -z ${TEST_REDIS_URL:-} ]]; then
		take_lock
	fi

	local t0=${EPOCHREALTIME/,/.}
	pg_setup
	ch_setup
	redis_setup
	chromium_setup
	log "ready in $(awk -v a="$t0" -v b="${EPOCHREALTIME/,/.}" 'BEGIN { printf "%.1f", b - a }')s"

	printf 'export TEST_DATABASE_URL=%s\n' "$(shell_quote "$PG_URL")" >&3
	printf 'export TEST_CLICKHOUSE_URL=%s\n' "$(shell_quote "$CH_URL")" >&3
	printf 'export TEST_REDIS_URL=%s\n' "$(shell_quote "$REDIS_URL")" >&3
	if [[ -n $CHROME ]]; then
		printf 'export CHROMIUM_PATH=%s\n' "$(shell_quote "$CHROME")" >&3
	fi
}

main "$@"
