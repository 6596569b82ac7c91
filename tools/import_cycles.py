#!/usr/bin/env python3
"""Reports import circles between the module files of one Rust crate.

Usage: tools/import_cycles.py CRATE_DIR [CRATE_DIR ...]   (e.g. crates/ops crates/jit)

A file depends on another when it names it: a `use` of `crate::a::b::..`, `super::..` or
`self::..` (use trees are expanded), or a path written in code (`crate::a::b::f(..)`). A path
resolves to the longest module prefix that is a file of the crate, so `crate::elemwise::Elemwise`
is a dependency on `elemwise/mod.rs` (the file the path names, re-exports included) and
`crate::elemwise::unary::Elemwise` one on `elemwise/unary.rs`. `mod x;` declarations are not
imports. A circle is a strongly connected set of two or more files; each is printed with the
lines that close it. Exits 1 when any crate has a circle, 0 otherwise.
"""

import os
import re
import sys
from collections import defaultdict

IDENT = r"[A-Za-z_][A-Za-z0-9_]*"


def module_files(src):
    """Maps a module path (tuple of names; () for lib.rs) to its file, for every file under src."""
    mods = {}
    for root, _dirs, files in os.walk(src):
        for name in files:
            if not name.endswith(".rs"):
                continue
            path = os.path.join(root, name)
            rel = os.path.relpath(path, src)[: -len(".rs")].split(os.sep)
            if rel[-1] in ("lib", "main", "mod"):
                rel = rel[:-1]
            mods[tuple(rel)] = path
    return mods


