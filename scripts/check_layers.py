#!/usr/bin/env python3
"""The layer rules of the tree, checked over its files (docs/architecture.md):

1. A CMakeLists.txt (or .cmake file) under src/, ports/ or tools/ names only source files
   of its own folder: no `../x.c`, no `${PROJECT_SOURCE_DIR}/other/x.c`. A subfolder
   without a CMakeLists.txt of its own counts as part of its parent's folder.
2. No file includes upward or sideways in LAYERS: a file may include the headers of its
   own layer and of lower levels only. `#include "x.h"` is resolved to the folder that
   holds x.h (next to the includer first, else by name anywhere in src/, include/, ports/
   and tools/); `<dir/x.h>` likewise by its path; `<x.h>` is a system header. Target code
   (TARGET) never includes anything from tools/. A source file under tools/ outside every
   layer folder is reported too, so a new folder cannot escape the rules.

Prints each violation as `FILE:LINE: what`, paths relative to ROOT; exits 1 when there is
one, 0 when there is none, 2 on a usage error.

usage: check_layers.py [ROOT]    (ROOT: the tree to check; default the one holding this
                                  script)
"""
import os
import re
import sys

# The host layers, lowest first: (level, name, folder). A file belongs to the layer whose
# folder holds it, subfolders included. Layers of one level are siblings: none may include
# another.
LAYERS = [
    (0, "wire", "src/wire"),
    (0, "posix", "ports/posix"),
    (1, "base", "tools/lib/base"),
    (2, "catalog", "tools/lib/catalog"),
    (2, "elf", "tools/lib/elf"),
    (3, "decode", "tools/lib/decode"),
    (4, "write", "tools/lib/write"),
    (4, "acquire", "tools/lib/acquire"),
    (4, "diff", "tools/lib/diff"),
    (4, "import", "tools/lib/import"),
    (4, "events", "tools/lib/events"),
    (5, "fleet", "tools/lib/fleet"),
    (6, "emb", "tools/emb"),
]
# Target code outside the wire layer: it may include the wire and itself, never tools/.
TARGET = ("src", "include/emb", "ports")
TARGET_NAME = "target"
HOST = "tools"
# Where CMake files must name only their own folder's sources.
CMAKE_ROOTS = ("src", "ports", "tools")
# Where files are read for includes and headers are looked up.
SOURCE_ROOTS = ("src", "include", "ports", "tools")
SOURCE_EXTENSIONS = (".c", ".h", ".cc", ".cpp", ".cxx", ".S", ".s")
HEADER_EXTENSIONS = (".h",)

INCLUDE_RE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]')
SET_RE = re.compile(r"\bset\(\s*(\w+)\s+([^\s()]+)\s*\)")
VARIABLE_RE = re.compile(r"\$\{(\w+)\}")
TOKEN_SPLIT_RE = re.compile(r'[\s()"]+')
OWN_FOLDER_VARIABLES = ("CMAKE_CURRENT_SOURCE_DIR", "CMAKE_CURRENT_LIST_DIR",
                        "CMAKE_CURRENT_FUNCTION_LIST_DIR")
ROOT_VARIABLES = ("PROJECT_SOURCE_DIR", "CMAKE_SOURCE_DIR")


def under(path, folder):
    return path == folder or path.startswith(folder + "/")


def walk_files(root, tops):
    """Repository-relative paths of the files under `tops`, skipping hidden folders and
    build trees (a folder holding CMakeCache.txt)."""
    found = []
    for top in tops:
        for dirpath, dirnames, filenames in os.walk(os.path.join(root, top)):
            if "CMakeCache.txt" in filenames:
                dirnames[:] = []
                continue
            dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
            rel = os.path.relpath(dirpath, root).replace(os.sep, "/")
            found.extend(rel + "/" + f for f in sorted(filenames))
    return found


def read_lines(root, path):
    with open(os.path.join(root, path), encoding="utf-8", errors="replace") as f:
        return f.read().split("\n")


# ---- Rule 1: a CMake file names only its own folder's sources ----

def strip_cmake_comment(line):
    """The line without its `#` comment (a `#` inside a quoted string is kept)."""
    quoted = False
    for i, c in enumerate(line):
        if c == '"':
            quoted = not quoted
        elif c == "#" and not quoted:
            return line[:i]
    return line


def expand(token, variables):
    """The token with the variables it uses replaced, or None when one is unknown or the
    path is in the build tree (generated sources are no folder's business)."""
    unknown = False

    def value(m):
        nonlocal unknown
        if m.group(1) not in variables:
            unknown = True
            return ""
        return variables[m.group(1)]

    path = VARIABLE_RE.sub(value, token)
    if unknown or "$<" in path or "${" in path:
        return None
    return path


def own_folder(root, folder, path):
    """Whether `path` (repository-relative) is in `folder`: there, or in a subfolder of it
    that has no CMakeLists.txt of its own."""
    parent = os.path.dirname(path)
    if not under(parent, folder):
        return False
    while parent != folder:
        if os.path.exists(os.path.join(root, parent, "CMakeLists.txt")):
            return False
        parent = os.path.dirname(parent)
    return True


