"""The RPC client's memory model, read from the code each gfx target gets.

The device and its host server share mailboxes and buffers in host memory. What makes the
protocol work on a GPU is what LLVM's AMDGPU back end emits for system-scope atomics and
fences: the cache-control bits on the accesses and the cache writebacks and invalidates
around them. Those are documented per ISA family in AMDGPUUsage ("Memory Model", one
section and one "AMDHSA Memory Model Code Sequences" table per family); FAMILIES below holds,
for each, what the table prescribes for the operations the client uses, as LLVM 19 spells
them in its disassembly.

The steps are read from tests/codegen/kernels/rpc_steps.c, one kernel per step, built from
the device's own inline steps; the library's composed paths (an echo round trip, an
allocation that may grow the heap) are read for what holds of every path: no plain load
of host memory in a poll loop, and writebacks only where a release needs them.
"""
import re

import gfx_targets

# What a system-scope access needs, per ISA family. `poll`: the bits on a relaxed atomic
# load; `acquire`: the instructions of an acquire fence after it, in order; `writeback`: the
# instruction of a release that writes dirty cache lines back to memory (None: the family
# has none, its caches are written through); `wait`: the wait of a release for earlier
# stores; `store`: the bits on an atomic store.
FAMILIES = {
    "gfx9": {
        "table": "Memory Model GFX6-GFX9, table AMDHSA Memory Model Code Sequences GFX6-GFX9",
        "poll": ("glc",), "acquire": ("buffer_wbinvl1_vol",), "writeback": None,
        "wait": r"s_waitcnt\b.*\bvmcnt\(0\)", "store": (),
        # The table gives agent and system scope one sequence: host memory is coherent
        # because its pages are mapped uncached (MTYPE UC), not because of the code.
        "agent_differs": False,
    },
    "gfx90a": {
        "table": "Memory Model GFX90A, table AMDHSA Memory Model Code Sequences GFX90A",
        "poll": ("glc",), "acquire": ("buffer_invl2", "buffer_wbinvl1_vol"),
        "writeback": r"buffer_wbl2\b", "wait": r"s_waitcnt\b.*\bvmcnt\(0\)", "store": (),
        "agent_differs": True,
    },
    "gfx942": {
        # gfx950 and gfx9-4-generic follow the same table (LLVM 20 and later).
        "table": "Memory Model GFX942, table AMDHSA Memory Model Code Sequences GFX940, GFX941, "
                 "GFX942",
        "poll": ("sc0", "sc1"), "acquire": ("buffer_inv sc0 sc1",),
        "writeback": r"buffer_wbl2 sc0 sc1\b", "wait": r"s_waitcnt\b.*\bvmcnt\(0\)",
        "store": ("sc0", "sc1"), "agent_differs": True,
    },
    "gfx10/11": {
        "table": "Memory Model GFX10-GFX11, table AMDHSA Memory Model Code Sequences "
                 "GFX10-GFX11",
        # glc (and dlc on GFX10): the load misses the GL0 and GL1 caches.
        "poll": ("glc",), "acquire": ("buffer_gl1_inv", "buffer_gl0_inv"), "writeback": None,
        "wait": r"s_waitcnt_vscnt null, 0x0\b", "store": (), "agent_differs": False,
    },
    "gfx12": {
        "table": "Memory Model GFX12, table AMDHSA Memory Model Code Sequences GFX12",
        "poll": ("scope:SCOPE_SYS",), "acquire": ("global_inv scope:SCOPE_SYS",),
        "writeback": r"global_wb scope:SCOPE_SYS\b", "wait": r"s_wait_storecnt(_dscnt)? 0x0\b",
        "store": ("scope:SCOPE_SYS",), "agent_differs": True,
    },
}

# Each family's targets, from the table (device/arch/amdgcn_targets.txt).
for _family in FAMILIES.values():
    _family["targets"] = ()
for _target, _row in gfx_targets.ROWS.items():
    FAMILIES[_row["family"]]["targets"] += (_target,)

# Any cache-control bit: an access that carries none is a plain one.
COHERENCE_BITS = ("glc", "dlc", "sc0", "sc1", "nt", "scope:SCOPE_SYS", "scope:SCOPE_DEV",
                  "scope:SCOPE_SE")


