# Sourced by the compatibility scripts: a cluster of several processes on one
# machine (etcd, `tabula serve`, a `tabula regionserver` and a `tabula gateway`,
# the servers sharing one data directory), so a suite can run against a gateway
# that holds no data and reaches the rows over the network.
#
#   cluster_start DIR   starts it under DIR; sets cluster_thrift1, cluster_thrift2
#   cluster_stop        stops it (gateway, regionserver, serve, etcd)
#   cluster_logs        prints the tail of every log (for a failure report)
# Expects $bin (target/release/tabula) and Debian's etcd-server.

cluster_pids=()
cluster_dir=""

# A free TCP port on the loopback interface.
cluster_free_port() {
    python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

# Waits for "$2" to appear in file "$1" (pid "$3" must stay alive); prints the line.
cluster_wait_line() {
    local file="$1" prefix="$2" pid="$3" line=""
    for _ in $(seq 1 300); do
        line="$(grep -m1 "^$prefix" "$file" 2>/dev/null || true)"
        [ -n "$line" ] && { echo "$line"; return 0; }
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.1
    done
    return 1
}

cluster_start() {
    cluster_dir="$1"
    mkdir -p "$cluster_dir/data"
    local etcd_bin
    etcd_bin="$(command -v etcd || true)"
    [ -n "$etcd_bin" ] || { echo "cluster: etcd is not installed (apt-get install etcd-server)" >&2; return 1; }
    local client peer
    client="http://127.0.0.1:$(cluster_free_port)"
    peer="http://127.0.0.1:$(cluster_free_port)"
    "$etcd_bin" --name compat --data-dir "$cluster_dir/etcd" \
        --listen-client-urls "$client" --advertise-client-urls "$client" \
        --listen-peer-urls "$peer" --initial-advertise-peer-urls "$peer" \
        --initial-cluster "compat=$peer" --log-level warn \
        >"$cluster_dir/etcd.log" 2>&1 &
    cluster_pids+=($!)
    local healthy=""
    for _ in $(seq 1 100); do
        if python3 -c 'import sys, urllib.request; sys.exit(0 if b"true" in urllib.request.urlopen(sys.argv[1] + "/health", timeout=1).read() else 1)' "$client" 2>/dev/null; then
            healthy=1
            break
        fi
        sleep 0.1
    done
    [ -n "$healthy" ] || { echo "cluster: etcd did not become healthy" >&2; cluster_logs; return 1; }
    export TABULA_ETCD_ENDPOINTS="$client"

    "$bin" serve --data-dir "$cluster_dir/data" --listen 127.0.0.1:0 --thrift2-listen 127.0.0.1:0 \
        >"$cluster_dir/serve.out" 2>"$cluster_dir/serve.log" &
    cluster_pids+=($!)
    cluster_wait_line "$cluster_dir/serve.out" "tabula ready" "$!" >/dev/null ||
        { echo "cluster: tabula serve did not start" >&2; cluster_logs; return 1; }

    "$bin" regionserver --data-dir "$cluster_dir/data" --listen 127.0.0.1:0 \
        >"$cluster_dir/regionserver.out" 2>"$cluster_dir/regionserver.log" &
    cluster_pids+=($!)
    cluster_wait_line "$cluster_dir/regionserver.out" "tabula regionserver ready" "$!" >/dev/null ||
        { echo "cluster: tabula regionserver did not start" >&2; cluster_logs; return 1; }

    "$bin" gateway --listen 127.0.0.1:0 --thrift2-listen 127.0.0.1:0 \
        >"$cluster_dir/gateway.out" 2>"$cluster_dir/gateway.log" &
    cluster_pids+=($!)
    local ready
    ready="$(cluster_wait_line "$cluster_dir/gateway.out" "tabula gateway ready" "$!")" ||
        { echo "cluster: tabula gateway did not start" >&2; cluster_logs; return 1; }
    cluster_thrift1="$(sed -n 's/.*thrift1=\([^ ]*\).*/\1/p' <<<"$ready")"
    cluster_thrift2="$(sed -n 's/.*thrift2=\([^ ]*\).*/\1/p' <<<"$ready")"
    unset TABULA_ETCD_ENDPOINTS
}

cluster_stop() {
    local i pid
    # Newest first: gateway, regionserver, serve, etcd.
    for ((i = ${#cluster_pids[@]} - 1; i >= 0; i--)); do
        pid="${cluster_pids[$i]}"
        if kill -0 "$pid" 2>/dev/null; then
            kill -TERM "$pid" 2>/dev/null || true
            wait "$pid" 2>/dev/null || true
        fi
    done
    cluster_pids=()
}

cluster_logs() {
    local f
    for f in "$cluster_dir"/*.log; do
        [ -f "$f" ] || continue
        echo "--- $f" >&2
        tail -n 40 "$f" >&2
    done
}
