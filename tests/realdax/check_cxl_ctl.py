#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""check_cxl_ctl.py DAXTRACKD DAXTRACKCTL - daxtrackctl's CXL view against
the kernel's, in the dax-vm with --cxl (.ci/realdax.sh runs it there).

Starts the daemon on the CXL devdax device and the NVDIMM devdax device,
then compares, from the daemon and with --local: `namespaces --json`
(backing, CXL region, memdevs of every namespace) with `ndctl list -R -N`
per bus, `namespaces --cxl --json` (memdevs, serials, hosts, regions,
decoders, interleave ways, health) with `cxl list -M -H` and `cxl list -R
-T`, the text tables and `regions -v`, and the Prometheus exposition.
Prints FAIL lines and "check_cxl_ctl: N passed, N failed"; exit 1 on a
failure.
"""
import json
import os
import signal
import subprocess
import sys
import tempfile
import time

passed = failed = 0


def check(ok, what):
    global passed, failed
    if ok:
        passed += 1
    else:
        failed += 1
        print(f"FAIL {what}")
    return ok


def as_list(v, key=None):
    """ndctl and cxl print one object alone, and nest lists of two kinds."""
    if v is None:
        return []
    if key and isinstance(v, dict) and key in v:
        v = v[key]
    return v if isinstance(v, list) else [v]


def run_json(*argv):
    out = subprocess.run(argv, capture_output=True, text=True, check=False).stdout
    return json.loads(out) if out.strip() else None


def run_text(*argv):
    r = subprocess.run(argv, capture_output=True, text=True, check=False)
    return r.returncode, r.stdout + r.stderr


def start_daemon(daxtrackd, tmp):
    conf = os.path.join(tmp, "daxtrackd.conf")
    sock = os.path.join(tmp, "sock")
    with open(conf, "w") as f:
        f.write(f'[daemon]\nsocket = {sock}\nstate_dir = {tmp}/state\n'
                f'runtime_dir = {tmp}/run\n'
                f'[region "cxldax"]\npath = {os.environ["DAX_VM_CXL_DEVDAX"]}\n'
                f'[region "nvdax"]\npath = {os.environ["DAX_VM_DEVDAX"]}\n')
    log = open(os.path.join(tmp, "daxtrackd.log"), "w")
    p = subprocess.Popen([daxtrackd, "-f", "-c", conf], stdout=log, stderr=log)
    for _ in range(1200):
        if os.path.exists(sock) or p.poll() is not None:
            break
        time.sleep(0.1)
    return p, sock


def reference():
    """What the kernel says: memdevs, CXL regions, nvdimm regions per bus."""
    memdevs = {m["memdev"]: m for m in as_list(run_json("cxl", "list", "-M", "-H"))}
    regions = {r["region"]: r for r in as_list(run_json("cxl", "list", "-R", "-T"))}
    cxl_nd = as_list(run_json("ndctl", "list", "-R", "-N", "-b", "CXL"), "regions")
    nfit_nd = as_list(run_json("ndctl", "list", "-R", "-N", "-b", "ACPI.NFIT"), "regions")
    return memdevs, regions, cxl_nd, nfit_nd


def check_memdevs(src, md, ref_memdevs, ref_regions):
    check(md and md.get("cxl") is True, f"{src}: --cxl says libcxl works")
    got = {m["memdev"]: m for m in (md or {}).get("memdevs", [])}
    check(set(got) == set(ref_memdevs), f"{src}: memdevs {sorted(got)} == {sorted(ref_memdevs)}")
    for name, ref in ref_memdevs.items():
        m = got.get(name)
        if not check(m is not None, f"{src}: {name} listed"):
            continue
        check(int(m["serial"], 16) == int(ref.get("serial", 0)), f"{src}: {name} serial")
        check(m["host"] == ref.get("host"), f"{src}: {name} host {m['host']}")
        health = ref.get("health")
        if health:
            h = m.get("health") or {}
            check(h.get("dirty_shutdowns") == health.get("dirty_shutdowns"),
                  f"{src}: {name} dirty shutdowns {h.get('dirty_shutdowns')}")
            check(h.get("temperature") == health.get("temperature"),
                  f"{src}: {name} temperature")
        else:
            check(m.get("health") is None and m.get("health_error"),
                  f"{src}: {name}: no health, and why ({m.get('health_error')})")
    for rname, r in ref_regions.items():
        for mp in r.get("mappings", []):
            m = got.get(mp["memdev"], {})
            check(m.get("region") == rname, f"{src}: {mp['memdev']} in {rname}")
            check(m.get("decoder") == mp.get("decoder"), f"{src}: {mp['memdev']} decoder")
            check(m.get("position") == mp.get("position"), f"{src}: {mp['memdev']} position")
            check(m.get("interleave_ways") == r.get("interleave_ways"),
                  f"{src}: {mp['memdev']} interleave ways")
            check(m.get("nd_region") == rname, f"{src}: {mp['memdev']} nd region {rname}")


def check_namespaces(src, ns, ref_regions, cxl_nd, nfit_nd):
    got = {n["dev"]: n for n in (ns or {}).get("namespaces", [])}
    for region in cxl_nd:
        memdevs = [mp["memdev"] for mp in ref_regions.get(region["dev"], {}).get("mappings", [])]
        for n in as_list(region.get("namespaces")):
            g = got.get(n["dev"], {})
            check(g.get("backing") == "CXL", f"{src}: {n['dev']} backing CXL ({g.get('backing')})")
            check(g.get("region") == region["dev"], f"{src}: {n['dev']} nd region")
            check(g.get("cxl_region") == region["dev"], f"{src}: {n['dev']} CXL region")
            check(g.get("memdevs") == memdevs, f"{src}: {n['dev']} memdevs {g.get('memdevs')}")
    for region in nfit_nd:
        for n in as_list(region.get("namespaces")):
            g = got.get(n["dev"], {})
            check(g.get("backing") == "NVDIMM", f"{src}: {n['dev']} backing NVDIMM")
            check(g.get("cxl_region") is None and g.get("memdevs") == [],
                  f"{src}: {n['dev']} no CXL region")


def check_text(ctl, src, base, extra, ref_memdevs):
    rc, text = run_text(ctl, *base, "namespaces", *extra)
    check(rc == 0 and " BACKING " in text and " CXL" in text, f"{src}: namespaces table")
    region, memdev = os.environ["DAX_VM_CXL_REGION"], os.environ["DAX_VM_CXL_MEMDEV"]
    check(f"{region} on {memdev}" in text, f"{src}: '{region} on {memdev}' in the table")
    rc, text = run_text(ctl, *base, "namespaces", "--cxl", *extra)
    check(rc == 0 and text.startswith("MEMDEV "), f"{src}: --cxl table")
    for name in ref_memdevs:
        check(f"\n{name} " in text, f"{src}: --cxl row {name}")


def check_daemon_only(ctl, sock, ref_memdevs):
    dx_region = os.environ["DAX_VM_CXL_DEVDAX_REGION"]
    dx_memdev = os.environ["DAX_VM_CXL_DEVDAX_MEMDEV"]
    regions = {r["name"]: r for r in as_list(run_json(ctl, "-s", sock, "--json", "regions"))}
    r = regions.get("cxldax", {})
    check(r.get("backing") == "CXL" and r.get("cxl_region") == dx_region and
          r.get("memdevs") == [dx_memdev], f"regions --json cxldax: {r.get('backing')} "
          f"{r.get('cxl_region')} {r.get('memdevs')}")
    check(regions.get("nvdax", {}).get("backing") == "NVDIMM", "regions --json nvdax NVDIMM")
    rc, text = run_text(ctl, "-s", sock, "regions", "-v")
    row = [line for line in text.splitlines() if line.startswith("cxldax ")]
    check(rc == 0 and row and f" CXL " in row[0] and f" {dx_region} " in row[0] and
          f" {dx_memdev} " in row[0], f"regions -v cxldax row {row}")
    rc, text = run_text(ctl, "-s", sock, "stats", "--prometheus")
    for name in ref_memdevs:
        check(f'daxtrack_cxl_memdev_info{{memdev="{name}"' in text, f"prometheus {name}")
    check('daxtrack_region_deep_flush_cxl_total{region="cxldax"} 0' in text,
          "prometheus deep_flush_cxl")
    rc, text = run_text(ctl, "-s", sock, "fsync", "--deep", "cxldax")
    check(rc == 0, f"fsync --deep cxldax: {text.strip()}")
    st = run_json(ctl, "-s", sock, "--json", "stats", "cxldax") or {}
    r = (st.get("regions") or [{}])[0]
    check(r.get("deep_flush_cxl") == 1 and r.get("deep_flush_pmem") == 0 and
          r.get("deep_flush_ndctl") == 0, f"stats after fsync --deep: {r.get('deep_flush_cxl')}")


def main():
    if len(sys.argv) != 3 or "DAX_VM_CXL_DEVDAX" not in os.environ:
        print("usage: check_cxl_ctl.py DAXTRACKD DAXTRACKCTL (in the dax-vm with --cxl)")
        print("check_cxl_ctl: 0 passed, 1 failed")
        return 1
    daxtrackd, ctl = sys.argv[1:]
    ref_memdevs, ref_regions, cxl_nd, nfit_nd = reference()
    print(f"cxl list: {len(ref_memdevs)} memdevs, regions {sorted(ref_regions)}; "
          f"ndctl CXL regions {[r['dev'] for r in cxl_nd]}")
    check(len(ref_memdevs) == 2 and len(cxl_nd) == 2, "the VM's two CXL devices")
    with tempfile.TemporaryDirectory() as tmp:
        p, sock = start_daemon(daxtrackd, tmp)
        try:
            if check(os.path.exists(sock), "daxtrackd started"):
                for src, base, extra in (("daemon", ["-s", sock], []),
                                         ("local", ["-s", "/nonexistent"], ["--local"])):
                    ns = run_json(ctl, *base, "--json", "namespaces", *extra)
                    md = run_json(ctl, *base, "--json", "namespaces", "--cxl", *extra)
                    check_memdevs(src, md, ref_memdevs, ref_regions)
                    check_namespaces(src, ns, ref_regions, cxl_nd, nfit_nd)
                    check_text(ctl, src, base, extra, ref_memdevs)
                check_daemon_only(ctl, sock, ref_memdevs)
        finally:
            p.send_signal(signal.SIGTERM)
            check(p.wait(timeout=120) == 0, "daxtrackd stopped cleanly")
            if failed:
                print(open(os.path.join(tmp, "daxtrackd.log")).read())
    print(f"check_cxl_ctl: {passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
