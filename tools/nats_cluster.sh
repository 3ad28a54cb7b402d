#!/usr/bin/env bash
# A three-node NATS JetStream cluster on loopback, for the tests and the
# fleet example.
#
#   tools/nats_cluster.sh start DIR      start n1, n2, n3; the last line printed
#                                        is their client URLs, comma-separated
#   tools/nats_cluster.sh stop DIR       end the servers started in DIR (by the
#                                        pids recorded there, nothing else)
#   tools/nats_cluster.sh kill DIR I     SIGKILL server nI (1, 2 or 3)
#   tools/nats_cluster.sh restart DIR I  start server nI again, same ports and
#                                        store, and wait until it listens
#
# Each server has its configuration (DIR/nI.conf), its JetStream store
# (DIR/nI/), its log (DIR/nI.log) and its pid (DIR/nI.pid) in DIR. The
# ports are free loopback ports chosen at start; the cluster routes join
# the three. `start` returns once every server listens and reports a
# JetStream meta leader. NATS_SERVER names the server binary (default:
# nats-server on the PATH).
set -euo pipefail

server=${NATS_SERVER:-nats-server}
cmd=${1:-}
dir=${2:-}
if [ -z "$cmd" ] || [ -z "$dir" ]; then
  echo "usage: $0 start|stop DIR | kill|restart DIR 1|2|3" >&2
  exit 2
fi

# The pid recorded for server nI, if that process is still the server
# started with DIR/nI.conf (a pid the system gave to another process since
# is left alone); empty otherwise.
ours() {
  local f="$dir/n$1.pid" pid
  [ -f "$f" ] || return 0
  pid=$(cat "$f")
  if tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -qF -- "$dir/n$1.conf"; then
    echo "$pid"
  fi
}

# A free loopback port, not one of those already taken in this run.
taken=" "
free_port() {
  local p
  while :; do
    p=$((20000 + RANDOM % 40000))
    case "$taken" in *" $p "*) continue ;; esac
    if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then
      taken="$taken$p "
      echo "$p"
      return
    fi
  done
}

listening() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# Starts node $1 from its configuration and waits until it listens.
launch() {
  local i=$1 port
  port=$(cat "$dir/n$i.port")
  "$server" -c "$dir/n$i.conf" >>"$dir/n$i.log" 2>&1 &
  echo $! >"$dir/n$i.pid"
  for _ in $(seq 1 200); do
    listening "$port" && return 0
    if ! kill -0 "$(cat "$dir/n$i.pid")" 2>/dev/null; then
      echo "nats_cluster.sh: server n$i exited; its log:" >&2
      tail -20 "$dir/n$i.log" >&2
      exit 1
    fi
    sleep 0.05
  done
  echo "nats_cluster.sh: server n$i does not listen on $port" >&2
  exit 1
}

node() {
  case "${1:-}" in 1 | 2 | 3) ;; *)
    echo "nats_cluster.sh: server number 1, 2 or 3, not '${1:-}'" >&2
    exit 2
    ;;
  esac
}

case "$cmd" in
start)
  if ! "$server" --version >/dev/null 2>&1; then
    echo "nats_cluster.sh: no nats-server at '$server': install it (apt-get install" \
      "nats-server, or bash tools/test-deps.sh) or set NATS_SERVER" >&2
    exit 1
  fi
  mkdir -p "$dir"
  dir=$(cd "$dir" && pwd)
  for i in 1 2 3; do
    if [ -f "$dir/n$i.pid" ] && kill -0 "$(cat "$dir/n$i.pid")" 2>/dev/null; then
      echo "nats_cluster.sh: $dir already has a running server n$i" >&2
      exit 1
    fi
  done
  declare -a client cluster http
  for i in 1 2 3; do
    client[i]=$(free_port)
    cluster[i]=$(free_port)
    http[i]=$(free_port)
  done
  for i in 1 2 3; do
    routes=""
    for j in 1 2 3; do
      [ "$j" = "$i" ] || routes="$routes${routes:+, }nats-route://127.0.0.1:${cluster[j]}"
    done
    mkdir -p "$dir/n$i"
    cat >"$dir/n$i.conf" <<EOF
server_name: n$i
listen: 127.0.0.1:${client[i]}
http: 127.0.0.1:${http[i]}
jetstream {
  store_dir: "$dir/n$i"
}
cluster {
  name: cbloom
  listen: 127.0.0.1:${cluster[i]}
  routes: [$routes]
}
EOF
    echo "${client[i]}" >"$dir/n$i.port"
    echo "${http[i]}" >"$dir/n$i.http"
  done
  for i in 1 2 3; do launch "$i"; done
  # JetStream is usable once the meta group has elected a leader that
  # every server knows.
  for _ in $(seq 1 600); do
    known=0
    for i in 1 2 3; do
      jsz=$(timeout 2 bash -c 'exec 3<>"/dev/tcp/127.0.0.1/$1" && printf "GET /jsz HTTP/1.0\r\n\r\n" >&3 && cat <&3' _ "${http[i]}" || true)
      if printf '%s' "$jsz" | tr -d ' \n' | grep -q '"meta_cluster":{[^}]*"leader":"n[123]"'; then
        known=$((known + 1))
      fi
    done
    [ "$known" = 3 ] && break
    sleep 0.1
  done
  if [ "$known" != 3 ]; then
    echo "nats_cluster.sh: no JetStream leader after 60 s; logs in $dir" >&2
    exit 1
  fi
  echo "nats://127.0.0.1:${client[1]},nats://127.0.0.1:${client[2]},nats://127.0.0.1:${client[3]}"
  ;;
stop)
  for i in 1 2 3; do
    f="$dir/n$i.pid"
    [ -f "$f" ] || continue
    pid=$(ours "$i")
    [ -n "$pid" ] || { rm -f "$f"; continue; }
    kill "$pid" 2>/dev/null || true
    for _ in $(seq 1 100); do
      kill -0 "$pid" 2>/dev/null || break
      sleep 0.05
    done
    kill -9 "$pid" 2>/dev/null || true
    rm -f "$f"
  done
  ;;
kill)
  node "${3:-}"
  f="$dir/n$3.pid"
  [ -f "$f" ] || { echo "nats_cluster.sh: no server n$3 recorded in $dir" >&2; exit 1; }
  pid=$(ours "$3")
  [ -n "$pid" ] && kill -9 "$pid" 2>/dev/null || true
  for _ in $(seq 1 100); do
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.05
  done
  rm -f "$f"
  ;;
restart)
  node "${3:-}"
  if [ -f "$dir/n$3.pid" ] && kill -0 "$(cat "$dir/n$3.pid")" 2>/dev/null; then
    echo "nats_cluster.sh: server n$3 is running" >&2
    exit 1
  fi
  launch "$3"
  ;;
*)
  echo "usage: $0 start|stop DIR | kill|restart DIR 1|2|3" >&2
  exit 2
  ;;
esac
