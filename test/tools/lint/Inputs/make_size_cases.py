"""Writes the size lint's test cases into the folder given: each case sits
one line over or at a limit, so an off-by-one in the lint shows."""
import os
import sys

out = sys.argv[1]
os.makedirs(out, exist_ok=True)


def write(name, text):
    with open(os.path.join(out, name), "w") as f:
        f.write(text)


def body(lines):
    """A function body `lines` long, braces included."""
    return "{\n" + "  ++x;\n" * (lines - 2) + "}\n"


write("long_file.cpp", "int x;\n" * 701)
write("marked_file.cpp", "// size: a generated table, one row a line.\n"
      + "int x;\n" * 700)
write("limit_file.td", "// A TableGen file exactly at the limit.\n"
      + "def X;\n" * 699)
write("long_file.td", "def X;\n" * 701)
write("functions.cpp", "".join([
    "// size: the size lint's test cases, one after another.\n"
    "namespace a {\nnamespace {\n",
    "int atLimit(int x) " + body(100),
    "int overLimit(int x) " + body(101),
    "// Reads every row.\n// size: one case per kernel, read side by side.\n"
    "template <typename T>\nint markedAbove(T x) " + body(120),
    "int markedInside(int x) {\n  // size: a switch over every kernel.\n"
    + body(120)[2:],
    "struct Row : Base<Row> {\n  Row(int a) : y{a}, z(a) " + body(101),
    "  int member(int x) const override " + body(101),
    "  int y, z;\n};\n",
    "const int table[] = " + body(150)[:-2] + "};\n",
    "TEST(Suite, Case) " + body(101),
    "}  // namespace\n}  // namespace a\n",
    'extern "C" {\nvoid cFunction(void) ' + body(101) + "}\n",
    "#define OPEN {\n",
    "auto lambda = [](int x) -> int " + body(101) + ";\n",
    "namespace DPC_CONCAT(isa_, DPC_ISA) {\n",
    "void inMacroNamespace(int x) " + body(101),
    "}\n",
]))
