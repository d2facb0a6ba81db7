#!/usr/bin/env bash
# Tabula over the wire, side by side with its reference points, in one run on one
# machine: the RPC ceiling (tabula serve --null-backend), Redis (redis-server and
# redis-benchmark), the Bigtable paper's single-tablet-server figures, scale (1 M and
# 10 M rows), memory during a large load, as-of-T reads of a 100,000-version cell,
# scans whose filter keeps a few rows of the table, with and without skip hints, hot
# counters with and without coalesced increments, and point calls over each
# transport (buffered, framed, compact, HBase's HTTP mode, HTTPS).
#
#   bench/compare.sh [section ...]      sections: ceiling redis bigtable versions filters
#                                       counters transports scale (default: all but
#                                       scale; "all" adds scale, the 1 M / 10 M rows runs)
#
# Settings (environment): RECORDS (rows of the ceiling, Redis and Bigtable runs,
# default 1000000), OPERATIONS (per timed run, default 200000), CEILING_ROUNDS (5,
# alternating ceiling/Tabula rounds; medians reported), CONNECTIONS (16),
# VALUE_SIZE (1000), SCALE_ROWS ("1000000 10000000"), SETTLE_SECS (3600, the longest
# wait for an idle server after a load; a 10 M-row load's compactions take minutes),
# MEMORY_BUDGET_MB (1024, the
# servers of the bigtable, versions and scale sections), CACHED_BUDGET_MB (6144, the
# servers of the ceiling and redis sections: a budget whose block cache, a quarter of
# it, holds the RECORDS rows, as Redis holds them in memory), CLIENT_SCHED (batch,
# the scheduling policy of both load generators, tabula bench and redis-benchmark:
# under SCHED_BATCH a woken client does not preempt the server thread that woke it,
# as a client on another machine never takes the server's cores; "normal" for the
# default policy), OUT (results directory, default bench/results/<UTC date-time>).
#
# Every run appends a JSON line to $OUT/runs.jsonl (redis-benchmark's CSV goes to
# $OUT/redis-*.csv); at the end bench/summarize.py prints the comparison tables with
# PASS/MISS against the targets, also saved as $OUT/summary.md.
set -euo pipefail
cd "$(dirname "$0")/.."

RECORDS="${RECORDS:-1000000}"
OPERATIONS="${OPERATIONS:-200000}"
CONNECTIONS="${CONNECTIONS:-16}"
VALUE_SIZE="${VALUE_SIZE:-1000}"
SCALE_ROWS="${SCALE_ROWS:-1000000 10000000}"
MEMORY_BUDGET_MB="${MEMORY_BUDGET_MB:-1024}"
CACHED_BUDGET_MB="${CACHED_BUDGET_MB:-6144}"
CLIENT_SCHED="${CLIENT_SCHED:-batch}"
OUT="${OUT:-bench/results/$(date -u +%Y%m%dT%H%M%SZ)}"

