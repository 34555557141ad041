"""Inner-loop analysis of llvm-objdump output for scripts/arm-codegen-report. Finds each kernel's
function body in an object file by its demangled name, its innermost loops (backward branches with
no loop nested inside), and counts what they execute."""
import re, subprocess, sys

# (report name, demangled-name fragment, kernel copies that must have it, whether its hot loop must
# hold SDOT, what that loop does). Copies: "portable" = FaceKernels.o (every aarch64 core),
# "dotprod" = FaceKernelsDotProd.o (FEAT_DotProd).
KERNELS = [
    ("convPointwise",   ".TiledConvolution.convPointwise(",        ("portable", "dotprod"), False,
     "1x1 layers by block passes: SMLAL by element, int16 x int16 (widened int8) weights"),
    ("conv",            ".TiledConvolution.conv(",                 ("portable", "dotprod"), False,
     "the general tile loop: 4 pixels x 16 channels, SMLAL by element"),
    ("convBytesSmull",  ".TiledConvolution.convBytesSmullTile4x4(", ("portable",), False,
     "int8 x int8 layers without the dot product: SMULL/SMLAL2 then SADALP"),
    ("planesInt8",      ".TiledConvolution.conv2dPlanesDotInt8Tile4x8(", ("dotprod",), True,
     "int16 inputs as two byte planes x int8 weights: two SDOT per group"),
    ("planesInt16",     ".TiledConvolution.conv2dPlanesDotInt16Tile4x8(", ("dotprod",), True,
     "int16 inputs as two byte planes x int16 weights as two byte planes: four SDOT per group"),
    ("planesBytes",     ".TiledConvolution.conv2dPlanesDotBytesTile4x8(", ("dotprod",), True,
     "int8 inputs x int8 weights: one SDOT per group"),
    ("pairLayout",      ".TiledConvolution.conv1x1Int16Tile4px16(", ("portable", "dotprod"), False,
     "1x1 layers whose int16 weights reach past 32639: SMLAL over pairs"),
    ("depthwise",       ".TiledConvolution.depthwiseInterior2px(",  ("portable", "dotprod"), False,
     "3x3 depthwise, two pixels per step: SMLAL per tap"),
    ("depthwiseDot",    ".TiledConvolution.depthwise3x3Dot(",      ("dotprod",), True,
     "3x3 depthwise at stride 1 over byte weights: 4 channels' kernel row per SDOT, gathered by TBL for two output rows"),
    ("addPReLU",        "addPReLUNEON",                             ("portable", "dotprod"), False,
     "residual ADD then PRELU: SMULL/SMLAL products, narrowed by SQRSHRN or SRSHL + SQXTN (one loop per form)"),
    ("maxPool",         ".QuantizedKernels.maxPool(",               ("portable", "dotprod"), False,
     "max over the window"),
]

DOT = ("sdot", "udot", "usdot", "sudot")

def objdump(obj):
    """Disassembly of `obj`, decoding the dot-product instructions wherever they are (a build for
    a core without them must not hold any, and this is how that is seen)."""
    text = subprocess.run(["llvm-objdump-15", "-d", "--no-show-raw-insn", "--mattr=+dotprod", obj], capture_output=True, text=True, check=True).stdout
    # A function at the same address as an ARM mapping symbol ($x, $d) is printed under the
    # mapping symbol's name: put the function's name back.
    names = {}
    for l in subprocess.run(["llvm-nm-15", "--defined-only", obj], capture_output=True, text=True, check=True).stdout.split("\n"):
        f = l.split(" ", 2)
        if len(f) == 3 and f[1] in "TtWw" and not re.match(r"\$[xd](\.|$)", f[2]) and (f[1] in "Tt" or f[0] not in names): names[f[0]] = f[2]
    return re.sub(r"^([0-9a-f]{16}) <\$[xd][^>]*>:", lambda m: "%s <%s>:" % (m.group(1), names.get(m.group(1), "$x")), text, flags=re.M)

def functions(text):
    out = {}
    for chunk in re.split(r"\n(?=[0-9a-f]{16} <)", text):
        m = re.match(r"([0-9a-f]{16}) <(.*)>:", chunk)
        if not m: continue
        ins = []
        for l in chunk.split("\n")[1:]:
            mm = re.match(r"\s*([0-9a-f]+):\s+(\S+)\s*(.*)", l)
            if mm: ins.append((int(mm.group(1), 16), mm.group(2), re.sub(r"\s*<.*>", "", mm.group(3)).strip()))
        out[m.group(2)] = ins
    return out

