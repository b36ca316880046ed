"""scripts/check_layers.py: first over fixture trees made here, whose violations are known
by construction (one upward include, one sibling include, one CMakeLists naming a foreign
source, and decoys of every allowed kind that must stay silent), then over the real tree,
which must be clean.

usage: test_check_layers.py CHECKER ROOT
"""
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
from tap import done, ok  # noqa: E402

# The fixture: path -> content. Every include and source below is allowed except the three
# marked VIOLATION.
FIXTURE = {
    "include/emb/trace.h": '#include <emb/internal/trace_reserve.h>\n',
    "include/emb/internal/trace_reserve.h": '#include <stdint.h>\n',
    "include/emb/wire.h": '#include <stdint.h>\n',
    "src/CMakeLists.txt":
        "# the core once compiled ../tools/lib/base/buf.c\n"
        "set(EMB_CORE_SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/trace.c\n"
        "  ${PROJECT_SOURCE_DIR}/src/log.c ${EMB_TRACE_EVENTS_C})\n"
        "add_subdirectory(wire)\n",
    "src/trace.c": '#include <emb/trace.h>\n#include "frame.h"\n#include <stdint.h>\n',
    "src/log.c": '#include "crc.h"\n',
    "src/wire/CMakeLists.txt": "add_library(emb_wire STATIC frame.c crc.c)\n",
    "src/wire/frame.c": '#include "frame.h"\n#include "crc.h"\n#include <emb/wire.h>\n',
    "src/wire/frame.h": "",
    "src/wire/crc.c": '#include "crc.h"\n',
    "src/wire/crc.h": "",
    "ports/native/CMakeLists.txt":
        "set(dir ${CMAKE_CURRENT_FUNCTION_LIST_DIR})\n"
        "target_sources(emb PRIVATE ${dir}/native.c ${EMB_GEN_DIR}/trace_events.c)\n",
    "ports/native/native.c": '#include <emb/trace.h>\n',
    "tools/CMakeLists.txt": "add_subdirectory(lib)\nadd_subdirectory(emb)\n",
    "tools/lib/CMakeLists.txt": "add_subdirectory(base)\nadd_subdirectory(decode)\n",
    "tools/lib/base/CMakeLists.txt":
        "add_library(emb_base STATIC buf.c ${CMAKE_CURRENT_SOURCE_DIR}/problem.c\n"
        "  ${CMAKE_CURRENT_BINARY_DIR}/table.c)\n",
    "tools/lib/base/buf.c":
        '#include "buf.h"\n#include <stdio.h>\n'
        '#include "trace_decode.h"\n',  # VIOLATION: upward, decode from base
    "tools/lib/base/buf.h": "",
    "tools/lib/base/problem.c": '#include "problem.h"\n#include <elf.h>\n',  # the system's
    "tools/lib/base/problem.h": "",
    "tools/lib/catalog/CMakeLists.txt": "add_library(emb_catalog STATIC catalog.c)\n",
    "tools/lib/catalog/catalog.c": '#include "catalog.h"\n#include "buf.h"\n',
    "tools/lib/catalog/catalog.h": "",
    "tools/lib/elf/CMakeLists.txt": "add_library(emb_elf STATIC elf_image.c)\n",
    "tools/lib/elf/elf_image.c": '#include "elf_image.h"\n#include "../base/problem.h"\n',
    "tools/lib/elf/elf_image.h": "",
    "tools/lib/elf/elf.h": "",
    "tools/lib/decode/CMakeLists.txt":
        "add_library(emb_decode STATIC trace_decode.c formats/ctf_names.c)\n",
    "tools/lib/decode/trace_decode.c":
        '#include "trace_decode.h"\n#include "catalog.h"\n#include "elf_image.h"\n'
        '#include <emb/wire.h>\n#include "frame.h"\n',
    "tools/lib/decode/trace_decode.h": '#include "buf.h"\n',
    "tools/lib/decode/formats/ctf_names.c": '#include "../trace_decode.h"\n',
    "tools/lib/write/CMakeLists.txt":
        "add_library(emb_write STATIC ctf.c ../decode/trace_decode.c)\n",  # VIOLATION
    "tools/lib/write/ctf.c":
        '#include "ctf.h"\n#include "trace_decode.h"\n'
        '#include "diff.h"\n',  # VIOLATION: sibling, diff from write
    "tools/lib/write/ctf.h": "",
    "tools/lib/diff/CMakeLists.txt": "add_library(emb_diff STATIC diff.c)\n",
    "tools/lib/diff/diff.c": '#include "diff.h"\n#include "trace_decode.h"\n',
    "tools/lib/diff/diff.h": "",
    "tools/emb/CMakeLists.txt": "add_executable(emb_tool main.c)\n",
    "tools/emb/main.c":
        '#include "ctf.h"\n#include "diff.h"\n#include "buf.h"\n#include <emb/trace.h>\n',
}