sections=("$@")
[ ${#sections[@]} -eq 0 ] && sections=(ceiling redis bigtable versions filters counters transports)
[ "${sections[0]}" = all ] && sections=(ceiling redis bigtable versions filters counters transports scale)

mkdir -p "$OUT"
OUT="$(cd "$OUT" && pwd)"
work="$(mktemp -d)"
bin="$PWD/target/release/tabula"
json="$OUT/runs.jsonl"
# A reused OUT starts over: the summary takes medians over every run in this
# file, so runs of an earlier invocation would mix into this one's figures.
: >"$json"
rm -f "$OUT"/redis-*.csv "$OUT/bench.txt"
server_pid=""
server_addr=""

echo "== building tabula"
cargo build --release --bin tabula -q

stop_server() {
    if [ -n "$server_pid" ] && kill -0 "$server_pid" 2>/dev/null; then
        kill -TERM "$server_pid" 2>/dev/null || true
        wait "$server_pid" 2>/dev/null || true
    fi
    server_pid=""
}
cleanup() {
    stop_server
    if [ -n "${null_pid:-}" ]; then
        server_pid="$null_pid"
        stop_server
    fi
    if [ -n "${redis_port:-}" ]; then redis-cli -p "$redis_port" shutdown nosave >/dev/null 2>&1 || true; fi
    rm -rf "$work"
}
trap cleanup EXIT

# start_tabula NAME [serve flags...]: a fresh server on its own data directory, with
# the memory budget in $budget (default MEMORY_BUDGET_MB).
start_tabula() {
    local name="$1"
    shift
    local out="$work/$name.out"
    # Created here, not by the background job's redirect, which may not have run
    # yet when the loop below first reads it (a failed read would end the script).
    : >"$out"
    TABULA_MEMORY_BUDGET_MB="${budget:-$MEMORY_BUDGET_MB}" "$bin" serve --data-dir "$work/$name-data" \
        --listen 127.0.0.1:0 --thrift2-listen 127.0.0.1:0 "$@" >"$out" 2>"$OUT/$name.log" &
    server_pid=$!
    server_addr=""
    for _ in $(seq 1 300); do
        server_addr="$(sed -n 's/^tabula ready thrift1=\([^ ]*\).*/\1/p' "$out")"
        [ -n "$server_addr" ] && break
        kill -0 "$server_pid" 2>/dev/null || { cat "$OUT/$name.log" >&2; exit 1; }
        sleep 0.1
    done
    [ -n "$server_addr" ] || { echo "tabula ($name) did not start" >&2; exit 1; }
    echo "== tabula $name on $server_addr (pid $server_pid)"
}

# bench LABEL ARGS...: one `tabula bench` invocation against the running server,
# its JSON lines tagged with LABEL.
bench() {
    local label="$1"
    shift
    local tmp="$work/bench.jsonl"
    rm -f "$tmp"
    "$bin" bench --addr "$server_addr" --server-pid "$server_pid" --connections "$CONNECTIONS" \
        --client-sched "$CLIENT_SCHED" --value-size "$VALUE_SIZE" --json "$tmp" \
        --plot-dir "$OUT/plots/$label" --quiet "$@" \
        | tee -a "$OUT/bench.txt"
    python3 - "$label" "$tmp" >>"$json" <<'EOF'
import json, sys
label, path = sys.argv[1], sys.argv[2]
for line in open(path):
    run = json.loads(line)
    run["label"] = label
    print(json.dumps(run))
EOF
}

# settle: waits until the server is idle (under 5% of a core for four seconds in a
# row, at most SETTLE_SECS, default 3600), so that the splits a load triggers, the
# children's rewrites of the files they inherit and the compactions that follow are
# over before a timed run starts, as they would be on a server loaded ahead of time.
settle() {
    local ticks_per_sec waited=0 quiet=0 before after
    ticks_per_sec="$(getconf CLK_TCK)"
    cpu_ticks() { awk '{print $14 + $15}' "/proc/$server_pid/stat" 2>/dev/null || echo 0; }
    before="$(cpu_ticks)"
    while [ "$waited" -lt "${SETTLE_SECS:-3600}" ]; do
        sleep 1
        waited=$((waited + 1))
        after="$(cpu_ticks)"
        if [ $(( (after - before) * 20 )) -lt "$ticks_per_sec" ]; then
            quiet=$((quiet + 1))
            [ "$quiet" -ge 4 ] && break
        else
            quiet=0
        fi
        before="$after"
    done
    if [ "$quiet" -ge 4 ]; then
        echo "== server idle after ${waited}s"
    else
        echo "== WARNING: the server was still busy after ${waited}s (SETTLE_SECS); the next" \
            "timed run competes with its compactions" | tee -a "$OUT/warnings.txt"
    fi
}

load_rows() {
    # The data set every read workload uses, written once in key order, then
    # major-compacted so the timed runs do not compete with the load's compactions.
    bench "$1" --workloads seqwrite --records "$2" --durability no-wal --write-batch 100
    settle
    bench "$1-compact" --workloads compact --records "$2" ||
        echo "== the major compaction after the load failed; the timed runs see the load's files"
    settle
}

# warm_cache LABEL ROWS: one get of every row, in key order, so the block cache (sized
# by CACHED_BUDGET_MB to hold them) holds the data set before the timed runs, as
# Redis holds its keys in memory; the ceiling and Redis comparisons are about the
# cost of a point operation, not of reading 64 KiB blocks from disk.
warm_cache() {
    bench "$1" --workloads seqread --records "$2" --operations "$2" --durability no-wal
}

# The ceiling and Tabula run side by side: both servers stay up (the idle one uses
# no CPU) and the timed runs alternate between them for CEILING_ROUNDS rounds
# (default 5), Tabula settling after each of its rounds; bench/summarize.py reports
# each one's median round. The machine's speed drifts by 10-15% over minutes, which
# one run of each, minutes apart, turned into the ratio; single rounds' ratios
# still range over a fifth (0.60x-0.74x for gets in one five-round run), so the
# median needs more than three.
null_pid=""
run_ceiling() {
    start_tabula null --null-backend --null-value-size "$VALUE_SIZE"
    null_pid="$server_pid"
    local null_addr="$server_addr"
    server_pid=""
    budget="$CACHED_BUDGET_MB" start_tabula ceiling
    local tabula_pid="$server_pid" tabula_addr="$server_addr"
    load_rows ceiling-load "$RECORDS"
    warm_cache ceiling-warm "$RECORDS"
    for _ in $(seq 1 "${CEILING_ROUNDS:-5}"); do
        server_pid="$null_pid" server_addr="$null_addr"
        bench ceiling-null --workloads randread,randwrite --records "$RECORDS" \
            --operations "$OPERATIONS" --durability no-wal
        server_pid="$tabula_pid" server_addr="$tabula_addr"
        bench ceiling-tabula --workloads randread,randwrite --records "$RECORDS" \
            --operations "$OPERATIONS" --durability no-wal
        # The writes' flushes and compactions finish before the next round, so
        # that neither server's timed run shares the machine with them.
        settle
    done
    bench ceiling-tabula-sync --workloads randwrite --records "$RECORDS" --operations "$OPERATIONS" \
        --durability sync
    stop_server
    server_pid="$null_pid"
    stop_server
    null_pid=""
}

redis_port=""
start_redis() {
    local name="$1"
    shift
    redis_port="$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')"
    mkdir -p "$work/redis-$name"
    redis-server --port "$redis_port" --bind 127.0.0.1 --dir "$work/redis-$name" --daemonize yes \
        --logfile "$OUT/redis-$name.log" "$@"
    for _ in $(seq 1 100); do
        redis-cli -p "$redis_port" ping >/dev/null 2>&1 && break
        sleep 0.1
    done
    echo "== redis $name on port $redis_port"
}

stop_redis() {
    redis-cli -p "$redis_port" shutdown nosave >/dev/null 2>&1 || true
    redis_port=""
}

redis_benchmark() {
    local policy=()
    [ "$CLIENT_SCHED" = batch ] && policy=(chrt --batch 0)
    "${policy[@]}" redis-benchmark -p "$redis_port" -t set,get -n "$OPERATIONS" -c "$CONNECTIONS" -d "$VALUE_SIZE" \
        -r "$RECORDS" --csv >"$OUT/redis-$1.csv"
    cat "$OUT/redis-$1.csv"
}

run_redis() {
    command -v redis-server >/dev/null && command -v redis-benchmark >/dev/null || {
        echo "redis-server and redis-benchmark are needed (apt-get install redis-server)" >&2
        exit 1
    }
    start_redis always --appendonly yes --appendfsync always --save ""
    redis_benchmark always
    stop_redis
    start_redis default
    redis_benchmark default
    stop_redis
    budget="$CACHED_BUDGET_MB" start_tabula redis
    load_rows redis-load "$RECORDS"
    warm_cache redis-warm "$RECORDS"
    # Gets first, on the loaded and cached data set (as the ceiling section does):
    # after 400,000 writes the reads would also measure the flushes and compactions
    # those writes start, and blocks those compactions rewrite are not cached yet.
    bench redis-tabula-nowal --workloads randread --records "$RECORDS" \
        --operations "$OPERATIONS" --durability no-wal
    bench redis-tabula-sync --workloads randwrite --records "$RECORDS" --operations "$OPERATIONS" \
        --durability sync
    bench redis-tabula-nowal --workloads randwrite --records "$RECORDS" \
        --operations "$OPERATIONS" --durability no-wal
    stop_server
}

run_bigtable() {
    start_tabula bigtable
    # The paper's six, with a major compaction between the writes and the reads.
    # Each sequential write is a load of RECORDS rows: the server settles after it.
    bench bigtable --workloads seqwrite --records "$RECORDS" --durability sync
    settle
    bench bigtable --workloads randwrite --records "$RECORDS" --operations "$OPERATIONS" \
        --durability sync
    settle
    # The same writes through a client-side write buffer (100-row mutateRows, the
    # commit log still synced before each call is answered), as HBase's
    # PerformanceEvaluation writes by default; as many rows as the runs above.
    bench bigtable-buffered --workloads seqwrite --records "$RECORDS" --write-batch 100 \
        --durability sync
    settle
    bench bigtable-buffered --workloads randwrite --records "$RECORDS" \
        --operations "$((OPERATIONS / 100))" --write-batch 100 --durability sync
    settle
    bench bigtable-compact --workloads compact --records "$RECORDS" ||
        echo "== the major compaction after the writes failed; the reads see the written files"
    settle
    bench bigtable --workloads seqread,randread,randread-mem,scan --records "$RECORDS" \
        --operations "$OPERATIONS" --durability sync
    # The random reads again as multi-gets (100-row getRowsWithColumns, as HBase's
    # PerformanceEvaluation reads with --multiGet=100); as many rows as above.
    bench bigtable-buffered --workloads randread,randread-mem --records "$RECORDS" \
        --operations "$((OPERATIONS / 100))" --read-batch 100
    stop_server
    # The one-row writes again against a server that answers a synced write once
    # the log's group commit is written to the OS, fsyncing it within a second
    # (log_fsync = false: HBase's default, hflush rather than hsync).
    TABULA_LOG_FSYNC=false start_tabula bigtable-hflush
    bench bigtable-hflush --workloads seqwrite --records "$RECORDS" --durability sync
    settle
    bench bigtable-hflush --workloads randwrite --records "$RECORDS" --operations "$OPERATIONS" \
        --durability sync
    stop_server
}

# Hot counters: Thrift1 increment calls on zipfian rows of RECORDS, one column,
# against a server applying each call before it answers and against one coalescing
# them (coalesce_increments: a call answers once queued; a background round applies
# each cell's sum). After the coalesced run the section waits for the queue to empty
# (the gateway's pending-cells gauge) and records how long that took.
run_counters() {
    start_tabula counters-direct
    bench counters-direct --workloads counters --records "$RECORDS" --operations "$OPERATIONS"
    stop_server
    TABULA_COALESCE_INCREMENTS=true start_tabula counters-coalesced
    bench counters-coalesced --workloads counters --records "$RECORDS" --operations "$OPERATIONS"
    local metrics
    metrics="$(sed -n 's/.* metrics=\([^ ]*\).*/\1/p' "$work/counters-coalesced.out")"
    python3 - "$metrics" >"$OUT/counters-drain.txt" <<'EOF2'
import sys, time, urllib.request
url = "http://%s/metrics" % sys.argv[1]
started = time.monotonic()
while True:
    text = urllib.request.urlopen(url, timeout=10).read().decode()
    pending = [l.split()[-1] for l in text.splitlines()
               if l.startswith("tabula_thrift1_increments_pending_cells")]
    if pending and float(pending[0]) == 0:
        break
    if time.monotonic() - started > 600:
        break
    time.sleep(0.05)
print("%.2f" % (time.monotonic() - started))
EOF2
    echo "== coalesced increments applied $(cat "$OUT/counters-drain.txt") s after the last call"
    stop_server
}

# Point gets and unsynced one-row puts of RECORDS cached rows over each transport a
# client may pick, against one server: buffered and framed binary, framed compact,
# HBase's HTTP mode (a POST per call, kept alive); then HTTPS against a second
# server with TLS on (a self-signed certificate the load generator trusts; a TLS
# port takes HTTPS only). No target: what each transport costs beside the buffered
# binary line the other sections use.
run_transports() {
    budget="$CACHED_BUDGET_MB" start_tabula transports
    bench transports-load --workloads seqwrite --records "$RECORDS" --durability no-wal
    settle
    # One pass of reads first, so every transport's run finds the rows cached.
    bench transports-warm-up --workloads randread --records "$RECORDS" --operations "$OPERATIONS"
    local transport
    for transport in buffered framed http; do
        bench "transports-$transport" --workloads randread,randwrite --records "$RECORDS" \
            --operations "$OPERATIONS" --durability no-wal --transport "$transport"
        # The puts' flushes and compactions end before the next transport's reads.
        settle
    done
    bench transports-framed-compact --workloads randread,randwrite --records "$RECORDS" \
        --operations "$OPERATIONS" --durability no-wal --transport framed --protocol compact
    stop_server
    local tls="$work/tls"
    mkdir -p "$tls"
    openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 \
        -subj /CN=localhost -addext "subjectAltName=DNS:localhost,IP:127.0.0.1" \
        -addext "basicConstraints=critical,CA:FALSE" -addext "extendedKeyUsage=serverAuth" \
        -keyout "$tls/key.pem" -out "$tls/cert.pem" 2>/dev/null
    TABULA_TLS_CERT_FILE="$tls/cert.pem" TABULA_TLS_KEY_FILE="$tls/key.pem" \
        budget="$CACHED_BUDGET_MB" start_tabula transports-tls
    local https=(--transport https --tls-ca-file "$tls/cert.pem")
    bench transports-tls-load --workloads seqwrite --records "$RECORDS" --durability no-wal "${https[@]}"
    settle
    bench transports-tls-warm-up --workloads randread --records "$RECORDS" \
        --operations "$OPERATIONS" "${https[@]}"
    bench transports-https --workloads randread,randwrite --records "$RECORDS" \
        --operations "$OPERATIONS" --durability no-wal "${https[@]}"
    stop_server
}

run_versions() {
    start_tabula versions
    bench versions --workloads versions --versions 100000 --operations "$OPERATIONS" --durability no-wal
    stop_server
}

# Whole-table scans (one connection, each scan from the first row) whose filter keeps
# a few rows: four 20-row ranges (MultiRowRangeFilter), the rows whose key has zeros
# around three free digits (FuzzyRowFilter), the 10,000 rows of one prefix
# (PrefixFilter). Each runs twice: as given, where the filter's skip hints send the
# scan straight to the rows it keeps, and behind a WHILE that passes every row, which
# makes the filter see every row key (the scan then reads the whole table), so the
# pair shows what the hints save.
run_filters() {
    start_tabula filters
    load_rows filters-load "$RECORDS"
    local row ranges="" fuzzy prefix every_row
    row() { printf "row%010d" "$1"; }
    for at in $((RECORDS / 100)) $((RECORDS * 3 / 10)) $((RECORDS * 6 / 10)) $((RECORDS * 96 / 100)); do
        ranges="$ranges${ranges:+, }'$(row "$at")', true, '$(row $((at + 20)))', false"
    done
    fuzzy="FuzzyRowFilter('row0000000000', '0000001110000')"
    prefix="PrefixFilter('$(row $((RECORDS * 4 / 10)) | cut -c1-9)')"
    every_row=" AND (WHILE RowFilter(>=, 'binary:row'))"
    local scan_rows=$((RECORDS * 2)) kind filter
    for kind in ranges fuzzy prefix; do
        case "$kind" in
            ranges) filter="MultiRowRangeFilter($ranges)" ;;
            fuzzy) filter="$fuzzy" ;;
            prefix) filter="$prefix" ;;
        esac
        CONNECTIONS=1 bench "filters-$kind" --workloads scan --records "$RECORDS" \
            --scan-rows "$scan_rows" --operations "$((scan_rows * 20))" --scan-filter "$filter"
        CONNECTIONS=1 bench "filters-$kind-every-row" --workloads scan --records "$RECORDS" \
            --scan-rows "$scan_rows" --operations "$((scan_rows * 5))" \
            --scan-filter "$filter$every_row"
    done
    stop_server
}

