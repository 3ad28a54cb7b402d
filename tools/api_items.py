#!/usr/bin/env python3
"""Counts the crate's public items from rustdoc's JSON: free functions,
constants, statics, structs, enums, traits, type aliases and modules
(methods, fields and variants aside), as a user browsing the docs meets them.

Run: RUSTC_BOOTSTRAP=1 cargo rustdoc --lib --all-features -- \
       -Z unstable-options --output-format json
     python3 tools/api_items.py target/doc/compressed_bloom.json
"""
import collections
import json
import sys


def main() -> int:
    path = sys.argv[1] if len(sys.argv) > 1 else "target/doc/compressed_bloom.json"
    doc = json.load(open(path))
    index = doc["index"]
    root = doc["root"]
    counts = collections.Counter()
    seen = set()

    def visit(item_id, path):
        if item_id in seen:
            return
        seen.add(item_id)
        item = index.get(str(item_id)) or index.get(item_id)
        if item is None or item.get("crate_id", 0) != 0:
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
            if target is not None:
                visit(target, path)
        elif kind in ("function", "constant", "static", "struct", "enum", "trait", "type_alias", "macro"):
            counts[kind] += 1

    visit(root, [])
    total = sum(v for k, v in counts.items() if k != "module")
    for k, v in sorted(counts.items()):
        print(f"{k:12} {v}")
    print(f"{'total':12} {total} (modules aside)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