EXPECTED = [
    "tools/lib/base/buf.c:3: includes tools/lib/decode/trace_decode.h (layer decode) "
    "from layer base",
    "tools/lib/write/CMakeLists.txt:1: names ../decode/trace_decode.c, a source outside "
    "its folder tools/lib/write",
    "tools/lib/write/ctf.c:3: includes tools/lib/diff/diff.h (layer diff) from layer write",
]

# The mended tree with target code including host headers and a host file in no layer.
TARGET_INCLUDES = {
    "ports/native/native.c": '#include <emb/trace.h>\n#include "buf.h"\n#include "stray.h"\n',
    "tools/lib/stray.h": "",
}
TARGET_EXPECTED = [
    "ports/native/native.c:2: includes tools/lib/base/buf.h (layer base) from layer target",
    "ports/native/native.c:3: includes tools/lib/stray.h (layer none) from layer target",
    "tools/lib/stray.h:1: is in no layer of the table in scripts/check_layers.py",
]

# The same tree with the three violations mended.
MENDED = {
    "tools/lib/base/buf.c": '#include "buf.h"\n#include <stdio.h>\n',
    "tools/lib/write/CMakeLists.txt": "add_library(emb_write STATIC ctf.c)\n",
    "tools/lib/write/ctf.c": '#include "ctf.h"\n#include "trace_decode.h"\n',
}


def make_tree(root, files):
    for path, content in files.items():
        full = os.path.join(root, path)
        os.makedirs(os.path.dirname(full), exist_ok=True)
        with open(full, "w") as f:
            f.write(content)


def run(checker, root):
    p = subprocess.run([sys.executable, checker, root], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, universal_newlines=True)
    return p.returncode, p.stdout.splitlines(), p.stderr


def report(lines):
    for line in lines:
        print("# " + line)


def fixture_checks(checker):
    with tempfile.TemporaryDirectory() as tmp:
        make_tree(tmp, FIXTURE)
        rc, out, _ = run(checker, tmp)
        if not ok(out == EXPECTED, "fixture: exactly the upward include, the sibling "
                  "include and the foreign source, in that form"):
            report(out)
        ok(rc == 1, "fixture: exit status 1 with violations (got %d)" % rc)

        make_tree(tmp, MENDED)
        rc, out, _ = run(checker, tmp)
        if not ok(rc == 0 and out == [], "mended fixture: silent, exit status 0 (got %d)" % rc):
            report(out)

        make_tree(tmp, TARGET_INCLUDES)
        rc, out, _ = run(checker, tmp)
        if not ok(out == TARGET_EXPECTED and rc == 1,
                  "target code including tools/, and a host file in no layer, are violations"):
            report(out)

    rc, _, err = run(checker, os.path.join(tmp, "gone"))
    ok(rc == 2 and "not a folder" in err, "a missing tree is a usage error (exit status 2)")


def main():
    if len(sys.argv) != 3:
        sys.stderr.write(__doc__)
        sys.exit(2)
    checker, root = sys.argv[1], sys.argv[2]
    fixture_checks(checker)
    rc, out, err = run(checker, root)
    ok(rc == 0, "the real tree keeps the layer rules (%d violations)" % len(out))
    report(out + err.splitlines())
    done()


if __name__ == "__main__":
    main()
