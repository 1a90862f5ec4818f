#!/usr/bin/env bash
# Full builds of one shop by two checkouts of ask-engine, alternating, one thread, fresh output folders.
#   bench/compare_builds.sh OLD_CHECKOUT NEW_CHECKOUT [SHOP_DIR] [ROUNDS] [PYTHON_BIN_DIR]
# e.g. git archive 83dd29e | tar -x -C /tmp/old && bench/compare_builds.sh /tmp/old . eval/shops/fjord-fell 2
# Prints each build's own report line ("... in all") and the load average around it; compare best against best.
set -euo pipefail
old=$(realpath "$1"); new=$(realpath "$2"); shop=$(realpath "${3:-eval/shops/fjord-fell}")
rounds=${4:-2}; bin=${5:-$(dirname "$(command -v ask-engine)")}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
echo "start: load $(cut -d' ' -f1-3 /proc/loadavg), $(date -u +%H:%M:%S) UTC"
for round in $(seq 1 "$rounds"); do
  for which in old new; do
    src=$old; [ "$which" = new ] && src=$new
    before=$(cut -d' ' -f1 /proc/loadavg)
    line=$(cd "$src" && PYTHONPATH="$src" HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 ASK_ENGINE_EMBEDDING_THREADS=1 \
      OMP_NUM_THREADS=1 MKL_NUM_THREADS=1 "$bin/ask-engine" index "$shop" --out "$work/$which-$round" --quiet \
      | tail -n 2 | tr '\n' ' ')
    echo "round $round $which: $line(load $before → $(cut -d' ' -f1 /proc/loadavg))"
  done
done
echo "end: load $(cut -d' ' -f1-3 /proc/loadavg), $(date -u +%H:%M:%S) UTC"
