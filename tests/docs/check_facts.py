#!/usr/bin/env python3
"""doc_facts: what the docs name, checked against the code.

- Every CMake option (option() and the OCISBX_* cache settings) is a row of
  docs/building.md's options table, and every row there is one.
- docs/building.md names every public header of include/ocisbx/.
- Every environment variable the code reads (getenv in src/ and examples/,
  the library's settings table, the scripts' ${VAR:-...}) is named in the
  docs; the scripts' ones in docs/building.md.
- Every OCI_* and OCISBX_* name the docs mention exists in the code (a
  variable, a macro, an option): a renamed or removed one cannot linger.

    check_facts.py SOURCE_DIR
"""

import pathlib
import re
import sys

src = pathlib.Path(sys.argv[1])
failures = []


def fail(msg):
    failures.append(msg)


def read(p):
    return p.read_text(encoding="utf-8", errors="replace")


docs = {p: read(p) for p in sorted((src / "docs").glob("*.md"))}
docs[src / "README.md"] = read(src / "README.md")
building = read(src / "docs" / "building.md")
all_docs = "\n".join(docs.values())

# ---- CMake options ----
cmake_files = [src / "CMakeLists.txt"] + sorted((src / "cmake").glob("*.cmake"))
options = set()
for f in cmake_files:
    t = read(f)
    options.update(re.findall(r"^\s*option\((\w+)", t, re.M))
    options.update(re.findall(r"^\s*set\((OCISBX_\w+)\s+\S+\s+CACHE\b", t, re.M))
table = building[building.index("| option | default | effect |"):]
table = table[:table.index("\n\n")]
rows = set(re.findall(r"^\| `(\w+)` \|", table, re.M))
for o in sorted(options - rows):
    fail("docs/building.md: the option %s is not in the options table" % o)
for o in sorted(r for r in rows - options if r.startswith("OCISBX_")):
    fail("docs/building.md: the options table lists %s, which the build does not have" % o)

# ---- headers ----
for h in sorted((src / "include" / "ocisbx").glob("*.h")):
    if h.name in ("ocisbx.h",):
        continue
    if "`%s`" % h.name not in building and "ocisbx/%s" % h.name not in building:
        fail("docs/building.md does not name the header %s" % h.name)

# ---- environment variables the code reads ----
code_files = [p for d in ("src", "examples") for p in (src / d).rglob("*.c")]
read_vars = set()
for p in code_files:
    read_vars.update(re.findall(r'getenv\("([A-Z][A-Z0-9_]*)"\)', read(p)))
settings = src / "src" / "api" / "settings.c"
if settings.exists():
    read_vars.update(re.findall(r'"((?:OCI|OCISBX)_[A-Z0-9_]+)"', read(settings)))
for v in sorted(read_vars):
    if not re.search(r"\b%s\b" % re.escape(v), all_docs):
        fail("the code reads the variable %s, which no page of docs/ (or README.md) names" % v)
script_vars = set()
for p in sorted((src / "scripts").iterdir()):
    if p.is_file():
        script_vars.update(re.findall(r"\$\{([A-Z][A-Z0-9_]*):-", read(p)))
for v in sorted(script_vars):
    if not re.search(r"`%s[`=]" % re.escape(v), building):
        fail("scripts/ read the variable %s, which docs/building.md's table does not name" % v)

# ---- every OCI_ / OCISBX_ name of the docs exists ----
code_text = []
for d in ("src", "include", "cmake", "scripts", "examples", "tests"):
    for p in (src / d).rglob("*"):
        if p.is_file() and p.suffix in (".c", ".h", ".in", ".cmake", ".sh", ".py", ".js", "") and "corpus" not in p.parts:
            code_text.append(read(p))
code_text.append(read(src / "CMakeLists.txt"))
code = "\n".join(code_text)
# names a page makes up for its example, not the code's
user_names = {"OCI_GENAI_API_KEY": "the variable an agent_chat user picks (--api-key-env)"}
named = set()
for p, t in docs.items():
    for m in re.finditer(r"\b((?:OCI|OCISBX)_[A-Z0-9_]*[A-Z0-9])(\*|_\*)?", t):
        if m.group(2) or m.group(1) in user_names:  # a family (OCI_SANDBOX_*, OCISBX_E*), a user's name
            continue
        named.add((m.group(1), p.name))
for name, page in sorted(named):
    if not re.search(r"\b%s\b" % re.escape(name), code):
        fail("%s names %s, which is nowhere in the code" % (page, name))

for f in failures:
    print("FAIL " + f)
print("doc_facts: %d options, %d variables read, %d names in the docs; %d failed" %
      (len(options), len(read_vars | script_vars), len(named), len(failures)))
sys.exit(1 if failures else 0)
