#!/usr/bin/env python3
"""The layout rules of src/, checked: layers include only downward, no
function over 100 lines, no file over 800 lines.

    check_structure.py SRC_DIR           exit 1 and list every offence
    check_structure.py --self-test       the checker's own cases

The layers, lowest first: util < sys < auth < http < api < backend < engine <
harness < cli.  The emulator is its own program over util, sys, auth and the
api's route and model tables (which it serves).  A file may include its own
layer and the ones below; a public header (ocisbx/x.h) counts as the layer it
belongs to."""
import os
import re
import sys

LAYERS = ["util", "sys", "auth", "http", "api", "backend", "engine", "harness", "cli"]
RANK = {name: i for i, name in enumerate(LAYERS)}
# the public headers, by the layer they belong to
PUBLIC = {"common": "util", "util": "util", "auth": "auth", "http": "http", "api": "api",
          "settings": "api", "backend": "backend", "engine": "engine", "harness": "harness",
          "ocisbx": "cli"}
# what the emulator may include besides itself
EMULATOR_MAY = {"util", "sys", "auth"}
EMULATOR_FILES = {"api/routes.h", "api/model_internal.h", "ocisbx/api.h"}
MAX_FUNCTION = 100
MAX_FILE = 800

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def layer_of_include(path):
    """The layer an include names, or None for the file's own directory."""
    parts = path.split("/")
    if len(parts) == 1:
        return None
    if parts[0] == "ocisbx":
        return PUBLIC.get(os.path.splitext(parts[1])[0], "cli")
    return parts[0]


def include_offences(layer, rel, text):
    out = []
    for inc in INCLUDE.findall(text):
        target = layer_of_include(inc)
        if target is None or target == layer:
            continue
        if layer == "emulator":
            ok = target in EMULATOR_MAY or inc in EMULATOR_FILES
        elif target == "emulator" or layer not in RANK or target not in RANK:
            ok = False
        else:
            ok = RANK[target] <= RANK[layer]
        if not ok:
            out.append(f"{rel}: includes {inc} ({target} is above {layer})")
    return out


def strip_code(text):
    """Comments, strings and character literals blanked, newlines kept."""
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c:
                j += 2 if text[j] == "\\" else 1
            out.append(c + re.sub(r"[^\n]", " ", text[i + 1:j]) + c)
            i = j + 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


PREPROCESSOR = re.compile(r"^[ \t]*#(?:[^\n]*\\\n)*[^\n]*", re.M)
FUNC_HEAD = re.compile(r"([A-Za-z_]\w*)\s*\([^;{}]*\)\s*$", re.S)


def functions(text):
    """(name, first line, line count) of every function definition."""
    code = PREPROCESSOR.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), strip_code(text))
    result, depth, start = [], 0, None
    for i, c in enumerate(code):
        if c == "{":
            if depth == 0:
                base = max(0, i - 400)
                head = code[base:i]
                m = FUNC_HEAD.search(head)
                if m and not re.search(r"=\s*$", head) and m.group(1) not in ("if", "for", "while", "switch"):
                    start = (m.group(1), code.count("\n", 0, base + m.start(1)) + 1)
                else:
                    start = None
            depth += 1
        elif c == "}":
            depth -= 1
            if depth == 0 and start:
                name, line = start
                result.append((name, line, code.count("\n", 0, i) + 1 - line + 1))
                start = None
    return result


def check(src):
    offences = []
    for dirpath, _, names in sorted(os.walk(src)):
        for name in sorted(names):
            if not name.endswith((".c", ".h")):
                continue
            path = os.path.join(dirpath, name)
            rel = os.path.relpath(path, src)
            layer = rel.split(os.sep)[0]
            with open(path, encoding="utf-8", errors="replace") as f:
                text = f.read()
            lines = text.count("\n")
            if lines > MAX_FILE:
                offences.append(f"{rel}: {lines} lines (at most {MAX_FILE})")
            offences += include_offences(layer, rel, text)
            for fn, line, count in functions(text):
                if count > MAX_FUNCTION:
                    offences.append(f"{rel}:{line}: {fn} is {count} lines (at most {MAX_FUNCTION})")
    return offences


def self_test():
    body = "int f(void)\n{\n" + "    x();\n" * 101 + "}\n"
    assert [n for n, _, c in functions(body) if c > MAX_FUNCTION] == ["f"], "long function missed"
    short = "static int g(int a)\n{\n    if (a) {\n        return \"}\"[0];\n    }\n    return 0; /* } */\n}\n"
    assert functions(short) == [("g", 1, 7)], functions(short)
    macro = "#define M(x) f(x, \\\n  y)\nint h(void)\n{\n    return 0;\n}\n"
    assert functions(macro) == [("h", 3, 4)], functions(macro)
    table = "static const int t[] = {\n" + "1,\n" * 200 + "};\n"
    assert functions(table) == [], "a table is not a function"
    assert include_offences("util", "util/a.c", '#include "http/x.h"\n'), "upward include missed"
    assert include_offences("http", "http/a.c", '#include "ocisbx/backend.h"\n'), "upward public header missed"
    assert not include_offences("backend", "backend/a.c", '#include "api/routes.h"\n#include "x.h"\n')
    assert include_offences("emulator", "emulator/a.c", '#include "backend/backend_int.h"\n')
    assert not include_offences("emulator", "emulator/a.c", '#include "sys/proc.h"\n#include "api/routes.h"\n')
    assert include_offences("api", "api/a.c", '#include "emulator/emu.h"\n')
    print("check_structure self-test: ok")


def main(argv):
    if len(argv) == 2 and argv[1] == "--self-test":
        self_test()
        return 0
    if len(argv) != 2:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    offences = check(argv[1])
    for o in offences:
        print(o)
    if offences:
        print(f"{len(offences)} offences against the layout rules", file=sys.stderr)
        return 1
    print("layout rules hold")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
