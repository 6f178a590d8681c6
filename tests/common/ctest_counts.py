#!/usr/bin/env python3
"""Prints the counts of a CTest JUnit report (ctest --output-junit): tests passed, failed and
skipped, as CTest's own summary counts them.

The report's own totals do not: it counts as skipped the tests that CTest counts as failed
because they could not run (a fixture that failed, a missing program), so each test case
is counted from its status here.
"""
import sys
import xml.etree.ElementTree as ElementTree


def counts(path):
    passed = failed = skipped = 0
    for case in ElementTree.parse(path).getroot().iter("testcase"):
        status = case.get("status")
        reason = case.find("skipped")
        if status == "run":
            passed += 1
        elif status == "disabled" or (
            status == "notrun"
            and reason is not None
            and reason.get("message", "").startswith("SKIP_")
        ):
            skipped += 1
        else:
            failed += 1
    return passed, failed, skipped


def main():
    if len(sys.argv) != 2:
        print("usage: ctest_counts.py JUNIT.xml", file=sys.stderr)
        return 2
    try:
        print(*counts(sys.argv[1]))
    except (OSError, ElementTree.ParseError) as error:
        print(f"ctest_counts.py: {sys.argv[1]}: {error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