def family_of(cpu):
    for name, family in FAMILIES.items():
        if cpu in family["targets"]:
            return name, family
    raise KeyError(cpu)


class Instruction:
    def __init__(self, address, text, target):
        self.address, self.text, self.target = address, text, target
        self.words = text.replace(",", " ").split()
        self.mnemonic = self.words[0]

    def has(self, bits):
        return all(b in self.words for b in bits)

    @property
    def vector_load(self):
        return re.match(r"(global|flat|buffer)_load_", self.mnemonic) is not None

    @property
    def vector_store(self):
        return re.match(r"(global|flat|buffer)_store_", self.mnemonic) is not None

    @property
    def scalar_load(self):
        return self.mnemonic.startswith("s_load_") or self.mnemonic.startswith("s_buffer_load")

    def __str__(self):
        return f"{self.address:#x}: {self.text}"


def functions(tc, code_object, cpu):
    """{function name: [Instruction]} from the disassembly; branch targets as addresses."""
    text = tc.run(tc.tool("llvm-objdump"), "-d", f"--mcpu={cpu}", code_object)
    result, current = {}, None
    for line in text.splitlines():
        head = re.match(r"^([0-9a-fA-F]+) <([^>]+)>:", line)
        if head:
            current = result.setdefault(head.group(2), [])
            base = int(head.group(1), 16)
            continue
        m = re.match(r"^\t(\S[^/]*?)\s*//\s*([0-9A-Fa-f]+):[^<]*(?:<([^+>]+)(?:\+0x([0-9a-f]+))?>)?",
                     line)
        if current is None or not m or m.group(1).startswith(("s_code_end", "s_nop")):
            continue
        target = None
        if m.group(3):
            target = base + int(m.group(4) or "0", 16)
        current.append(Instruction(int(m.group(2), 16), m.group(1), target))
    return result


def loops(code):
    """(first, last) indexes of each loop: a branch back to an earlier instruction."""
    index = {ins.address: i for i, ins in enumerate(code)}
    return [(index[ins.target], i) for i, ins in enumerate(code)
            if ins.target is not None and ins.target <= ins.address and ins.target in index]


def sleep_loops(code):
    """The poll loops: the innermost loops that sleep (a loop around one, such as a
    streamed send's, also reads what the poll that ended acquired)."""
    sleeping = [(a, b) for a, b in loops(code)
                if any(code[i].mnemonic == "s_sleep" for i in range(a, b + 1))]
    return [(a, b) for a, b in sleeping
            if not any((c, d) != (a, b) and a <= c and d <= b for c, d in sleeping)]


def count(code, pattern):
    return sum(1 for ins in code if pattern and re.match(pattern, ins.text))


def the_poll(step, code):
    """(first, last, loads) of a step's one poll loop, or a failure."""
    polls = sleep_loops(code)
    if len(polls) != 1:
        return f"{step}: {len(polls)} poll loops, expected 1"
    first, last = polls[0]
    loads = [code[i] for i in range(first, last + 1) if code[i].vector_load]
    if not loads:
        return f"{step}: the poll loop loads nothing from memory"
    return first, last, loads


def polled_without_bits(step, code, family, what):
    """Every load up to the poll loop's end (the looped ones and any copy peeled before the
    loop) has the poll's bits, or a failure naming the first that lacks them."""
    for ins in code:
        if ins.vector_load and not ins.has(family["poll"]):
            return (f"{step}: the poll {ins} lacks {' '.join(family['poll'])}: it may read "
                    f"a cached {what} forever")
    return None


def missing_acquire(texts, family):
    """The first of the family's acquire instructions not found, in order, in texts."""
    at = 0
    for needed in family["acquire"]:
        while at < len(texts) and not texts[at].startswith(needed):
            at += 1
        if at == len(texts):
            return needed
        at += 1
    return None


