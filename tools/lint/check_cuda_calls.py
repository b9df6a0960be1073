#!/usr/bin/env python3
"""Fails when a CUDA runtime, cuDNN, cuBLAS or NCCL call is not checked.

Every call of a function named cuda*/cudnn*/cublas*/nccl* in the given
files (or the C++/CUDA sources under the given folders) must be the whole
argument of DPC_CUDA_CHECK(...), DPC_CUDA_REPORT(...) or
DPC_CUDA_PENDING(...) (runtime/cuda/CudaCheck.h; the last for calls that may
say "not done yet": a nonblocking NCCL communicator's, cudaStreamQuery), so
that the wrapper sees its status (DPC_CUDA_CHECK(cudaFoo(...) == x) hides
it and is rejected). Exceptions:
  - functions that return no status (the error-string helpers);
  - a line marked `// lint: checked` (the status is kept and tested by
    hand) or `// lint: allowed` (a call whose failure is deliberately
    ignored, with the reason beside it).
Kernel launches (<<<...>>>) must be followed by
DPC_CUDA_CHECK(cudaGetLastError()) before the next statement.

usage: check_cuda_calls.py PATH...    (exit 1 and one line per finding)
"""

import os
import re
import sys

WRAPPERS = ("DPC_CUDA_CHECK", "DPC_CUDA_REPORT", "DPC_CUDA_PENDING")
NO_STATUS = {
    "cudaGetErrorString", "cudaGetErrorName", "cudnnGetErrorString",
    "cudnnGetLastErrorString", "cublasGetStatusString",
    "cublasGetStatusName", "ncclGetErrorString", "ncclGetLastError",
    "cudnnGetVersion", "cublasGetCudartVersion",
}
MARKERS = ("// lint: checked", "// lint: allowed")
CALL = re.compile(r"\b((?:cuda|cudnn|cublas|nccl)[A-Z]\w*)\s*\(")
SUFFIXES = (".cpp", ".cc", ".cu", ".h", ".cuh", ".hpp")


def blank_comments_and_strings(text):
    """Replaces comments and string/char literals with spaces, keeping
    newlines and offsets."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c:
                j += 2 if text[j] == "\\" else 1
            j = min(j + 1, n)
            out.append(c + " " * (j - i - 2) + c if j - i >= 2 else c)
            i = j
        else:
            out.append(c)
            i += 1
    return "".join(out)


def enclosing_call(code, pos):
    """The name of the call whose '(' most closely encloses `pos`, and the
    index of that '('; (None, -1) at top level."""
    depth = 0
    i = pos - 1
    while i >= 0:
        c = code[i]
        if c == ")":
            depth += 1
        elif c == "(":
            if depth == 0:
                m = re.search(r"(\w+)\s*$", code[:i])
                return (m.group(1) if m else None), i
            depth -= 1
        elif c in ";{}" and depth == 0:
            return None, -1
        i -= 1
    return None, -1


def closing_paren(code, open_index):
    """The index of the ')' matching the '(' at `open_index`."""
    depth = 0
    for i in range(open_index, len(code)):
        if code[i] == "(":
            depth += 1
        elif code[i] == ")":
            depth -= 1
            if depth == 0:
                return i
    return len(code) - 1


def check_file(path):
    with open(path, encoding="utf-8", errors="replace") as f:
        text = f.read()
    lines = text.split("\n")
    code = blank_comments_and_strings(text)
    findings = []

    def line_of(offset):
        return code.count("\n", 0, offset) + 1

    for m in CALL.finditer(code):
        name = m.group(1)
        if name in NO_STATUS:
            continue
        line = line_of(m.start())
        if any(marker in lines[line - 1] for marker in MARKERS):
            continue
        # A declaration or definition (`cudaError_t cudaFoo(`) is not a call:
        # this project defines no such functions, so flag those too.
        wrapper, paren = enclosing_call(code, m.start())
        if (wrapper in WRAPPERS and code[paren + 1:m.start()].strip() == ""
                and code[closing_paren(code, m.end() - 1) + 1:].lstrip()
                .startswith(")")):
            continue
        findings.append((line, f"{path}:{line}: unchecked call of {name}: "
                        f"wrap it in DPC_CUDA_CHECK(...) "
                        f"(runtime/cuda/CudaCheck.h)"))

    for m in re.finditer(r">>>\s*\(", code):
        end = code.find(";", m.end())
        rest = code[end + 1:]
        following = rest.lstrip()
        if not re.match(r"DPC_CUDA_CHECK\s*\(\s*cudaGetLastError\s*\(\s*\)\s*\)",
                        following):
            line = line_of(m.start())
            findings.append((line, f"{path}:{line}: kernel launch not "
                             f"followed by DPC_CUDA_CHECK(cudaGetLastError())"))
    return [text for _, text in sorted(findings)]


def main(argv):
    if len(argv) < 2:
        print(__doc__.strip().splitlines()[-1], file=sys.stderr)
        return 2
    files = []
    for arg in argv[1:]:
        if os.path.isdir(arg):
            for root, _, names in os.walk(arg):
                files += [os.path.join(root, n) for n in sorted(names)
                          if n.endswith(SUFFIXES)]
        elif os.path.isfile(arg):
            files.append(arg)
        else:
            print(f"check_cuda_calls.py: {arg}: no such file or folder",
                  file=sys.stderr)
            return 2
    findings = [f for path in sorted(files) for f in check_file(path)]
    for finding in findings:
        print(finding)
    if findings:
        print(f"{len(findings)} unchecked CUDA library call(s) in "
              f"{len(files)} file(s)")
        return 1
    print(f"all CUDA library calls checked in {len(files)} file(s)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
