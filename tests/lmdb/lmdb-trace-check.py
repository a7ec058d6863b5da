#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""lmdb-trace-check.py - every page LMDB changed in a commit was flushed
before that commit's msync returned.

Usage: lmdb-trace-check.py TRACE DIFFLOG

TRACE is what libdaxtrack-preload.so wrote with DAXTRACK_PRELOAD_TRACE=TRACE
while `lmdb_commits run -d DIFFLOG` ran under it, one line an event:
    F OFF LEN        the shim's library flushed LEN bytes at region offset OFF
    D                a drain (the flushes before it are durable)
    M begin OFF LEN  msync(2) of the region's bytes [OFF, OFF + LEN) entered
    M end RC         that msync returns RC
DIFFLOG has one line a commit, "C T PAGE...": the 4 KiB pages of data.mdb
(the region, mapped from offset 0) whose content changed in transaction T.

A commit of LMDB in MDB_WRITEMAP mode ends in a fixed number of msyncs (two
in LMDB 0.9: the whole map, then the meta page); the trace must hold that
many for each commit line (M end count / commits, a whole number).  Commit
k's window runs from the end of commit k-1's last msync to the end of its
own last msync.  Checked for each commit: every changed page lies in an F
range of its window; a D follows the window's last F before the msync
returns; every msync returned 0.  Prints "lmdb-trace-check: ..." figures and
FAIL lines; exit 0 if all holds, 1 otherwise, 2 on a usage error.
"""
import sys

PAGE = 4096


def parse_trace(path):
    """The trace as a list of events (kind, a, b); raises ValueError."""
    events = []
    with open(path, encoding="ascii") as f:
        for no, line in enumerate(f, 1):
            w = line.split()
            if len(w) == 3 and w[0] == "F":
                events.append(("F", int(w[1], 0), int(w[2], 0)))
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
    """Split the events at every per_commit-th msync end."""
    cur, ends = [], 0
    for ev in events:
        cur.append(ev)
        if ev[0] == "E":
            ends += 1
            if ends % per_commit == 0:
                yield cur
                cur = []


def check_window(txn, pages, win, fails):
    """Check one commit; return (pages flushed, drains)."""
    flushed = set()
    drained_after_last_f = True
    drains = 0
    for kind, a, b in win:
        if kind == "F":
            flushed.update(range(a // PAGE, (a + b + PAGE - 1) // PAGE))
            drained_after_last_f = False
        elif kind == "D":
            drains += 1
            drained_after_last_f = True
        elif kind == "E" and a != 0:
            fails.append(f"transaction {txn}: an msync returned {a}")
    missing = [p for p in pages if p not in flushed]
    if missing:
        fails.append(f"transaction {txn}: pages changed but not flushed before its msync "
                     f"returned: {missing[:16]}{' ...' if len(missing) > 16 else ''}")
    if not drained_after_last_f:
        fails.append(f"transaction {txn}: no drain after the last flush before msync returned")
    return len(flushed), drains


def main(argv):
    if len(argv) != 3:
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    try:
        events = parse_trace(argv[1])
        commits = parse_diff(argv[2])
    except (OSError, ValueError) as e:
        print(f"FAIL lmdb-trace-check: {e}")
        return 1
    ends = sum(1 for e in events if e[0] == "E")
    if not commits or not ends or ends % len(commits):
        print(f"FAIL lmdb-trace-check: {ends} msyncs in the trace for {len(commits)} "
              "commits: not the same number for each")
        return 1
    per_commit = ends // len(commits)
    fails, changed, flushed, drains = [], 0, 0, 0
    for (txn, pages), win in zip(commits, windows(events, per_commit)):
        nf, nd = check_window(txn, pages, win, fails)
        changed += len(pages)
        flushed += nf
        drains += nd
    for f in fails[:20]:
        print(f"FAIL lmdb-trace-check: {f}")
    n = len(commits)
    print(f"lmdb-trace-check: {n} commits, {per_commit} msyncs each; per commit "
          f"{changed / n:.1f} pages changed, {flushed / n:.1f} flushed, "
          f"{drains / n:.1f} drains; {len(fails)} failures")
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
