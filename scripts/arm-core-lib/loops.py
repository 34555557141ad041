"""Inner-loop analysis of llvm-objdump output for scripts/arm-codegen-report and
scripts/arm-cost-projection. Finds each kernel's function body in FaceKernels.o, its
innermost loops (backward branches with no loop nested inside), and counts what they execute."""
import re, subprocess, sys

KERNELS = [  # (report name, mangled-name fragment, what the hot loop does)
    ("conv2d",          "QuantizedKernelsO6conv2d_",          "acc[co] += x[ci..ci+3]*w[ci..ci+3][co] (4 input channels, a row of output channels)"),
    ("conv2dSplit",     "QuantizedKernelsO11conv2dSplit_",    "conv2d plus a residual int8 weight plane"),
    ("depthwise",       "QuantizedKernelsO9depthwise_",       "acc[c] += x[c]*w[c] per tap"),
    ("depthwiseSplit",  "QuantizedKernelsO14depthwiseSplit_", "depthwise plus a residual int8 weight plane"),
    ("binary(add)",     "QuantizedKernelsO6binaryy",          "(a*m0 + b*m1 + round) >> s, clamp (residual adds)"),
    ("maxPool",         "QuantizedKernelsO7maxPool_",         "max over the window"),
]

def objdump(obj, cpu):
    tool = "llvm-objdump-15"
    attr = ["--mattr=+dotprod"] if cpu == "cortex-a76" else []
    text = subprocess.run([tool, "-d", "--no-show-raw-insn"] + attr + [obj], capture_output=True, text=True, check=True).stdout
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

def kernel_body(funcs, frag):
    """The largest function whose name contains `frag` (the real body, not a thunk)."""
    cands = [(len(v), k) for k, v in funcs.items() if frag in k]
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
    c = dict(instrs=len(body), sdot=0, smlal=0, smull=0, sadalp=0, mla=0, vmul=0, madd=0, loads=0, vloads=0, stores=0, macs=0, vector=False)
    for _, op, args in body:
        vec = "v" in args.split(",")[0] and re.match(r"\s*v\d+\.", args) is not None
        c["vector"] |= vec or bool(re.match(r"q\d+", args))
        ln = lanes(args)
        if op == "sdot" or op == "udot":
            c["sdot"] += 1; c["macs"] += (ln[0] if ln else 4) * 4
        elif op in ("smlal", "smlal2", "smlsl", "smlsl2"):
            c["smlal"] += 1; c["macs"] += ln[0] if ln else 4
        elif op in ("smull", "smull2"):
            c["smull"] += 1; c["macs"] += ln[0] if ln else 4
        elif op in ("sadalp",):
            c["sadalp"] += 1
        elif op in ("mla", "mls"):
            c["mla"] += 1; c["macs"] += ln[0] if ln else 4
        elif op == "mul" and vec:
            c["vmul"] += 1; c["macs"] += ln[0] if ln else 4
        elif op in ("madd", "msub", "smaddl", "smsubl", "mul", "smull", "smulh") and not vec:
            if op != "smulh": c["madd"] += 1; c["macs"] += 1
        if op.startswith(("ldr", "ldp", "ldur", "ld1", "ld2", "ld3", "ld4")):
            n = 2 if op.startswith("ldp") else 1
            c["loads"] += n
            if re.match(r"\s*(q\d+|\{)", args): c["vloads"] += n
        if op.startswith(("str", "stp", "stur", "st1")): c["stores"] += 2 if op.startswith("stp") else 1
    return c

def mac_loops(ins):
    """Innermost loops that multiply, most MACs per iteration first."""
    ls = [(stats(b), b) for b in innermost_loops(ins)]
    ls = [(s, b) for s, b in ls if s["macs"] > 0]
    ls.sort(key=lambda x: (-(x[0]["macs"] if x[0]["vector"] else 0), -x[0]["macs"]))
    return ls

def asm_text(body):
    """The loop body as assembler input for llvm-mca (branch targets dropped: one iteration)."""
    lines = []
    for _, op, args in body:
        if BRANCH.match(op): continue
        lines.append(f"{op} {args}".strip())
    return "\n".join(lines) + "\n"

if __name__ == "__main__":
    obj, cpu = sys.argv[1], sys.argv[2]
    f = functions(objdump(obj, cpu))
    for name, frag, _ in KERNELS:
        body = kernel_body(f, frag)
        print(name, len(body) if body else None, [(s["macs"], s["instrs"]) for s, _ in mac_loops(body)][:6] if body else None)
