#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""preload-trace-check.py - every page an unmodified program changed in a
commit was flushed before the persist that ended that commit returned.

Usage: preload-trace-check.py [--name NAME] [--unplaced-ok] TRACE [DIFFLOG]

TRACE is what libdaxtrack-preload.so wrote with DAXTRACK_PRELOAD_TRACE=TRACE
while a test program ran under it with its page diff going to the same file
(`lmdb_commits run -d TRACE`, `gdbm_commits run -d TRACE`, `tdb_commits run
-d TRACE`: both append, a line a write, so the lines are in the order
things happened):
    M begin OFF LEN  a persist of region bytes [OFF, OFF + LEN): an msync,
                     or one mapping's part of an fsync or fdatasync
    F OFF LEN        the shim's library flushed LEN bytes at region offset OFF
    D                a drain (the flushes before it are durable)
    S OFF LEN        the daemon answered an FSYNC of [OFF, OFF + LEN) during
                     the persist: it flushed and drained the dirty pages there
                     (where the persist is not in-process, and the persist
                     that reconnects after a daemon restart)
    M end RC         the persist returns RC
    C T PAGE...      (the program) transaction T was committed; the 4 KiB
                     pages of the region's file (the region starts at file
                     offset 0) whose content it changed
Commit T's window runs from the previous C line to its own.  Checked for
each commit: its window holds a persist; every changed page lies in an F
range of the window before the window's last "M end", or in an S range;
a D follows the last F before it; nothing is flushed after it; every
persist returned 0.  A commit the program ends in several persists (TDB:
fdatasync and msync after each step) is checked as a whole: what it
changed was durable when its last persist returned.

With DIFFLOG, the C lines are in that file instead, and the windows are
found by counting persists: the program must end each commit in the same
number of them (LMDB 0.9 with MDB_WRITEMAP: two msyncs, the map and then
the meta page).

