#!/usr/bin/env python3
"""Check that a shared library or executable does not depend on a library: no DT_NEEDED
entry whose name starts with one of the --needed prefixes, and no undefined dynamic symbol
whose name starts with one of the --undefined prefixes. A library opened with dlopen leaves
neither; a direct call into it that slipped through would leave an undefined symbol even
where the linker kept no DT_NEEDED for it.

    check_needed.py FILE [--needed PREFIX]... [--undefined PREFIX]...

Exits 0 when FILE has none of them, 1 naming each one it has, 2 when FILE cannot be read
as ELF. Reads the ELF file itself (32 or 64 bits, either byte order), so it needs no
binutils.
"""
import argparse
import struct
import sys

SHT_DYNSYM = 11
SHT_DYNAMIC = 6
DT_NULL = 0
DT_NEEDED = 1
SHN_UNDEF = 0


class NotElf(Exception):
    pass


def read_elf(data):
    """Returns (needed, undefined): the DT_NEEDED names and the undefined dynamic symbols."""
    if data[:4] != b"\x7fELF" or data[4] not in (1, 2) or data[5] not in (1, 2):
        raise NotElf("not an ELF file")
    wide = data[4] == 2
    order = "<" if data[5] == 1 else ">"
    if wide:
        shoff, = struct.unpack_from(order + "Q", data, 0x28)
        shentsize, shnum = struct.unpack_from(order + "HH", data, 0x3A)
        section = order + "IIQQQQIIQQ"  # name type flags addr offset size link info align entsize
        dyn, sym = order + "qQ", order + "IBBHQQ"  # symbol: name info other shndx value size
    else:
        shoff, = struct.unpack_from(order + "I", data, 0x20)
        shentsize, shnum = struct.unpack_from(order + "HH", data, 0x2E)
        section = order + "IIIIIIIIII"
        dyn, sym = order + "iI", order + "IIIBBH"  # symbol: name value size info other shndx
    if shoff == 0 or shnum == 0:
        raise NotElf("no section headers")
    sections = [struct.unpack_from(section, data, shoff + i * shentsize) for i in range(shnum)]

    def string(table, offset):
        start = sections[table][4] + offset
        return data[start:data.index(b"\0", start)].decode("utf-8", "replace")

    needed, undefined = [], []
    for _, kind, _, _, offset, size, link, _, _, entsize in sections:
        if kind == SHT_DYNAMIC:
            step = struct.calcsize(dyn)
            for at in range(offset, offset + size, entsize or step):
                tag, value = struct.unpack_from(dyn, data, at)
                if tag == DT_NULL:
                    break
                if tag == DT_NEEDED:
                    needed.append(string(link, value))
        elif kind == SHT_DYNSYM:
            step = entsize or struct.calcsize(sym)
            for at in range(offset + step, offset + size, step):  # entry 0 is the null symbol
                fields = struct.unpack_from(sym, data, at)
                shndx = fields[3] if wide else fields[5]
                if shndx == SHN_UNDEF and fields[0]:
                    undefined.append(string(link, fields[0]))
    return needed, undefined


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("file")
    parser.add_argument("--needed", action="append", default=[], metavar="PREFIX")
    parser.add_argument("--undefined", action="append", default=[], metavar="PREFIX")
    args = parser.parse_args(argv)
    try:
        with open(args.file, "rb") as f:
            needed, undefined = read_elf(f.read())
    except (OSError, NotElf, struct.error, ValueError, IndexError) as e:
        print(f"{args.file}: cannot read it as ELF: {e}", file=sys.stderr)
        return 2
    found = [f"{args.file} needs {name}" for name in needed
             if any(name.startswith(p) for p in args.needed)]
    found += [f"{args.file} leaves {name} undefined" for name in undefined
              if any(name.startswith(p) for p in args.undefined)]
    for line in found:
        print(line)
    if not found:
        print(f"{args.file}: no dependency on {', '.join(args.needed + args.undefined) or '-'}")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
