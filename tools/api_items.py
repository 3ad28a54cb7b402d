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


KINDS = ("function", "constant", "static", "struct", "enum", "trait", "type_alias", "macro")


def main() -> int:
    path = sys.argv[1] if len(sys.argv) > 1 else "target/doc/compressed_bloom.json"
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
    return 0


if __name__ == "__main__":
    sys.exit(main())