--name NAME: the prefix of the printed lines, "NAME-trace-check:"
(default "preload").  A flush the shim could not place in a region ("F ?
LEN") fails the check; with --unplaced-ok, the commits whose window holds
one are counted and their pages not checked (everything else is), for a
shim whose trace is known to miss some flushes.  Prints figures and FAIL lines; exit 0 if all holds,
1 otherwise, 2 on a usage error.
"""
import sys

PAGE = 4096


def parse_trace(path, unplaced_ok):
    """The trace as a list of events (kind, a, b); raises ValueError."""
    events = []
    with open(path, encoding="ascii") as f:
        for no, line in enumerate(f, 1):
            w = line.split()
            if len(w) == 3 and w[0] == "F" and w[1] == "?" and unplaced_ok:
                events.append(("U", int(w[2], 0), 0))
            elif len(w) == 3 and w[0] == "F" and w[1] == "?":
                raise ValueError(f"{path}:{no}: a flush outside every region mapping")
            elif len(w) == 3 and w[0] == "F":
                events.append(("F", int(w[1], 0), int(w[2], 0)))
            elif len(w) >= 2 and w[0] == "C":
                events.append(("C", int(w[1]), [int(p) for p in w[2:]]))
            elif len(w) == 3 and w[0] == "S":
                events.append(("S", int(w[1], 0), int(w[2], 0)))
            elif w == ["D"]:
                events.append(("D", 0, 0))
            elif len(w) == 4 and w[:2] == ["M", "begin"]:
                events.append(("B", int(w[2], 0), int(w[3], 0)))
            elif len(w) == 3 and w[:2] == ["M", "end"]:
                events.append(("E", int(w[2], 0), 0))
            elif w:
                raise ValueError(f"{path}:{no}: unknown line {line.strip()!r}")
    return events


def parse_diff(path):
    commits = []
    with open(path, encoding="ascii") as f:
        for no, line in enumerate(f, 1):
            w = line.split()
            if not w or w[0] != "C" or len(w) < 2:
                raise ValueError(f"{path}:{no}: not a commit line {line.strip()!r}")
            commits.append((int(w[1]), [int(p) for p in w[2:]]))
    return commits


def windows(events, per_commit):
    """Split the events at every per_commit-th persist end."""
    cur, ends = [], 0
    for ev in events:
        cur.append(ev)
        if ev[0] == "E":
            ends += 1
            if ends % per_commit == 0:
                yield cur
                cur = []


def merged_windows(events):
    """(transaction, pages, window) for each C line of a merged trace."""
    cur = []
    for ev in events:
        if ev[0] == "C":
            yield ev[1], ev[2], cur
            cur = []
        else:
            cur.append(ev)


def check_window(txn, pages, win, fails, counts):
    """Check one commit; return (pages flushed, drains, persists)."""
    flushed = set()
    unplaced = False
    drained_after_last_f = True
    drains = 0
    ends = [i for i, ev in enumerate(win) if ev[0] == "E"]
    if not ends:
        fails.append(f"transaction {txn}: no persist in its window")
    elif any(ev[0] in "FDSU" for ev in win[ends[-1]:]):
        fails.append(f"transaction {txn}: a flush or drain after its last persist returned")
    for kind, a, b in win[:ends[-1] + 1 if ends else 0]:
        if kind == "F":
            flushed.update(range(a // PAGE, (a + b + PAGE - 1) // PAGE))
            drained_after_last_f = False
        elif kind == "U":
            unplaced = True
            drained_after_last_f = False
        elif kind == "D":
            drains += 1
            drained_after_last_f = True
        elif kind == "S":
            # The daemon's FSYNC: flushed and drained before its answer.
            flushed.update(range(a // PAGE, (a + b + PAGE - 1) // PAGE))
            counts["daemon"] += 1
        elif kind == "E" and a != 0:
            fails.append(f"transaction {txn}: a persist returned {a}")
    missing = [p for p in pages if p not in flushed]
    counts["unplaced"] += unplaced
    if missing and not unplaced:
        fails.append(f"transaction {txn}: pages changed but not flushed before its persist "
                     f"returned: {missing[:16]}{' ...' if len(missing) > 16 else ''}")
    if not drained_after_last_f:
        fails.append(f"transaction {txn}: no drain after the last flush before its persist "
                     "returned")
    return len(flushed), drains, len(ends)


def commit_windows(events, difflog):
    """(transaction, pages, window) of every commit; raises ValueError."""
    if difflog is None:
        if not any(e[0] == "C" for e in events):
            raise ValueError("no commit (C) line in the trace")
        return list(merged_windows(events))
    commits = parse_diff(difflog)
    ends = sum(1 for e in events if e[0] == "E")
    if not commits or not ends or ends % len(commits):
        raise ValueError(f"{ends} persists in the trace for {len(commits)} commits: "
                         "not the same number for each")
    return [(t, p, w) for (t, p), w in zip(commits, windows(events, ends // len(commits)))]


def main(argv):
    name, unplaced_ok = "preload", False
    while len(argv) > 1 and argv[1].startswith("--"):
        if argv[1] == "--unplaced-ok":
            unplaced_ok, argv = True, argv[:1] + argv[2:]
        elif argv[1] == "--name" and len(argv) > 2:
            name, argv = argv[2], argv[:1] + argv[3:]
        else:
            break
    if len(argv) not in (2, 3) or argv[1].startswith("--"):
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    me = f"{name}-trace-check"
    try:
        events = parse_trace(argv[1], unplaced_ok)
        commits = commit_windows(events, argv[2] if len(argv) == 3 else None)
    except (OSError, ValueError) as e:
        print(f"FAIL {me}: {e}")
        return 1
    fails, changed, flushed, drains, persists = [], 0, 0, 0, 0
    counts = {"daemon": 0, "unplaced": 0}
    for txn, pages, win in commits:
        nf, nd, nm = check_window(txn, pages, win, fails, counts)
        changed += len(pages)
        flushed += nf
        drains += nd
        persists += nm
    for f in fails[:20]:
        print(f"FAIL {me}: {f}")
    n = len(commits)
    print(f"{me}: {n} commits; per commit {persists / n:.1f} persists, "
          f"{changed / n:.1f} pages changed, {flushed / n:.1f} flushed, "
          f"{drains / n:.1f} drains; {counts['daemon']} persists answered by the daemon; "
          + (f"{counts['unplaced']} commits with a flush not placed (F ?), their pages "
             "not checked; " if counts["unplaced"] else "")
          + f"{len(fails)} failures")
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