def demangled(funcs):
    """Mangled name -> demangled name, in one `swift demangle` run."""
    keys = list(funcs)
    out = subprocess.run(["swift", "demangle", "--compact"], input="\n".join(keys) + "\n", capture_output=True, text=True, check=True).stdout
    return dict(zip(keys, out.split("\n")))

def kernel_body(funcs, names, frag):
    """The largest function whose demangled name contains `frag` (the specialized body, not a thunk)."""
    cands = [(len(v), k) for k, v in funcs.items() if frag in names.get(k, k)]
    return funcs[max(cands)[1]] if cands else None

BRANCH = re.compile(r"^(b\.\w+|b|cbz|cbnz|tbz|tbnz)$")

def innermost_loops(ins):
    idx = {a: i for i, (a, _, _) in enumerate(ins)}
    loops = []
    for i, (a, op, args) in enumerate(ins):
        if BRANCH.match(op):
            m = re.search(r"0x([0-9a-f]+)\s*$", args)
            if m and int(m.group(1), 16) <= a and int(m.group(1), 16) in idx:
                loops.append((idx[int(m.group(1), 16)], i))
    inner = [(s, e) for (s, e) in loops if not any((s2, e2) != (s, e) and s <= s2 and e2 <= e for (s2, e2) in loops)]
    return [ins[s:e + 1] for s, e in sorted(set(inner))]

def lanes(args):
    """Destination arrangement of a vector instruction: (lanes, bits)."""
    m = re.match(r"v\d+\.(\d+)([bhsd])", args)
    if not m: return None
    return int(m.group(1)), {"b": 8, "h": 16, "s": 32, "d": 64}[m.group(2)]

def stats(body):
    c = dict(instrs=len(body), sdot=0, smlal=0, smull=0, sadalp=0, mla=0, vmul=0, qdmulh=0, madd=0, loads=0, stores=0, macs=0, vector=False)
    for _, op, args in body:
        vec = re.match(r"\s*v\d+\.", args) is not None
        c["vector"] |= vec or bool(re.match(r"q\d+", args))
        ln = lanes(args)
        if op in DOT:
            c["sdot"] += 1; c["macs"] += (ln[0] if ln else 4) * 4
        elif op in ("smlal", "smlal2", "smlsl", "smlsl2"):
            c["smlal"] += 1; c["macs"] += ln[0] if ln else 4
        elif op in ("smull", "smull2"):
            c["smull"] += 1; c["macs"] += ln[0] if ln else 4
        elif op == "sadalp":
            c["sadalp"] += 1
        elif op in ("sqdmulh", "sqrdmulh"):
            c["qdmulh"] += 1
        elif op in ("mla", "mls"):
            c["mla"] += 1; c["macs"] += ln[0] if ln else 4
        elif op == "mul" and vec:
            c["vmul"] += 1; c["macs"] += ln[0] if ln else 4
        elif op in ("madd", "msub", "smaddl", "smsubl", "mul") and not vec:
            c["madd"] += 1; c["macs"] += 1
        if op.startswith(("ldr", "ldp", "ldur", "ld1", "ld2", "ld3", "ld4")):
            c["loads"] += 2 if op.startswith("ldp") else 1
        if op.startswith(("str", "stp", "stur", "st1")): c["stores"] += 2 if op.startswith("stp") else 1
    return c

def vector_loops(ins):
    """The innermost loops that use vector registers, with their `stats`."""
    return [(s, b) for s, b in ((stats(b), b) for b in innermost_loops(ins)) if s["vector"]]

def hot_loop(loops):
    """Of `vector_loops`, the one with the most multiply-adds per iteration; where none
    multiplies-adds, the longest."""
    return max(loops, key=lambda x: (x[0]["macs"], x[0]["instrs"])) if loops else None

def asm_text(body):
    """The loop body, one instruction a line (branches dropped)."""
    return "\n".join(f"{op} {args}".strip() for _, op, args in body if not BRANCH.match(op)) + "\n"
