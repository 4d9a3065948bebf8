#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Run rdma-core's pyverbs test modules; print one line per test.

    rdma_core_run.py TESTS_DIR DEV MODULE...

Lines on stdout: "PASS|test.id", "FAIL|test.id|last line of the error",
"SKIP|test.id|reason". Tracebacks go to stderr. Must run under
/usr/bin/python3 (the interpreter python3-pyverbs is built for).
"""
import os
import sys
import unittest
from importlib.machinery import SourceFileLoader


def flatten(suite):
    for t in suite:
        if isinstance(t, unittest.TestSuite):
            yield from flatten(t)
        else:
            yield t


def last_line(err):
    lines = [l for l in err.strip().splitlines() if l.strip()]
    return lines[-1].strip() if lines else "?"


def main():
    tests_dir, dev, mods = sys.argv[1], sys.argv[2], sys.argv[3:]
    sys.path.insert(0, tests_dir)
    sys.argv = [os.path.join(tests_dir, "run_tests.py"), "--dev", dev]
    from args_parser import parser
    parser.parse_args()
    SourceFileLoader("tests", os.path.join(tests_dir, "__init__.py")).load_module()

    suite = unittest.TestLoader().loadTestsFromNames(["tests." + m for m in mods])
    ids = [t.id() for t in flatten(suite)]
    result = unittest.TextTestRunner(stream=sys.stderr, verbosity=2).run(suite)

    status = {}
    for test, err in result.failures + result.errors:
        status[test.id()] = "FAIL|" + test.id() + "|" + last_line(err)
    for test, reason in result.skipped:
        status[test.id()] = "SKIP|" + test.id() + "|" + " ".join(reason.split())
    for test in result.unexpectedSuccesses:
        status[test.id()] = "FAIL|" + test.id() + "|unexpected success"
    for i in ids:
        print(status.get(i, "PASS|" + i))
    # Setup errors (setUpClass/module) have ids outside the list.
    for sid, line in status.items():
        if sid not in ids:
            print(line)
    sys.stdout.flush()


if __name__ == "__main__":
    main()