def check_cmake_file(root, path):
    folder = os.path.dirname(path)
    variables = {v: "/" + folder for v in OWN_FOLDER_VARIABLES}
    variables.update({v: "/" for v in ROOT_VARIABLES})
    violations = []
    for number, line in enumerate(read_lines(root, path), 1):
        line = strip_cmake_comment(line)
        for name, token in SET_RE.findall(line):
            expanded = expand(token, variables)
            if expanded is not None:
                variables[name] = expanded
        for token in TOKEN_SPLIT_RE.split(line):
            if not token.endswith(SOURCE_EXTENSIONS) or token.startswith("-"):
                continue
            expanded = expand(token, variables)
            if expanded is None:
                continue
            if expanded.startswith("/"):
                source = os.path.normpath(expanded.lstrip("/") or ".")
            else:
                source = os.path.normpath(os.path.join(folder, expanded))
            source = source.replace(os.sep, "/")
            if source.startswith("../") or not own_folder(root, folder, source):
                violations.append((path, number, "names %s, a source outside its folder %s"
                                   % (token, folder)))
    return violations


def check_cmake(root, files):
    violations = []
    for path in files:
        name = os.path.basename(path)
        if name == "CMakeLists.txt" or name.endswith(".cmake"):
            violations.extend(check_cmake_file(root, path))
    return violations


# ---- Rule 2: includes go only downward ----

def layer_of(path):
    """(level, name) of the layer holding `path`; the target's pseudo-layer (level None)
    for target code outside the wire; None for a file in no layer."""
    best = None
    for level, name, folder in LAYERS:
        if under(path, folder) and (best is None or len(folder) > len(best[2])):
            best = (level, name, folder)
    if best is not None:
        return best[0], best[1]
    if any(under(path, t) for t in TARGET):
        return None, TARGET_NAME
    return None


def allowed(includer, header_path):
    """Whether a file of layer `includer` may include the header at `header_path`."""
    header = layer_of(header_path)
    if includer[1] == TARGET_NAME:
        # The target uses the wire, never the host's layers nor anything else in tools/.
        return not under(header_path, HOST)
    if header is None or header[1] == TARGET_NAME:
        return True  # not layered (tests, gen/) or the target's public headers
    return header == includer or header[0] < includer[0]


def header_index(files):
    index = {}
    for path in files:
        if path.endswith(HEADER_EXTENSIONS):
            index.setdefault(os.path.basename(path), []).append(path)
    return index


def resolve(includer, spec, quoted, files, index):
    """Candidate paths of the header an include names ([] when it is not in the tree)."""
    if quoted:
        beside = os.path.normpath(os.path.join(os.path.dirname(includer), spec))
        beside = beside.replace(os.sep, "/")
        if beside in files:
            return [beside]
    elif "/" not in spec:
        return []  # <stdio.h>
    spec = os.path.normpath(spec).replace(os.sep, "/")
    return [p for p in index.get(os.path.basename(spec), [])
            if p == spec or p.endswith("/" + spec)]


def check_includes_of(path, layer, files, index, root):
    violations = []
    for number, line in enumerate(read_lines(root, path), 1):
        m = INCLUDE_RE.match(line)
        if not m:
            continue
        candidates = resolve(path, m.group(2), m.group(1) == '"', files, index)
        # With several folders holding one name the build's search order decides: only
        # an include no candidate could satisfy is a violation.
        if not candidates or any(allowed(layer, c) for c in candidates):
            continue
        header = candidates[0]
        header_layer = layer_of(header)
        violations.append((path, number, "includes %s (layer %s) from layer %s"
                           % (header, header_layer[1] if header_layer else "none", layer[1])))
    return violations


def check_includes(root, files):
    fileset = set(files)
    index = header_index(files)
    violations = []
    for path in files:
        if not path.endswith(SOURCE_EXTENSIONS):
            continue
        layer = layer_of(path)
        if layer is None:
            if under(path, HOST):
                violations.append((path, 1, "is in no layer of the table in "
                                   "scripts/check_layers.py"))
            continue
        violations.extend(check_includes_of(path, layer, fileset, index, root))
    return violations


def main(argv):
    if len(argv) > 2 or (len(argv) == 2 and argv[1].startswith("-")):
        sys.stderr.write(__doc__)
        return 2
    root = argv[1] if len(argv) == 2 else os.path.join(os.path.dirname(__file__), "..")
    if not os.path.isdir(root):
        sys.stderr.write("check_layers.py: %s: not a folder\n" % root)
        return 2
    files = walk_files(root, SOURCE_ROOTS)
    cmake_files = [p for p in files if any(under(p, r) for r in CMAKE_ROOTS)]
    violations = check_cmake(root, cmake_files) + check_includes(root, files)
    for path, number, what in sorted(violations):
        print("%s:%d: %s" % (path, number, what))
    return 1 if violations else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
