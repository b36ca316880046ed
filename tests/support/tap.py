"""Checks for the Python tests, printed the way tests/harness.h prints the C tests': a line
"ok - WHAT" or "not ok - WHAT" per check, then "N passed, N failed", and an exit status that
fails the test when a check failed or none ran."""
import sys

passed = failed = 0


def ok(cond, what):
    global passed, failed
    if cond:
        passed += 1
        print("ok - " + what)
    else:
        failed += 1
        print("not ok - " + what)
    sys.stdout.flush()
    return cond


def done():
    print("%d passed, %d failed" % (passed, failed))
    sys.exit(0 if failed == 0 and passed > 0 else 1)
