"""Process helpers the launch tests' scripts share: free ports, the
process tree from /proc, liveness, and the command after "--" with its
placeholders filled in."""
import os
import socket
import time


def free_port():
    """A TCP port nothing listens on now."""
    with socket.socket() as s:
        s.bind(("", 0))
        return s.getsockname()[1]


def children(pid):
    """The direct children of `pid` (none once it is gone)."""
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as f:
            return [int(p) for p in f.read().split()]
    except OSError:
        return []


def descendants(pid):
    """Every process below `pid`, depth first."""
    found = []
    for child in children(pid):
        found += [child] + descendants(child)
    return found


def state(pid):
    """The one-letter state of `pid` (R, S, T for stopped, Z...), or None
    once it is gone."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0]
    except OSError:
        return None


def alive(pid):
    """Whether `pid` runs (a zombie counts as gone: it only waits to be
    reaped)."""
    return state(pid) not in (None, "Z")


def environment(pid):
    """The environment `pid` started with, as a dict ({} once it is gone)."""
    try:
        with open(f"/proc/{pid}/environ", "rb") as f:
            entries = f.read().split(b"\0")
    except OSError:
        return {}
    return dict(e.decode(errors="replace").split("=", 1)
                for e in entries if b"=" in e)


def wait_for_children(pid, timeout=60):
    """Waits until `pid` has started a child; its children."""
    deadline = time.monotonic() + timeout
    while not children(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    return children(pid)


def wait_gone(pids, within):
    """Waits up to `within` seconds for every one of `pids` to be gone;
    those still alive."""
    start = time.monotonic()
    while any(alive(p) for p in pids) and time.monotonic() - start < within:
        time.sleep(0.05)
    return [p for p in pids if alive(p)]


def command_after_dashes(words, **values):
    """The command of an argparse REMAINDER, without its leading "--", with
    each "{name}" replaced by values[name]."""
    command = words[1:] if words[:1] == ["--"] else words
    for name, value in values.items():
        command = [w.replace("{" + name + "}", str(value)) for w in command]
    return command
