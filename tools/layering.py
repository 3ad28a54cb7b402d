#!/usr/bin/env python3
"""Checks that the library's top-level modules only use modules below them.

Every `crate::<module>` reference in src/ (outside comments; unit-test
modules included, since a test that reaches up a layer belongs in tests/),
and every name in a grouped `crate::{a, b::c}` import, is an edge from the
file's top-level module to `<module>`. A kind's folder spans two layers:
`src/kinds/<kind>/kind.rs` (its frames, deltas and `Kind`
implementation, which use `format` and `delta`) is in the `kind` layer,
and so is every name the folder's `mod.rs` re-exports from it; the rest
of the folder (the type and its payload codec) is in `kinds`, below the
frame layer. A name re-exported at the crate
root (`crate::BloomFilter`) is resolved, through src/lib.rs's `pub use`
lines, to the module that defines it. The
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
    ["kinds"],
    ["format"],
    ["delta"],
    ["kind", "bitcoin"],
    ["plan"],
    ["sync"],
    ["serde_impl", "tokio_codec"],
    ["nats"],
]
RANK = {m: i for i, layer in enumerate(LAYERS) for m in layer}
REF = re.compile(r"\bcrate::(\w+)")
GROUP = re.compile(r"\bcrate::\{([^}]*)\}", re.S)
PUB_USE = re.compile(r"^pub use (\w+)::(?:\{([^}]*)\}|(\w+));", re.M | re.S)


def root_items(lib: str) -> dict:
    """Names src/lib.rs re-exports, each mapped to its top-level module."""
    items = {}
    for m in PUB_USE.finditer(lib):
        module, group, single = m.group(1), m.group(2), m.group(3)
        for name in (group.split(",") if group else [single]):
            name = name.strip().split("::")[-1].split(" as ")[-1].strip()
            if name:
                items[name] = module
    return items


def targets(code: str, grouped: list) -> list:
    """The top-level names a line of code reaches through `crate::`."""
    found = [t for t in REF.findall(code)]
    found += grouped
    return found


KIND_FILE = "kind.rs"
KINDS_PATH = re.compile(r"\bcrate::kinds::(\w+)::(\w+)")
REEXPORT_KIND = re.compile(r"pub use kind::\{([^}]*)\};|pub use kind::(\w+);", re.S)


def top_module(path: pathlib.Path, src: pathlib.Path) -> str:
    rel = path.relative_to(src)
    if len(rel.parts) == 3 and rel.parts[0] == "kinds" and rel.parts[2] == KIND_FILE:
        return "kind"
    return rel.parts[0].removesuffix(".rs")


def upper_names(src: pathlib.Path) -> set:
    """(kind, name) for each name a kind's mod.rs re-exports from its
    kind.rs: reached as `crate::kinds::<kind>::<name>`, it is in `kind`."""
    names = set()
    for mod in (src / "kinds").glob("*/mod.rs"):
        for m in REEXPORT_KIND.finditer(mod.read_text()):
            for name in (m.group(1) or m.group(2)).split(","):
                if name.strip():
                    names.add((mod.parent.name, name.strip()))
    return names


def code_lines(text: str):
    """(line number, code, grouped names) outside comments; a grouped
    `crate::{...}` import spanning lines is reported at its first line."""
    lines = [line.split("//", 1)[0] for line in text.splitlines()]
    code = "\n".join(lines)
    grouped = {}
    for m in GROUP.finditer(code):
        no = code.count("\n", 0, m.start()) + 1
        names = [n.strip().split("::")[0] for n in m.group(1).split(",")]
        grouped.setdefault(no, []).extend(n for n in names if n and n != "self")
    for no, line in enumerate(lines, 1):
        yield no, line, grouped.get(no, [])


def main() -> int:
    root = pathlib.Path(__file__).resolve().parent.parent
    src = root / "src"
    bad = []
    root_names = root_items((src / "lib.rs").read_text())
    upper = upper_names(src)
    for path in sorted(src.rglob("*.rs")):
        rel = path.relative_to(src)
        if rel.parts[0] in ("bin", "lib.rs"):
            continue
        here = top_module(path, src)
        if here not in RANK:
            bad.append(f"{rel}: module '{here}' has no layer in tools/layering.py")
            continue
        for no, code, grouped in code_lines(path.read_text()):
            found = targets(code, grouped)
            found += ["kind" for m in KINDS_PATH.finditer(code) if m.groups() in upper]
            for target in found:
                target = root_names.get(target, target)
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
