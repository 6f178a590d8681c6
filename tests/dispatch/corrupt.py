#!/usr/bin/env python3
"""corrupt.py IN OUT OLD NEW: a copy of IN with every OLD replaced by NEW, the same length,
so the file stays a well-formed ELF and only the metadata note's contents change. Fails
(exit 2) when OLD does not occur: the corruption must not silently become a no-op."""
import sys

src, dst, old, new = sys.argv[1], sys.argv[2], sys.argv[3].encode(), sys.argv[4].encode()
if len(old) != len(new):
    sys.exit("corrupt.py: OLD and NEW must be of one length")
data = open(src, "rb").read()
if old not in data:
    sys.exit(f"corrupt.py: {src} has no {old!r}")
open(dst, "wb").write(data.replace(old, new))
