#!/usr/bin/env python3
"""Checks that the library's top-level modules only use modules below them.

Every `crate::<module>` reference in src/ (outside comments and `#[cfg(test)]`
modules) is an edge from the file's top-level module to `<module>`. The
allowed order is LAYERS below, lowest first: a module may use its own layer
and any layer below it, never one above. Exit status 1 lists each edge that
climbs, with file and line.

Run: python3 tools/layering.py
"""
import pathlib
import re
import sys

# Lowest first. Modules on one line form one layer and may use each other.
LAYERS = [
    ["prelude"],
    ["wire"],
    ["hash", "math"],
    ["coder"],
    ["filter"],
    ["kinds", "counting", "squid"],
    ["format"],
    ["delta"],
    ["kind"],
    ["plan"],
    ["sync"],
    ["serde_impl", "tokio_codec"],
    ["nats"],
]
RANK = {m: i for i, layer in enumerate(LAYERS) for m in layer}
# Items re-exported at the crate root name no module (crate::BloomFilter):
# they are resolved to the module that defines them.
ROOT_ITEMS = {
    "BloomFilter": "filter", "FilterParams": "filter", "FilterError": "filter",
    "MAX_K": "filter", "MAX_M": "filter", "CountingBloomFilter": "kinds",
    "HashScheme": "hash", "KeyHash": "hash",
    "AnyFilter": "format", "DecodeError": "format", "DecodeLimits": "format",
    "EncodeError": "format", "FilterKind": "format", "FilterType": "format",
    "FrameHeader": "format", "UpdateId": "format",
    "Publisher": "sync", "Subscriber": "sync", "SyncError": "sync",
}
REF = re.compile(r"\bcrate::(\w+)")


def top_module(path: pathlib.Path, src: pathlib.Path) -> str:
    rel = path.relative_to(src)
    return rel.parts[0].removesuffix(".rs")


def code_lines(text: str):
    """(line number, code) outside comments and #[cfg(test)] modules."""
    skip_depth = None
    depth = 0
    pending_test = False
    for no, line in enumerate(text.splitlines(), 1):
        code = line.split("//", 1)[0]
        stripped = code.strip()
        if skip_depth is None and stripped.startswith("#[cfg(test)]"):
            pending_test = True
            continue
        if pending_test and skip_depth is None:
            if re.match(r"(pub(\(crate\))? )?mod \w+\s*\{", stripped):
                skip_depth = depth
            pending_test = False
        opened = code.count("{") - code.count("}")
        if skip_depth is None:
            yield no, code
        depth += opened
        if skip_depth is not None and depth <= skip_depth:
            skip_depth = None


def main() -> int:
    root = pathlib.Path(__file__).resolve().parent.parent
    src = root / "src"
    bad = []
    for path in sorted(src.rglob("*.rs")):
        rel = path.relative_to(src)
        if rel.parts[0] in ("bin", "lib.rs"):
            continue
        here = top_module(path, src)
        if here not in RANK:
            bad.append(f"{rel}: module '{here}' has no layer in tools/layering.py")
            continue
        for no, code in code_lines(path.read_text()):
            for target in REF.findall(code):
                target = ROOT_ITEMS.get(target, target)
                if target not in RANK:
                    continue
                if RANK[target] > RANK[here]:
                    bad.append(f"src/{rel}:{no}: {here} uses {target}, a layer above it")
    for line in bad:
        print(line)
    if bad:
        print(f"{len(bad)} edges climb the layering (tools/layering.py lists the layers)")
        return 1
    print("layering: every crate:: edge points down")
    return 0


if __name__ == "__main__":
    sys.exit(main())
