#!/usr/bin/env bash
# Serve one site from N Daphne processes on consecutive ports behind HAProxy, sharing PostgreSQL (DATABASE_URL)
# and Redis (REDIS_URL): migrate and seed once, start the processes, then HAProxy in front of them
# (deploy/haproxy.cfg.template: a table's sockets to one process by their path, health checks on /healthz);
# Ctrl-C stops them all. docs/deployment.md, "A load balancer in front".
#
#   scripts/run-cluster.sh [N]        (or: make run-cluster N=2)
#
# Environment (defaults in brackets):
#   DATABASE_URL  [postgres://postgres@127.0.0.1:5432/blackjack_cluster]  created if it does not exist
#   REDIS_URL     [redis://127.0.0.1:6379/2]
#   DB_POOL_MAX_SIZE [10]: PostgreSQL connections per process, at most (Django's psycopg pool)
#   HOST [127.0.0.1]  PORT [8001]: process k listens on PORT+k-1
#   BALANCER [haproxy]: haproxy, installed with apt-get if missing (as root; otherwise the script says so and
#                 stops), or none: the processes alone, each reached on its own port, as before
#   FRONT_BIND [$HOST:8000]: where HAProxy listens; FRONT_CERT: a PEM file (certificate and key) makes it
#                 terminate TLS there. Its configuration, stats socket and log: .venv/cluster-haproxy.*
#   BEHIND_PROXY [1 with HAProxy, else 0]: 1 passes Daphne --proxy-headers and trusts X-Forwarded-Proto, for
#                 a proxy that overwrites X-Forwarded-For (HAProxy here does); keep the processes' ports
#                 reachable by the proxy only
#   CLUSTER_DEBUG [0]: 1 runs with DEBUG on (no collectstatic, no SECRET_KEY needed; slower: every query is
#                 kept in memory). With 0 a SECRET_KEY is generated once into .venv/cluster-secret-key unless given,
#                 static files are collected, and the HTTPS-only settings are switched off unless FRONT_CERT is
#                 given, since this local cluster speaks plain HTTP (see docs/deployment.md).
set -euo pipefail
cd "$(dirname "$0")/.."

count="${1:-${N:-2}}"
case "$count" in ''|*[!0-9]*) echo "N must be a whole number, not '$count'" >&2; exit 2;; esac
[ "$count" -ge 1 ] || { echo "N must be at least 1" >&2; exit 2; }

PY=.venv/bin/python
[ -x "$PY" ] || { echo "no virtualenv: run 'make run' or 'make test' once first" >&2; exit 1; }
host="${HOST:-127.0.0.1}"
base_port="${PORT:-8001}"
balancer="${BALANCER:-haproxy}"
case "$balancer" in haproxy|none) ;; *) echo "BALANCER must be haproxy or none, not '$balancer'" >&2; exit 2;; esac
front_bind="${FRONT_BIND:-$host:8000}"
haproxy_bin=""
if [ "$balancer" = haproxy ]; then
    haproxy_bin="$(command -v haproxy || command -v /usr/sbin/haproxy || true)"
    if [ -z "$haproxy_bin" ]; then
        if [ "$(id -u)" = 0 ]; then
            echo "installing HAProxy (Debian's package)"
            export DEBIAN_FRONTEND=noninteractive
            apt-get install -y -qq haproxy >/dev/null || { apt-get update -qq && apt-get install -y -qq haproxy >/dev/null; }
            haproxy_bin="$(command -v haproxy || command -v /usr/sbin/haproxy)"
        else
            echo "HAProxy is not installed: run 'sudo apt-get install -y haproxy' (or this script as root), or" \
                "start the processes alone with BALANCER=none" >&2
            exit 1
        fi
    fi
fi
export DATABASE_URL="${DATABASE_URL:-postgres://postgres@127.0.0.1:5432/blackjack_cluster}"
export REDIS_URL="${REDIS_URL:-redis://127.0.0.1:6379/2}"
export DB_POOL_MAX_SIZE="${DB_POOL_MAX_SIZE:-10}"  # PostgreSQL connections per process, at most
export LOG_LEVEL="${LOG_LEVEL:-WARNING}"

if [ "${CLUSTER_DEBUG:-0}" = 1 ]; then
    export DEBUG=1
else
    export DEBUG=0
    if [ -z "${SECRET_KEY:-}" ]; then
        key_file=.venv/cluster-secret-key
        [ -s "$key_file" ] || "$PY" -c 'import secrets; print(secrets.token_urlsafe(50))' > "$key_file"
        SECRET_KEY="$(cat "$key_file")"
        export SECRET_KEY
    fi
    if [ -z "${FRONT_CERT:-}" ]; then
        export SECURE_SSL_REDIRECT="${SECURE_SSL_REDIRECT:-0}" SESSION_COOKIE_SECURE="${SESSION_COOKIE_SECURE:-0}"
        export CSRF_COOKIE_SECURE="${CSRF_COOKIE_SECURE:-0}" SECURE_HSTS_SECONDS="${SECURE_HSTS_SECONDS:-0}"
    fi
