"""Runs a libFuzzer target (devrt-leaks', the dispatch's, the formatter's) over a seed
corpus, for RUNS inputs or SECONDS, whichever comes first.

    fuzz.py FUZZER RUNS SECONDS SEED... [--expect-crash]

New inputs go to a temporary directory, never into the seeds. With --expect-crash (the
control, run on the build with a planted bug) it passes only when the fuzzer finds a crash.
A control is bounded by RUNS alone: with one seed and one job the inputs come in the same
order on every machine, so whether the bug is found does not depend on the machine's speed.
SECONDS is then only a failsafe, whose expiry says that the condition was not reached (exit
3) rather than that the fuzzer found nothing.
"""
import os
import shutil
import subprocess
import sys
import tempfile

# A control's bound on its wall time: its runs take 1 to 2 s here; under the CTest
# timeouts of its tests (120 s and more).
FAILSAFE_SECONDS = 100


def main():
    args = sys.argv[1:]
    expect_crash = "--expect-crash" in args
    args = [a for a in args if a != "--expect-crash"]
    fuzzer, runs, seconds, seeds = args[0], args[1], args[2], args[3:]
    with tempfile.TemporaryDirectory() as tmp:
        corpus, seed_dir = os.path.join(tmp, "corpus"), os.path.join(tmp, "seeds")
        os.mkdir(corpus)
        os.mkdir(seed_dir)
        for s in seeds:
            shutil.copy(s, seed_dir)
        total = 0 if expect_crash else seconds
        cmd = [fuzzer, f"-runs={runs}", f"-max_total_time={total}", "-max_len=65536",
               "-seed=1", f"-artifact_prefix={tmp}/", "-print_final_stats=1", corpus, seed_dir]
        failsafe = FAILSAFE_SECONDS if expect_crash else int(seconds) + 120
        try:
            p = subprocess.run(cmd, capture_output=True, text=True, timeout=failsafe)
        except subprocess.TimeoutExpired:
            print(f"could not reach the condition: {runs} runs did not end within the "
                  f"failsafe's {failsafe} s")
            return 3
        log = p.stderr
        crashed = "ERROR: libFuzzer" in log or "ERROR: AddressSanitizer" in log or \
            "runtime error" in log or "deadly signal" in log
        print("\n".join(log.splitlines()[-15:]))
        if expect_crash:
            ok = p.returncode != 0 and crashed
            print(("ok" if ok else "FAILED") + ": control: the fuzzer finds the planted bug")
        else:
            ok = p.returncode == 0 and not crashed and "Done" in log
            print(("ok" if ok else "FAILED") + ": no crash, leak or sanitizer error")
        return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
