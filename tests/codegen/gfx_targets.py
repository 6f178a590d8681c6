"""The gfx target table (device/arch/amdgcn_targets.txt), as the codegen checks read it."""
import pathlib

TABLE = pathlib.Path(__file__).resolve().parents[2] / "device" / "arch" / "amdgcn_targets.txt"


def read(path=TABLE):
    """Each target's row: {"wave", "family", "lds", "mach", "llvm"}, in the table's order."""
    rows = {}
    for line in pathlib.Path(path).read_text().splitlines():
        if not line.startswith("gfx"):
            continue
        target, llvm, wave, family, lds, mach = line.split()
        rows[target] = {"llvm": int(llvm), "wave": int(wave), "family": family,
                        "lds": int(lds), "mach": int(mach, 16)}
    return rows


ROWS = read()