def check_reply(code, family):
    """The poll of a reply slot: both halves loaded in the loop with the poll's bits (the
    reply is read by the poll itself), and the acquire after the loop."""
    poll = the_poll("step_reply", code)
    if isinstance(poll, str):
        return poll
    first, last, in_loop = poll
    halves = sum(2 if re.search(r"_(dwordx4|b128)$", ins.mnemonic) else 1 for ins in in_loop)
    if halves < 2:
        return f"step_reply: the poll loop loads {halves} of the slot's two halves"
    failure = polled_without_bits("step_reply", code[:last + 1], family, "reply slot")
    if failure:
        return failure
    needed = missing_acquire([ins.text for ins in code[last + 1:]], family)
    if needed:
        return (f"step_reply: no `{needed}` after the poll loop: the port's next use may pass "
                "the server's last write")
    print(f"  reply: {'; '.join(ins.text for ins in in_loop)}; acquire: "
          f"{'; '.join(family['acquire'])}")
    return None


def check_hand_back(code, family):
    """The poll for the inbox's hand-back, the acquire after it, reading a reply packet."""
    poll = the_poll("step_hand_back", code)
    if isinstance(poll, str):
        return poll
    first, last, in_loop = poll
    after = code[last + 1:]
    reply = next((i for i, ins in enumerate(after) if ins.vector_load), None)
    if reply is None:
        return "step_hand_back: no load of the reply after the poll loop"
    needed = missing_acquire([ins.text for ins in after[:reply]], family)
    if needed:
        return (f"step_hand_back: no `{needed}` between the poll loop and the reply's load "
                f"({after[reply]}): the reply may be read from a stale cache line")
    failure = polled_without_bits("step_hand_back", code[:last + 1], family, "mailbox")
    if failure:
        return failure
    print(f"  hand-back: {in_loop[0].text}; acquire: {'; '.join(family['acquire'])}; "
          f"reply: {after[reply].text}")
    return None


def check_hand_over(code, family, writebacks_per_post):
    """The send, then the outbox flip: the release orders every store of the send before it."""
    stores = [i for i, ins in enumerate(code) if ins.vector_store]
    if len(stores) < 2:
        return f"step_hand_over: {len(stores)} stores, expected the send's and the flip"
    flip, send = stores[-1], stores[-2]
    if not code[flip].has(family["store"]):
        return f"step_hand_over: the flip {code[flip]} lacks {' '.join(family['store'])}"
    between = code[send + 1:flip]
    if not any(re.match(family["wait"], ins.text) for ins in between):
        return (f"step_hand_over: no release wait between the send ({code[send]}) and the "
                f"flip ({code[flip]})")
    if family["writeback"]:
        if not any(re.match(family["writeback"], ins.text) for ins in between):
            return (f"step_hand_over: no writeback between the send ({code[send]}) and the "
                    f"flip ({code[flip]}): the server may read stale packets")
        # One release per post, on the flip: each writeback on gfx90a and gfx942 writes
        # back every dirty line of the L2, so a post pays for one only.
        found = count(code, family["writeback"])
        writebacks_per_post["hand_over"] = found
        if found != 1:
            return f"step_hand_over: {found} writebacks, expected 1 (the flip's release)"
    print(f"  send: {code[send].text}; release: "
          f"{'; '.join(ins.text for ins in between if ins.mnemonic.startswith(('s_wait', 'buffer', 'global_wb')))}"
          f"; flip: {code[flip].text}")
    return None


def check_doorbell(code, family, writebacks_per_post):
    """The doorbell: the signal's stores at system scope."""
    stores = [ins for ins in code if ins.vector_store]
    if not stores:
        return "step_doorbell: no store"
    for ins in stores:
        if not ins.has(family["store"]):
            return f"step_doorbell: the store {ins} lacks {' '.join(family['store'])}"
    # The interrupt follows the stores it announces: a release wait between the last
    # store and s_sendmsg, which waits for nothing itself.
    last_store = max(i for i, ins in enumerate(code) if ins.vector_store)
    send = next((i for i, ins in enumerate(code) if ins.mnemonic == "s_sendmsg"
                 and "MSG_INTERRUPT" in ins.text), None)
    if send is None or send < last_store:
        return "step_doorbell: no s_sendmsg(MSG_INTERRUPT) after the doorbell's stores"
    if not any(re.match(family["wait"], ins.text) for ins in code[last_store + 1:send]):
        return (f"step_doorbell: {code[send]} may overtake the store {code[last_store]}: no "
                "release wait between them")
    if family["writeback"]:
        # The doorbell's stores follow the flip's release relaxed: no writeback of their own.
        last_store = max(i for i, ins in enumerate(code) if ins.vector_store)
        early = [ins for ins in code[:last_store] if re.match(family["writeback"], ins.text)]
        if early:
            return (f"step_doorbell: {len(early)} writebacks before its stores ({early[0]}); "
                    "the flip's release is the post's only one")
        # The release before the interrupt writes back too: a ring pays a second one.
        writebacks_per_post["doorbell"] = count(code, family["writeback"])
        if writebacks_per_post["doorbell"] > 1:
            return (f"step_doorbell: {writebacks_per_post['doorbell']} writebacks, expected "
                    "at most 1 (the release before the interrupt)")
    print(f"  doorbell: {'; '.join(ins.text for ins in stores)}")
    return None


