"""Checks that the README's command reference is dpc's --help, verbatim.

Every ```text block of README.md whose first line is `$ dpc ... --help` must
hold exactly what that command prints, and every command that `dpc --help`
lists must have such a block. Prints "help matches README" or the
differences.

usage: check_help.py README.md DPC [--update]

--update rewrites the README's blocks with dpc's output instead (after a
change to a command's options; review the diff).
"""
import difflib
import re
import subprocess
import sys


def run(dpc, args):
    return subprocess.run([dpc] + args, capture_output=True, text=True,
                          check=True).stdout


def main():
    readme, dpc = sys.argv[1], sys.argv[2]
    with open(readme) as file:
        text = file.read()
    if sys.argv[3:] == ["--update"]:
        def refresh(match):
            args = match.group(1).split() + ["--help"]
            return (f"```text\n$ dpc{match.group(1)} --help\n" +
                    run(dpc, args) + "```")
        with open(readme, "w") as file:
            file.write(re.sub(r"```text\n\$ dpc((?: \S+)*) --help\n(.*?)```",
                              refresh, text, flags=re.S))
        return
    blocks = re.findall(r"```text\n\$ dpc((?: \S+)*) --help\n(.*?)```", text,
                        re.S)
    failures = []
    documented = set()
    for command, expected in blocks:
        args = command.split() + ["--help"]
        documented.add(command.strip())
        actual = run(dpc, args)
        if actual != expected:
            diff = difflib.unified_diff(
                expected.splitlines(), actual.splitlines(),
                "README: dpc " + " ".join(args), "dpc " + " ".join(args),
                lineterm="")
            failures.append("\n".join(diff))
    listed = run(dpc, ["--help"]).split("Commands:\n")[1].split("\n\n")[0]
    listed = listed.split("Options:\n")[0]
    for command in [""] + re.findall(r"^  (\S+)", listed, re.M):
        if command not in documented:
            failures.append(f"README has no block for `dpc {command} --help`"
                            .replace("  ", " "))
    if failures:
        print("\n".join(failures))
        sys.exit(1)
    print("help matches README")


main()