fi

# Create the database when PostgreSQL is reachable and it does not exist yet.
case "$DATABASE_URL" in
postgres://*|postgresql://*)
    "$PY" - <<'PYTHON'
import os

import dj_database_url
import psycopg
from psycopg import sql

config = dj_database_url.parse(os.environ["DATABASE_URL"])
params = {"host": config["HOST"] or "127.0.0.1", "port": config["PORT"] or 5432, "user": config["USER"]}
if config["PASSWORD"]:
    params["password"] = config["PASSWORD"]
with psycopg.connect(dbname="postgres", autocommit=True, **params) as connection:
    exists = connection.execute("SELECT 1 FROM pg_database WHERE datname = %s", [config["NAME"]]).fetchone()
    if not exists:
        connection.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(config["NAME"])))
        print(f"created database {config['NAME']}")
PYTHON
    ;;
esac

# The environment of the servers, for the tools that must share it (python -m tools.loadtest, manage.py audit_ledger):
#   set -a; . .venv/cluster.env; set +a
env | grep -E '^(DEBUG|SECRET_KEY|CHANNEL_LAYER_KEY|DATABASE_URL|REDIS_URL|DB_POOL_MAX_SIZE|SECURE_SSL_REDIRECT|SESSION_COOKIE_SECURE|CSRF_COOKIE_SECURE|SECURE_HSTS_SECONDS)=' \
    | sed "s/=\(.*\)/='\1'/" > .venv/cluster.env

"$PY" manage.py migrate --noinput
"$PY" manage.py seed_demo
[ "$DEBUG" = 1 ] || "$PY" manage.py collectstatic --noinput -v 0

# Client addresses from X-Forwarded-For only behind a proxy that overwrites it (log-in throttling counts per
# address; a header a client sent itself would let it pick its own). No --websocket-max-message-size: it caps
# what the server sends too; the consumers cap what clients send. A websocket handshake may take 30 s, not
# Daphne's 5: behind a burst of arrivals (a process restarted, every socket coming back) the accept waits its
# turn for the database, and a dropped handshake only comes back as another one.
[ "$balancer" = haproxy ] && export BEHIND_PROXY="${BEHIND_PROXY:-1}"
proxy_flags=()
[ "${BEHIND_PROXY:-0}" = 1 ] && proxy_flags=(--proxy-headers)

pids=()
stop() {
    trap - INT TERM EXIT
    for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
    wait
}
trap stop EXIT
trap 'stop; exit 130' INT
trap 'stop; exit 143' TERM

# Behind HAProxy its log is the access log (every request, the path without the query string, and the process
# that served it): the processes keep none of their own, which would list its health checks too.
log_flags=()
[ "$balancer" = haproxy ] && log_flags=(--verbosity 0)
servers=()
for k in $(seq 1 "$count"); do
    port=$((base_port + k - 1))
    "$PY" -m cardroom.serve -b "$host" -p "$port" "${proxy_flags[@]}" "${log_flags[@]}" \
        --websocket_connect_timeout 30 cardroom.asgi:application &
    pids+=("$!")
    servers+=(--server "$host:$port")
    echo "process $k: http://$host:$port (pid $!)"
done
echo "$count process(es) on ports $base_port-$((base_port + count - 1)); DATABASE_URL=$DATABASE_URL REDIS_URL=$REDIS_URL"

if [ "$balancer" = haproxy ]; then
    # HAProxy starts once every process listens, so that none begins out of rotation.
    for k in $(seq 1 "$count"); do
        port=$((base_port + k - 1))
        for _ in $(seq 600); do
            (exec 3<>"/dev/tcp/$host/$port") 2>/dev/null && break
            sleep 0.1
        done
    done
    cert=()
    [ -n "${FRONT_CERT:-}" ] && cert=(--cert "$FRONT_CERT")
    "$PY" -m tools.haproxy --bind "$front_bind" "${servers[@]}" "${cert[@]}" \
        --stats-socket "$PWD/.venv/cluster-haproxy.sock" > .venv/cluster-haproxy.cfg
    "$haproxy_bin" -db -f .venv/cluster-haproxy.cfg >> .venv/cluster-haproxy.log 2>&1 &
    pids+=("$!")
    scheme=http
    [ -n "${FRONT_CERT:-}" ] && scheme=https
    echo "HAProxy (pid $!): $scheme://$front_bind in front of them; its log: .venv/cluster-haproxy.log"
fi
echo "Ctrl-C stops them all."
wait -n "${pids[@]}" || true
echo "a server process or HAProxy exited; stopping the others" >&2
