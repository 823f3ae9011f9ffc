#!/usr/bin/env bash
# Flamegraphs of the operations where the engine is behind a peer in the stores benchmark
# (docs/stores.md, "Flamegraphs"), on the benchmark's data:
#
#   docs/img/flame-peak-heap.svg  memory: the heap at its peak during the benchmark's engine run
#   docs/img/flame-reopen.svg     CPU: reopen, first vector and text search, close (reopen_probe)
#   docs/img/flame-delete.svg     CPU: durable deletes by filter, one source each (delete_probe)
#   docs/img/flame-mem0-19k.svg   CPU: Mem0 memorizing 19 160 DialSim turns (the cost_growth
#                                 bench, whose per-turn cost grows more than the issue allows)
#
# The engine run leaves its store behind (with the vector file its last close wrote); the
# reopens and deletes run on copies of it. Needs `perf`, `heaptrack` (Debian), inferno
# (`cargo install inferno`, crates.io) and the data of `benches/stores/prepare.py`.
# Usage: benches/stores/flamegraphs.sh [N]   (N: the benchmark's size, default 100000). Above
# the real data set's 100 000 records the data is the stand-in of `stand_in.py` (run.py
# --million makes it), the three size-dependent images are named for the size
# (flame-delete-1m.svg) and Mem0's is not drawn again.
set -euo pipefail

root="$(cd "$(dirname "$0")/../.." && pwd)"
n="${1:-100000}"
data="$root/target/stores/data"
tag=""
if (( n > 100000 )); then
    data="$root/target/stores/data-stand-in"
    if (( n % 1000000 == 0 )); then tag="-$((n / 1000000))m"; else tag="-$((n / 1000))k"; fi
fi
work="$root/target/stores/flame"
store="$work/heap-store"
img="$root/docs/img"

for tool in perf heaptrack heaptrack_print inferno-collapse-perf inferno-flamegraph; do
    command -v "$tool" >/dev/null || { echo "flamegraphs.sh: $tool is not installed" >&2; exit 1; }
done
[ -d "$data" ] || { echo "flamegraphs.sh: no data at $data: run benches/stores/run.py (prepare.py, stand_in.py) first" >&2; exit 1; }

cd "$root"
cargo build --release -p mb-stores-bench --bin reopen_probe --bin delete_probe
cargo build --release -p mb-stores-bench --bin stores_engine
rm -rf "$work" && mkdir -p "$work"

# perf with DWARF call graphs (release builds keep no frame pointers), folded by inferno; only
# the stacks matching `keep` (an extended regular expression) are drawn.
flame() { # name keep title command...
    local name="$1" keep="$2" title="$3"
    shift 3
    perf record -F 4000 --call-graph dwarf,32768 -o "$work/$name.perf" -- "$@" >"$work/$name.out"
    perf script -i "$work/$name.perf" 2>/dev/null | inferno-collapse-perf >"$work/$name.folded"
    grep -E "$keep" "$work/$name.folded" |
        inferno-flamegraph --minwidth 0.5 --title "$title" >"$img/flame-$name$tag.svg"
    cat "$work/$name.out"
}

# Peak heap: the benchmark's whole engine run under heaptrack, its heap at the peak by stack.
heaptrack -o "$work/heap" target/release/stores_engine "$data" "$n" "$work/heap-store" \
    >"$work/heap.out"
heaptrack_print -f "$work/heap.zst" --flamegraph-cost-type peak -F "$work/heap.folded" \
    >"$work/heap.txt"
inferno-flamegraph --minwidth 0.5 --colors mem --countname bytes \
    --title "heap at its peak, stores benchmark engine run, ${n} records (heaptrack)" \
    <"$work/heap.folded" >"$img/flame-peak-heap$tag.svg"
grep -E "peak heap memory|peak RSS" "$work/heap.txt"

# Reopen: ten runs of three reopens each, on a copy of that store.
cp -r "$store" "$work/reopen-store"
flame reopen "^reopen_probe|^mb-|^rocksdb" \
    "reopen + first vector and text search + close, ${n} records (reopen_probe, 30 rounds)" \
    bash -c "for i in 1 2 3 4 5 6 7 8 9 10; do target/release/reopen_probe '$work/reopen-store'; done"

# Delete by filter: the benchmark's delete (every record of one source), one source after
# another on a copy of the store (whose `locomo3`, `locomo2` and `locomo4` the benchmark
# deleted: stores_engine.rs, DELETE_SOURCES); drawn are the
# deletes and their helper threads, not the probe's open and warm-up.
cp -r "$store" "$work/delete-store"
flame delete "delete_where|^mb-filter-read|^mb-term-count" \
    "durable delete by filter, one source at a time, ${n} records (delete_probe)" \
    target/release/delete_probe "$work/delete-store" source \
    locomo0 locomo1 locomo5 locomo6 locomo7

[ -z "$tag" ] || { echo "wrote $img/flame-peak-heap$tag.svg, $img/flame-reopen$tag.svg, $img/flame-delete$tag.svg"; exit 0; }

# Mem0's memorization of the whole of The Office (needs ../shared/data/dialsim).
cargo bench --bench cost_growth --no-run
bench="$(ls -t target/release/deps/cost_growth-* | grep -v '\.d$' | head -1)"
MB_BENCH_SYSTEMS=mem0 MB_BENCH_TURNS=19160 flame mem0-19k "." \
    "Mem0 memorizing 19 160 DialSim turns (cost_growth, MB_BENCH_SYSTEMS=mem0 MB_BENCH_TURNS=19160)" \
    "$bench" --bench

echo "wrote $img/flame-peak-heap.svg, $img/flame-reopen.svg, $img/flame-delete.svg, $img/flame-mem0-19k.svg"
