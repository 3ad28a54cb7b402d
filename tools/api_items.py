#!/usr/bin/env python3
"""Counts the crate's public items from rustdoc's JSON: free functions,
constants, statics, structs, enums, traits, type aliases and modules
(methods, fields and variants aside), as a user browsing the docs meets them.

The public surface is counted with every feature but `cli` (which adds no
library item) and `internals` (the crate's own unstable modules, for its
CLI, tests, benches, fuzz targets and tools), hidden items included: a
`#[doc(hidden)]` item that is `pub` and reachable is still API.

Run: RUSTC_BOOTSTRAP=1 cargo rustdoc --lib --no-default-features \
       --features std,simd,serde,tokio,nats -- \
       -Z unstable-options --output-format json --document-hidden-items
     python3 tools/api_items.py target/doc/compressed_bloom.json [--max N]

With --max N it exits 1 when the total is over N.
"""
import collections
import json
import sys


KINDS = ("function", "constant", "static", "struct", "enum", "trait", "type_alias", "macro")


def main() -> int:
    args = sys.argv[1:]
    limit = None
    if "--max" in args:
        at = args.index("--max")
        limit = int(args[at + 1])
        del args[at : at + 2]
    path = args[0] if args else "target/doc/compressed_bloom.json"
    doc = json.load(open(path))
    index = doc["index"]
    root = doc["root"]
    counts = collections.Counter()
    seen = set()
    names = {}

    def visit(item_id, path):
        if item_id in seen:
            return
        seen.add(item_id)
        item = index.get(str(item_id)) or index.get(item_id)
        if item is None:
            # A public re-export of an item from a hidden module: rustdoc
            # inlines it where it is re-exported and leaves it out of the
            # index, so its kind is told from its name.
            name = names.get(item_id, "")
            if name.isupper():
                counts["constant"] += 1
            elif name[:1].isupper():
                counts["type (re-exported)"] += 1
            elif name:
                counts["function"] += 1
            return
        if item.get("crate_id", 0) != 0:
            return
        inner = item["inner"]
        kind = next(iter(inner))
        if kind == "module":
            if item_id != root:
                counts["module"] += 1
            for child in inner["module"]["items"]:
                visit(child, path + [item.get("name") or ""])
        elif kind == "use":
            target = inner["use"].get("id")
            names.setdefault(target, inner["use"]["name"])
            if target is not None:
                visit(target, path)
        elif kind in KINDS:
            counts[kind] += 1

    visit(root, [])
    total = sum(v for k, v in counts.items() if k != "module")
    for k, v in sorted(counts.items()):
        print(f"{k:12} {v}")
    print(f"{'total':12} {total} (modules aside)")
    if limit is not None and total > limit:
        print(f"the public surface is {total} items, over the limit of {limit}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
