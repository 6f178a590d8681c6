"""Runs a libFuzzer target (devrt-leaks', the dispatch's, the formatter's) for a bounded time
over a seed corpus.

    fuzz.py FUZZER RUNS SECONDS SEED... [--expect-crash]

New inputs go to a temporary directory, never into the seeds. With --expect-crash (the
control, run on the build with a planted bug) it passes only when the fuzzer finds a crash.
"""
import os
import shutil
import subprocess
import sys
import tempfile


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
        cmd = [fuzzer, f"-runs={runs}", f"-max_total_time={seconds}", "-max_len=65536",
               "-seed=1", f"-artifact_prefix={tmp}/", "-print_final_stats=1", corpus, seed_dir]
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=int(seconds) + 120)
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
