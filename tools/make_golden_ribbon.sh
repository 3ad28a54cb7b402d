#!/usr/bin/env bash
# Ribbon-kind golden vectors (docs/FORMAT.md section 8.5): frames built by
# the crate's CLI from the keys key-1..key-N, queried by tools/ref_ribbon.py
# (written from FORMAT.md alone) for the members and as many non-members
# (other-1..other-N, at least 100), into NAME.answers ("1" present, "0" absent, one per
# line of NAME.queries); the reference also checks that every member is
# present (pip install xxhash). Golden vectors are a contract: rerun only
# with a format change, and commit the result.
set -euo pipefail
cd "$(dirname "$0")/.."
out=tests/vectors
list="$out/golden_ribbon.txt"
echo "# name fpr seed n build (keys key-1..key-N built the default (compact) or --fast way; NAME.queries = the N keys, then other-1..other-max(N,100); NAME.answers = the reference's answers)" > "$list"
make() { # name fpr seed n [fast]
  local name=$1 fpr=$2 seed=$3 n=$4 how=${5:-compact}
  local others=$(( n > 100 ? n : 100 ))
  local flag=()
  [ "$how" = fast ] && flag=(--fast)
  { seq 1 "$n" | sed 's/^/key-/'; seq 1 "$others" | sed 's/^/other-/'; } > "$out/$name.queries"
  seq 1 "$n" | sed 's/^/key-/' | cargo run --quiet --bin cbloom -- build --type ribbon \
    --keys - --fpr "$fpr" --seed "$seed" "${flag[@]}" -o "$out/$name.cbf"
  python3 tools/ref_ribbon.py query "$out/$name.cbf" "$out/$name.queries" "$out/$name.answers" "$n"
  echo "$name $fpr $seed $n $how" >> "$list"
}
make ribbon_empty 0.01       0 0
make ribbon_one   0.25       1 1
make ribbon_small 0.0625     2 100
make ribbon_frac  0.01       3 3000
make ribbon_shards 0.03      4 12000
make ribbon_fast  0.25       5 17000 fast
# FORMAT.md section 8.5, "Construction": rules that decide bytes.
# f = 3/8 lies halfway between the rates of U = 0 and U = 1 of one
# 128-row shard: the tie goes to U = 1.
make ribbon_tie   0.375      6 10
# The one shard (992 keys, 1000 rows planned) fails twice: its rows grow
# by a thousandth of the current count (1000, 1001, 1003; not 1002), seed
# 2; and U is chosen from the final 1003 rows (U = 1; from 1000 rows it
# would be 2).
make ribbon_retry 0.01515    10 992
echo "ribbon goldens written and cross-checked"