def strip_comments_and_strings(text):
    """Blanks out comments, string and char literals (keeping newlines), so paths in them do not count."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            i = j
        elif text.startswith("/*", i):
            depth, j = 1, i + 2
            while j < n and depth:
                if text.startswith("/*", j):
                    depth, j = depth + 1, j + 2
                elif text.startswith("*/", j):
                    depth, j = depth - 1, j + 2
                else:
                    j += 1
            out.append("\n" * text.count("\n", i, j))
            i = j
        elif c == "r" and re.match(r'r#*"', text[i:]) and (i == 0 or not re.match(r"\w", text[i - 1])):
            hashes = re.match(r"r(#*)\"", text[i:]).group(1)
            end = text.find('"' + hashes, i + 2 + len(hashes))
            end = n if end < 0 else end + 1 + len(hashes)
            out.append('""' + "\n" * text.count("\n", i, end))
            i = end
        elif c == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            out.append('""' + "\n" * text.count("\n", i, j))
            i = j + 1
        elif c == "'" and re.match(r"'(\\.|[^\\'])'", text[i : i + 4]) or re.match(r"'\\u\{[0-9a-fA-F]+\}'", text[i:i+12]):
            m = re.match(r"'(\\u\{[0-9a-fA-F]+\}|\\.|[^\\'])'", text[i:])
            out.append("' '")
            i += m.end()
        else:
            out.append(c)
            i += 1
    return "".join(out)


def expand_use_tree(tree):
    """Expands `a::{b, c::{d, e}}` into ['a::b', 'a::c::d', 'a::c::e'] (aliases and globs dropped)."""
    # Aliases go before whitespace does: `a::b as c` names `a::b`.
    tree = re.sub(r"\s+as\s+" + IDENT, "", tree)
    tree = re.sub(r"\s+", "", tree)
    paths = []

    def walk(prefix, s):
        depth, start, parts = 0, 0, []
        for k, ch in enumerate(s):
            if ch == "{":
                depth += 1
            elif ch == "}":
                depth -= 1
            elif ch == "," and depth == 0:
                parts.append(s[start:k])
                start = k + 1
        parts.append(s[start:])
        for part in parts:
            if not part:
                continue
            brace = part.find("{")
            if brace >= 0 and part.endswith("}"):
                head = part[:brace].rstrip(":")
                walk(prefix + ([head] if head else []), part[brace + 1 : -1])
            else:
                paths.append("::".join(prefix + [p for p in part.split("::") if p]))

    walk([], tree)
    return paths


def resolve(path, here, mods):
    """The module file a path names, seen from module `here` (a tuple), or None if outside the crate."""
    segs = [s for s in path.split("::") if s]
    if not segs:
        return None
    if segs[0] == "crate":
        base, segs = (), segs[1:]
    elif segs[0] in ("super", "self"):
        base = here
        while segs and segs[0] in ("super", "self"):
            if segs[0] == "super":
                base = base[:-1]
            segs = segs[1:]
    else:
        # A path starting with a child module's name (`child::f`) names that child.
        if here + (segs[0],) in mods:
            base = here
        else:
            return None
    best = base
    for k in range(1, len(segs) + 1):
        if base + tuple(segs[:k]) in mods:
            best = base + tuple(segs[:k])
        else:
            break
    return best


def file_edges(mod_path, file_path, mods):
    """Yields (target module, line number, line text) for every module this file names."""
    raw = open(file_path, encoding="utf-8").read()
    text = strip_comments_and_strings(raw)
    lines = raw.split("\n")
    # Inline modules (`mod tests { .. }`) shift what `super`/`self` mean inside them.
    inline = []  # (start offset, end offset, name)
    for m in re.finditer(r"\bmod\s+(" + IDENT + r")\s*\{", text):
        depth, j = 1, m.end()
        while j < len(text) and depth:
            depth += {"{": 1, "}": -1}.get(text[j], 0)
            j += 1
        inline.append((m.start(), j, m.group(1)))

    def scope_at(offset):
        here = mod_path
        for start, end, name in inline:
            if start <= offset < end:
                here = here + (name,)
        return here

    def line_of(offset):
        return text.count("\n", 0, offset) + 1

    seen = set()
    for m in re.finditer(r"\buse\s+([^;]+);", text):
        here = scope_at(m.start())
        for path in expand_use_tree(m.group(1)):
            target = resolve(path, here, mods)
            if target is not None:
                seen.add((target, line_of(m.start())))
    for m in re.finditer(r"(?<![\w:$])((?:crate|super|self)(?:::" + IDENT + r")+)", text):
        before = text[max(0, m.start() - 200) : m.start()]
        if re.search(r"\buse\s+[^;]*$", before):
            continue  # already counted as part of a use tree
        here = scope_at(m.start())
        target = resolve(m.group(1), here, mods)
        if target is not None:
            seen.add((target, line_of(m.start())))
    for target, line in sorted(seen):
        if target != mod_path:
            yield target, line, lines[line - 1].strip()


def strongly_connected(nodes, graph):
    """Tarjan's algorithm; returns the components with two or more nodes."""
    index, low, on_stack, stack, out = {}, {}, set(), [], []
    counter = [0]
    sys.setrecursionlimit(10000)

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in nodes:
        if v not in index:
            visit(v)
    return out


def name(mod):
    return "crate" + "".join("::" + s for s in mod)


def check(crate_dir):
    src = os.path.join(crate_dir, "src")
    mods = module_files(src)
    graph = defaultdict(set)
    evidence = defaultdict(list)
    for mod, path in mods.items():
        for target, line, code in file_edges(mod, path, mods):
            graph[mod].add(target)
            evidence[(mod, target)].append(f"{os.path.relpath(path, crate_dir)}:{line}: {code}")
    circles = strongly_connected(sorted(mods), graph)
    print(f"{crate_dir}: {len(mods)} module files, {sum(len(v) for v in graph.values())} imports, "
          f"{len(circles)} circle(s)")
    for comp in circles:
        members = set(comp)
        print("  circle: " + ", ".join(os.path.relpath(mods[m], crate_dir) for m in comp))
        for a in comp:
            for b in sorted(graph[a] & members):
                print(f"    {name(a)} -> {name(b)}  ({evidence[(a, b)][0]})")
    return len(circles)


def main():
    if len(sys.argv) < 2:
        print(__doc__.strip())
        return 2
    total = sum(check(d) for d in sys.argv[1:])
    return 1 if total else 0


if __name__ == "__main__":
    sys.exit(main())