def check_post(code, family):
    """The flip, then the doorbell's read of the server's sleeping flag: a store then a load
    of other words, which only the wait for the store between them keeps in order (the
    Dekker pattern with the server's store of the flag and its rescan of the outboxes). The
    interrupt's stores come after that read, under its branch."""
    stores = [i for i, ins in enumerate(code) if ins.vector_store]
    flip = next((i for i in stores if i > 0 and any(
        re.match(family["wait"], ins.text) for ins in code[stores[stores.index(i) - 1] + 1:i])),
        None) if len(stores) >= 2 else None
    if flip is None:
        return "step_post: no flip (a store after a release wait)"
    flag = next((i for i in range(flip + 1, len(code)) if code[i].vector_load), None)
    if flag is None:
        return ("step_post: the doorbell does not read whether the server sleeps: it rings "
                "(an interrupt) on every post")
    if not code[flag].has(family["poll"]):
        return f"step_post: the read of the sleeping flag {code[flag]} lacks {' '.join(family['poll'])}"
    if not any(re.match(family["wait"], ins.text) for ins in code[flip + 1:flag]):
        return (f"step_post: the read of the sleeping flag {code[flag]} may pass the flip "
                f"{code[flip]}: no wait for the store between them")
    # The ready ring's announcement (devrt_rpc_announce) comes between them: one store, after
    # the add that takes its position.
    between = [i for i in stores if flip < i < flag]
    adds = [i for i in range(flip + 1, flag) if "atomic_add" in code[i].mnemonic]
    if len(between) > 1 or (between and not (adds and adds[0] < between[0])):
        return (f"step_post: stores between the flip and the read of the sleeping flag that "
                f"are not the ready ring's announcement: {[code[i].text for i in between]}")
    rings = [i for i in stores if i > flag] + [
        i for i, ins in enumerate(code) if ins.mnemonic == "s_sendmsg" and "MSG_INTERRUPT" in ins.text]
    if any(i < flag for i in rings):
        return "step_post: the doorbell rings before it reads whether the server sleeps"
    print(f"  post: flip {code[flip].text}; sleeping flag {code[flag].text}; "
          f"{len(rings)} ring instructions after it")
    return None


def check_composed(name, code, family):
    """What holds of every path of the library: no plain load in a poll loop."""
    for first, last in sleep_loops(code):
        for ins in code[first:last + 1]:
            if ins.vector_load and not any(b in ins.words for b in COHERENCE_BITS):
                return (f"{name}: a plain load sits in the poll loop at {code[first].address:#x}: "
                        f"{ins}")
    wb = count(code, family["writeback"]) if family["writeback"] else 0
    print(f"  {name}: {len(sleep_loops(code))} poll loops, no plain load in them; "
          f"{wb} writebacks")
    return None


def ir_scopes(ir_text):
    """Atomics and fences of the step kernels' IR that are not at system scope, but the
    ready ring's position counter: an add in device memory, which only the GPU's waves
    share, at agent scope (devrt_rpc_announce)."""
    return [line.strip() for line in ir_text.splitlines()
            if re.search(r"\b(load atomic|store atomic|fence|atomicrmw|cmpxchg)\b", line)
            and "syncscope(" in line and 'syncscope("one-as")' not in line
            and not re.search(r'atomicrmw add .* syncscope\("agent(-one-as)?"\) monotonic', line)]
