#!/usr/bin/env python3
"""Fails on a source file over 700 lines or a function over 100 lines.

Checks the C++, CUDA and TableGen sources (.cpp .cc .c .h .hpp .cu .cuh
.inc .def .td) in the given files, or under the given folders (skipping
hidden folders, folders named Inputs, which hold test inputs, and build
trees, recognised by their CMakeCache.txt). Exceptions, each with the
reason written after the colon:
  - a file carrying `// size: <reason>` in its first 40 lines;
  - a function carrying `// size: <reason>` in the comment just above it
    (up to its template line, without a blank line between) or as the
    first lines of its body.

A function is a body at file, namespace or class level (a member, a gtest
TEST, a lambda stored in a variable at that level), found by matching
braces in the code with comments, strings and preprocessor lines blanked.
Its length is the lines from its opening brace to its closing brace.
Limits of that scan: functions inside function bodies (local classes,
lambdas) count as part of the enclosing function; `#if`/`#else` branches
that open different numbers of braces confuse it; TableGen and .def files
are checked for their length only.

usage: check_sizes.py PATH...    (exit 1 and one line per finding)
"""

import os
import re
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from check_cuda_calls import blank_comments_and_strings  # noqa: E402

MAX_FILE_LINES = 700
MAX_FUNCTION_LINES = 100
SUFFIXES = (".cpp", ".cc", ".c", ".h", ".hpp", ".cu", ".cuh", ".inc",
            ".def", ".td")
LENGTH_ONLY = (".def", ".td")
MARKER = re.compile(r"//\s*size:\s*\S")
FILE_MARKER_LINES = 40

CONTAINER = re.compile(r'\b(namespace|class|struct|union|enum)\b|'
                       r'\bextern\s*"')
NAMESPACE = re.compile(r'\s*((inline\s+)?namespace\b|extern\s*")')
# What may follow a function's parameter list before its body.
QUALIFIERS = re.compile(r"^(\s*(const|volatile|noexcept|override|final|"
                        r"mutable|&&|&|->[^{;=]*))*\s*$")
# The `:` that starts a constructor's member initializer list.
INIT_LIST = re.compile(r"\)\s*(noexcept\s*)?:(?!:)")


def blank_preprocessor(code):
    """Blanks preprocessor lines (with their continuations)."""
    lines = code.split("\n")
    continued = False
    for i, line in enumerate(lines):
        if continued or line.lstrip().startswith("#"):
            continued = line.rstrip().endswith("\\")
            lines[i] = " " * len(line)
    return "\n".join(lines)


def matching_braces(code):
    """{index of '{': index of its '}'} for the balanced braces."""
    match, stack = {}, []
    for i, c in enumerate(code):
        if c == "{":
            stack.append(i)
        elif c == "}" and stack:
            match[stack.pop()] = i
    return match


def last_top_level_paren(head):
    """(open, close) indices of the last parenthesised group of `head` at
    depth 0, or None."""
    close = head.rfind(")")
    if close < 0:
        return None
    depth = 0
    for i in range(close, -1, -1):
        if head[i] == ")":
            depth += 1
        elif head[i] == "(":
            depth -= 1
            if depth == 0:
                return i, close
    return None


def depth0_positions(text, pattern):
    """Matches of `pattern` in `text` outside parentheses."""
    depth, positions = 0, []
    for i, c in enumerate(text):
        if c == "(":
            depth += 1
        elif c == ")":
            # A match that starts with ')' is at the depth after it.
            if depth == 1:
                m = pattern.match(text, i)
                if m:
                    positions.append(m)
            depth -= 1
    return positions


def function_name(head):
    """A readable name for the function whose head (its text before the
    body, initializer list cut off) is `head`."""
    parens = last_top_level_paren(head)
    before = head[:parens[0]] if parens else head
    eq = re.search(r"([\w:]+)\s*=[^=]*$", before)
    if eq and "operator" not in before:
        return eq.group(1)
    m = re.search(r"(operator\s*\(\s*\)|operator\s*[^\s\w(]+|"
                  r"operator\s+[\w:]+|[\w:~]+)\s*$", before)
    name = m.group(1) if m else head.strip().split("\n")[-1].strip()
    if re.fullmatch(r"[A-Z_0-9]+", name) and parens:
        name += re.sub(r"\s+", " ", head[parens[0]:parens[1] + 1])
    return name


