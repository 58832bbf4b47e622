#!/usr/bin/env python3
"""Fails when a public function has no Doxygen comment of its own.

    check_doxygen.py [INCLUDE_DIR]     (default: include/ocisbx beside tests/)
    check_doxygen.py --self-test       the rule on a made-up header

The rule, for every header INCLUDE_DIR/*.h: each declaration that starts a
line with OCISBX_API must be directly preceded (on the line right above it,
no blank line between) by the end of a comment that opens with slash-star-star
at the start of its line. So each function documents itself: a comment
shared by several declarations documents only the first one (as Doxygen sees
it too), and a trailing member comment (the star-star-less-than form) on the
line above belongs to that line, not to the next declaration. Every header
must also open with a comment holding @file (without it Doxygen shows none of
the file's functions).

Prints each offending declaration as FILE:LINE: NAME and exits 1; exits 0
with a count when every one is documented; exits 2 when there is nothing to
check (a wrong directory must not pass).
"""
import os
import re
import sys


def comment_start(lines, end):
    """Index of the line on which the comment ending on line `end` opens."""
    j = end
    # the opening is the last "/*" at or above `end`
    while j >= 0 and "/*" not in lines[j]:
        j -= 1
    return j


def check_file(path):
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    problems = []
    count = 0
    head = "\n".join(lines[:3])
    if not re.match(r"\s*/\*\*", head) or "@file" not in head:
        problems.append(f"{path}:1: the header does not open with a /** @file comment")
    for i, line in enumerate(lines):
        if not line.lstrip().startswith("OCISBX_API"):
            continue
        count += 1
        m = re.search(r"\b(ocisbx_\w+)\s*\(", line)
        name = m.group(1) if m else line.strip()
        ok = False
        if i > 0 and lines[i - 1].rstrip().endswith("*/"):
            j = comment_start(lines, i - 1)
            opener = lines[j].lstrip() if j >= 0 else ""
            ok = opener.startswith("/**") and not opener.startswith("/**<")
        if not ok:
            problems.append(f"{path}:{i + 1}: {name}: no /** ... */ comment right above it")
    return count, problems


SELF_TEST_HEADER = """/** @file
 * A made-up header. */
/** Documented. */
OCISBX_API int ocisbx_a(void);
OCISBX_API int ocisbx_b(void);
/* A plain comment. */
OCISBX_API int ocisbx_c(void);
#define OCISBX_X 1 /**< a trailing member comment */
OCISBX_API int ocisbx_d(void);
/** Documented,
 * on two lines. */
OCISBX_API int ocisbx_e(int x,
                        int y);

/** Not right above it. */

OCISBX_API int ocisbx_f(void);
"""


def self_test():
    import tempfile

    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "t.h")
        with open(path, "w", encoding="utf-8") as f:
            f.write(SELF_TEST_HEADER)
        count, problems = check_file(path)
        with open(path, "w", encoding="utf-8") as f:
            f.write(SELF_TEST_HEADER.replace("/** @file", "/*", 1))
        _, no_file = check_file(path)
    names = sorted(p.split(": ")[1] for p in problems)
    want = ["ocisbx_b", "ocisbx_c", "ocisbx_d", "ocisbx_f"]
    ok = count == 6 and names == want and any("@file" in p for p in no_file)
    print(f"check_doxygen self-test: {count} declarations, flagged {names} (want 6, {want}); "
          f"no @file flagged: {any('@file' in p for p in no_file)}")
    return 0 if ok else 1


def main():
    if sys.argv[1:] == ["--self-test"]:
        return self_test()
    here = os.path.dirname(os.path.abspath(__file__))
    inc = sys.argv[1] if len(sys.argv) > 1 else os.path.join(here, "..", "..", "include", "ocisbx")
    headers = sorted(os.path.join(inc, n) for n in os.listdir(inc) if n.endswith(".h")) if os.path.isdir(inc) else []
    total = 0
    problems = []
    for h in headers:
        n, p = check_file(h)
        total += n
        problems += p
    if total == 0:
        print(f"check_doxygen: no OCISBX_API declarations under {inc}", file=sys.stderr)
        return 2
    for p in problems:
        print(p)
    if problems:
        print(f"check_doxygen: {len(problems)} problem(s) in {len(headers)} headers ({total} declarations)")
        return 1
    print(f"check_doxygen: all {total} OCISBX_API declarations in {len(headers)} headers have a /** */ comment")
    return 0


if __name__ == "__main__":
    sys.exit(main())
