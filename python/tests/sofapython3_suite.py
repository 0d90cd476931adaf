"""Run SofaPython3's own unittest suite (a peer checkout, never copied here) against Canapé's
`Sofa`, `SofaRuntime` and `SofaTypes` packages, and check it against the expected pass list.

    python python/tests/sofapython3_suite.py PEER_DIR [--expected FILE] [--write FILE]

Each test file runs in its own process from its own folder (some import siblings), as
SofaPython3's CI does. Prints every test with its outcome and, for failures, the first line of
the reason. Exits 1 if a test of the expected list does not pass (a regression), or if the suite
cannot be found or run; tests passing beyond the list are reported as news.
"""

import argparse
import glob
import os
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

FILES = [
    "bindings/Sofa/tests/Core/*.py",
    "bindings/Sofa/tests/Simulation/*.py",
    "bindings/Sofa/tests/Helper/*.py",
    "bindings/Sofa/tests/Types/*.py",
    "bindings/SofaRuntime/tests/SofaRuntime/*.py",
    "bindings/SofaTypes/tests/pyfiles/*.py",
    "bindings/Modules/tests/*/*.py",
]
# helper modules imported by the tests, not tests themselves
NOT_TESTS = {"MyRestShapeForceField.py"}


def run_file(path, timeout):
    folder, name = os.path.split(path)
    with tempfile.TemporaryDirectory() as tmp:
        report = os.path.join(tmp, "report.xml")
        cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--junitxml", report, name]
        try:
            proc = subprocess.run(cmd, cwd=folder, capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            return [(name + "::(file)", "failed", "timed out after %d s" % timeout)]
        if not os.path.exists(report):
            tail = (proc.stdout + proc.stderr).strip().splitlines()[-1:] or ["no report"]
            return [(name + "::(file)", "failed", tail[0])]
        out = []
        for case in ET.parse(report).getroot().iter("testcase"):
            cls = case.get("classname", "").rsplit(".", 1)[-1]
            tid = "%s::%s::%s" % (name, cls, case.get("name"))
            outcome, why = "passed", ""
            for tag in ("failure", "error"):
                el = case.find(tag)
                if el is not None:
                    outcome = "failed"
                    why = (el.get("message") or "").strip().splitlines()[0][:160] if el.get("message") else tag
            if case.find("skipped") is not None:
                outcome = "skipped"
            out.append((tid, outcome, why))
        if not out:
            tail = (proc.stdout + proc.stderr).strip().splitlines()[-1:] or ["no tests"]
            out.append((name + "::(file)", "failed", tail[0]))
        return out


def main():
    p = argparse.ArgumentParser()
    p.add_argument("peer")
    p.add_argument("--expected")
    p.add_argument("--write")
    p.add_argument("--timeout", type=int, default=300)
    a = p.parse_args()
    a.peer = os.path.abspath(a.peer)
    files = []
    for pat in FILES:
        files += sorted(f for f in glob.glob(os.path.join(a.peer, pat)) if os.path.basename(f) not in NOT_TESTS)
    if not files:
        print("error: no SofaPython3 test files under %s" % a.peer)
        return 1
    results = []
    for f in files:
        results += run_file(f, a.timeout)
    passed = [t for t, o, _ in results if o == "passed"]
    for tid, outcome, why in results:
        print("%-8s %s%s" % (outcome, tid, ("  -- " + why) if why else ""))
    print("SofaPython3 suite: %d passed, %d failed, %d skipped (%d files)" % (
        len(passed), sum(o == "failed" for _, o, _ in results), sum(o == "skipped" for _, o, _ in results), len(files)))
    if a.write:
        with open(a.write, "w") as fh:
            fh.write("# SofaPython3 tests that pass against Canapé (python/tests/sofapython3_suite.py --write)\n")
            for t in sorted(passed):
                fh.write(t + "\n")
    status = 0
    if a.expected:
        with open(a.expected) as fh:
            expected = [l.strip() for l in fh if l.strip() and not l.startswith("#")]
        lost = [t for t in expected if t not in passed]
        new = [t for t in passed if t not in expected]
        for t in lost:
            print("REGRESSION: expected to pass: %s" % t)
        for t in new:
            print("news: passes and is not in the expected list: %s" % t)
        print("expected list: %d tests, %d regressions, %d new passes" % (len(expected), len(lost), len(new)))
        if lost:
            status = 1
    return status


if __name__ == "__main__":
    sys.exit(main())