def classify(head, code, brace):
    """'container', 'function', 'member-init' (a braced member initializer
    in a constructor's initializer list) or 'other' for the '{' at `brace`
    whose text since the last ';', '{' or '}' is `head`."""
    if NAMESPACE.match(head):  # namespace DPC_CONCAT(isa_, DPC_ISA) {
        return "container", head
    inits = depth0_positions(head, INIT_LIST)
    if inits:
        signature = head[:inits[0].start() + 1]
        before = code[:brace].rstrip()
        if before and (before[-1].isalnum() or before[-1] in "_>"):
            return "member-init", signature
        return "function", signature
    parens = last_top_level_paren(head)
    if parens and QUALIFIERS.match(head[parens[1] + 1:]):
        return "function", head
    if CONTAINER.search(head):
        return "container", head
    return "other", head


def marked_above(lines, line):
    """Whether the comment block ending just above 0-based `line` (the
    function's first line) carries a size marker."""
    i = line - 1
    while i >= 0 and lines[i].strip().startswith("//"):
        if MARKER.search(lines[i]):
            return True
        i -= 1
    return False


def marked_inside(lines, open_line):
    """Whether the comment lines opening the body that starts on 0-based
    `open_line` carry a size marker."""
    if MARKER.search(lines[open_line]):
        return True
    i = open_line + 1
    while i < len(lines) and lines[i].strip().startswith("//"):
        if MARKER.search(lines[i]):
            return True
        i += 1
    return False


def long_functions(text):
    """(first line, name, length) of each unmarked function over the limit;
    lines 1-based."""
    lines = text.split("\n")
    code = blank_preprocessor(blank_comments_and_strings(text))
    match = matching_braces(code)
    found = []

    def line_of(offset):
        return code.count("\n", 0, offset)

    def scan(start, end):
        head_start = i = start
        while i < end:
            c = code[i]
            if c in ";}":
                head_start = i + 1
            elif c == "{":
                close = match.get(i)
                if close is None:
                    return
                kind, head = classify(code[head_start:i], code, i)
                if kind == "member-init":
                    i = close + 1
                    continue
                if kind == "container":
                    scan(i + 1, close)
                elif kind == "function":
                    length = line_of(close) - line_of(i) + 1
                    offset = head_start + len(head) - len(head.lstrip())
                    first = line_of(offset)
                    if (length > MAX_FUNCTION_LINES
                            and not marked_above(lines, first)
                            and not marked_inside(lines, line_of(i))):
                        found.append((first + 1, function_name(head),
                                      length))
                i = close + 1
                head_start = i
                continue
            i += 1

    scan(0, len(code))
    return found


def check_file(path):
    with open(path, encoding="utf-8", errors="replace") as f:
        text = f.read()
    lines = text.split("\n")
    if text.endswith("\n"):
        lines.pop()
    findings = []
    file_marked = any(MARKER.search(line)
                      for line in lines[:FILE_MARKER_LINES])
    if len(lines) > MAX_FILE_LINES and not file_marked:
        findings.append(f"{path}:1: file is {len(lines)} lines (limit "
                        f"{MAX_FILE_LINES}): split it, or say why not in "
                        f"a `// size: <reason>` comment at its top")
    if not path.endswith(LENGTH_ONLY):
        for line, name, length in long_functions(text):
            findings.append(f"{path}:{line}: function {name} is {length} "
                            f"lines (limit {MAX_FUNCTION_LINES}): shorten "
                            f"it, or say why not in a `// size: <reason>` "
                            f"comment at its top")
    return findings


def source_files(folder):
    for root, dirs, names in os.walk(folder):
        if os.path.exists(os.path.join(root, "CMakeCache.txt")):
            dirs[:] = []
            continue
        dirs[:] = sorted(d for d in dirs
                         if not d.startswith(".") and d != "Inputs")
        yield from (os.path.join(root, n) for n in sorted(names)
                    if n.endswith(SUFFIXES))


def main(argv):
    if len(argv) < 2:
        print(__doc__.strip().splitlines()[-1], file=sys.stderr)
        return 2
    files = []
    for arg in argv[1:]:
        if os.path.isdir(arg):
            files += source_files(arg)
        elif os.path.isfile(arg):
            files.append(arg)
        else:
            print(f"check_sizes.py: {arg}: no such file or folder",
                  file=sys.stderr)
            return 2
    findings = [f for path in sorted(files) for f in check_file(path)]
    for finding in findings:
        print(finding)
    if findings:
        print(f"{len(findings)} size finding(s) in {len(files)} file(s)")
        return 1
    print(f"all files and functions within size in {len(files)} file(s)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
