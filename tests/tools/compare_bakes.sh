#!/usr/bin/env bash
# Bakes every shared level and bundled sample with two `baker` binaries,
# under both mesh-tree kinds, and compares the archives byte for byte (the
# body, when the two bakers' versions differ): the check that a change
# "changes no archive byte".
#
#   git worktree add --detach /tmp/before <commit>
#   (cd /tmp/before && cargo build --release --bin baker)   # -p kiln-baker before 0.2
#   cargo build --release -p baker --bin baker
#   tests/tools/compare_bakes.sh /tmp/before/target/release/baker target/release/baker
#
# Levels come from $KILN_LEVELS (default: ../shared/levels beside the repo).
set -uo pipefail
old=$1 new=$2
root="$(cd "$(dirname "$0")/../.." && pwd)"
levels=${KILN_LEVELS:-$root/../shared/levels}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
same=0 differ=0 header_only=0
for f in "$levels"/*.gltf "$levels"/*.glb "$root"/samples/*.gltf "$root"/samples/*.glb; do
  [ -e "$f" ] || continue
  name=$(basename "$f")
  for tree in aabb sphere; do
    tag="$name ($tree)"
    "$old" bake "$f" -o "$out/old.kiln" --force --mesh-tree $tree >/dev/null 2>&1
    a=$?
    "$new" bake "$f" -o "$out/new.kiln" --force --mesh-tree $tree >/dev/null 2>&1
    b=$?
    if [ $a != $b ]; then
      echo "exit status differs: $tag: $a, $b"
      differ=$((differ + 1))
    elif [ $a != 0 ]; then
      echo "both refuse $tag (exit $a)"
    elif cmp -s "$out/old.kiln" "$out/new.kiln"; then
      same=$((same + 1))
    elif cmp -s <(tail -c +65 "$out/old.kiln") <(tail -c +65 "$out/new.kiln"); then
      # the 64-byte header names the baker's version; the body is the same
      same=$((same + 1))
      header_only=$((header_only + 1))
    else
      echo "bytes differ: $tag"
      differ=$((differ + 1))
    fi
  done
done
echo "$same archives identical ($header_only of them in the body only: the header names the baker version), $differ different"
[ $differ = 0 ]
