#!/usr/bin/env bash
# replica.sh measures one `quarry serve` replica over an existing knowledge
# base: how long after it starts its first search is answered, hybrid search
# latency over HTTP (SciFact's first 200 training claims, k=10), its RSS after
# those searches, and how long after another process starts adding a
# document the replica finds it.
#
#   QUARRY_DATABASE_URL=postgres://… bench/replica.sh ./quarry big database
#   QUARRY_DATABASE_URL=postgres://… bench/replica.sh ./quarry big memory
#
# Arguments: the quarry binary, the knowledge base, --search (database,
# memory or auto); PORT (default 18080) and QUERIES (default
# ../shared/data/scifact/queries_train.jsonl) from the environment.
set -euo pipefail
bin=$1 kb=$2 mode=$3
port=${PORT:-18080}
queries=${QUERIES:-../shared/data/scifact/queries_train.jsonl}
now() { date +%s.%N; }
t0=$(now)
QUARRY_SEARCH=$mode "$bin" serve --addr "127.0.0.1:$port" --workers 0 >/dev/null 2>&1 &
pid=$!
trap 'kill $pid 2>/dev/null || true' EXIT
until curl -sf "localhost:$port/healthz" >/dev/null; do sleep 0.01; done
curl -sf "localhost:$port/v1/knowledge-bases/$kb/search?q=first+search&k=10" >/dev/null
echo "first search answered $(echo "$(now) - $t0" | bc) s after start"
# One request at a time, paced under the server's per-address rate limit.
head -n 200 "$queries" | sed -e 's/.*"text": *"\([^"]*\)".*/\1/' | while read -r q; do
	sleep 0.12
	curl -sf -o /dev/null -w '%{time_total}\n' -G "localhost:$port/v1/knowledge-bases/$kb/search" --data-urlencode "q=$q" --data-urlencode k=10
done | sort -n | awk '{d[NR]=$1*1000} END {printf "hybrid over HTTP p50 %.1f ms, p99 %.1f ms (%d searches)\n", d[int(NR/2)+1], d[int(NR*0.99)], NR}'
echo "RSS after the searches: $(($(ps -o rss= -p $pid) / 1024)) MB"
word=late$RANDOM$RANDOM
doc=$(mktemp --suffix=.md)
printf '# Late\n\nThe %s arrived after everything else was written.\n' "$word" >"$doc"
t1=$(now)
"$bin" kb add "$kb" "$doc" >/dev/null
until curl -sf "localhost:$port/v1/knowledge-bases/$kb/search?q=$word&k=1&mode=bm25" | grep -q "$word"; do sleep 0.005; done
echo "a document another process adds found $(echo "$(now) - $t1" | bc) s after that process started"
rm -f "$doc"