run_scale() {
    for rows in $SCALE_ROWS; do
        start_tabula "scale-$rows"
        load_rows "scale-load-$rows" "$rows"
        bench "scale-$rows" --workloads randread,randwrite --records "$rows" --operations "$OPERATIONS" \
            --durability no-wal
        stop_server
    done
}

{
    echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
    echo "machine: $(nproc) cores, $(awk '/MemTotal/ {printf "%.1f GiB", $2/1048576}' /proc/meminfo), $(uname -sr)"
    echo "tabula: $(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
    echo "redis: $(redis-server --version 2>/dev/null | head -1 || echo absent)"
    echo "settings: RECORDS=$RECORDS OPERATIONS=$OPERATIONS CONNECTIONS=$CONNECTIONS VALUE_SIZE=$VALUE_SIZE MEMORY_BUDGET_MB=$MEMORY_BUDGET_MB CACHED_BUDGET_MB=$CACHED_BUDGET_MB SCALE_ROWS=\"$SCALE_ROWS\""
    echo "command: bench/compare.sh ${sections[*]}"
} >"$OUT/machine.txt"
cat "$OUT/machine.txt"

for section in "${sections[@]}"; do
    case "$section" in
        ceiling) run_ceiling ;;
        redis) run_redis ;;
        bigtable) run_bigtable ;;
        versions) run_versions ;;
        counters) run_counters ;;
        filters) run_filters ;;
        transports) run_transports ;;
        scale) run_scale ;;
        *) echo "unknown section $section" >&2; exit 2 ;;
    esac
done

python3 bench/summarize.py "$OUT" | tee "$OUT/summary.md"
