"""The cost model of scripts/arm-bench: executed basic blocks (from the bbcount QEMU
plugin, board/arm-core/bbcount.c) costed one by one with llvm-mca 19, summed per inference.

    cycles(inference) = sum over hot blocks of  executions x llvm-mca cycles per execution
                      + cold instructions x (hot cycles / hot instructions)

A block's cost is llvm-mca's steady state of that block repeated (Total Cycles / Iterations):
right for loop bodies, an approximation for straight-line code (it lets consecutive copies
overlap as a real out-of-order core overlaps consecutive blocks). Hot = the most executed blocks
covering HOT of the executed instructions. Not modelled: caches and memory (llvm-mca assumes
every load hits L1), branch mispredictions, instruction fetch, TLBs.

Scheduling models (LLVM 19): cortex-a76 -> -mcpu=neoverse-n1 (the A76's server sibling, same
pipeline: LLVM's own -mcpu=cortex-a76 still schedules with the Cortex-A57 model), cortex-a72 ->
-mcpu=cortex-a72, which LLVM schedules with its Cortex-A57 model (the A72 is an A57 derivative).
Standard library only (runs with the host's python3)."""
import collections, os, re, subprocess, sys

HOT = 0.99
MCPU = {"cortex-a72": "cortex-a72", "cortex-a76": "neoverse-n1"}
GHZ = {"cortex-a72": 1.8, "cortex-a76": 2.4}   # Raspberry Pi 4, Raspberry Pi 5
# Disassembly is core-independent: every feature either engine may use under QEMU's -cpu.
DISASM_ATTR = "+v8.2a,+dotprod,+fullfp16,+fp16fml,+rcpc,+lse,+crc,+aes,+sha2"


class LLVM:
    """llvm-mc / llvm-mca / llvm-objdump from an extracted Debian trixie tree, run through its own
    dynamic loader (no chroot needed)."""
    def __init__(self, root):
        self.ld = [os.path.join(root, "usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2"), "--library-path",
                   os.path.join(root, "usr/lib/x86_64-linux-gnu") + ":" + os.path.join(root, "usr/lib/llvm-19/lib")]
        self.bin = os.path.join(root, "usr/lib/llvm-19/bin")

    def run(self, tool, args, stdin=None):
        return subprocess.run(self.ld + [os.path.join(self.bin, tool)] + args, input=stdin,
                              capture_output=True, text=True)


def parse_bb(path):
    """bbcount output -> (header dict, [(vaddr, n, count, words)])."""
    head, blocks = {}, []
    for line in open(path):
        if line.startswith("#"):
            f = line.split()
            head = {f[i]: f[i + 1] for i in range(1, len(f) - 1, 2)}
            continue
        va, n, c, hx = line.split()
        words = [hx[i:i + 8] for i in range(0, len(hx), 8)]
        blocks.append((int(va, 16), int(n), int(c), words))
    return head, blocks


def disassemble(llvm, words):
    """{word hex (little-endian bytes): instruction text}, via one llvm-mc call."""
    words = sorted(set(words))
    src = "\n".join(" ".join("0x" + w[i:i + 2] for i in range(0, 8, 2)) for w in words)
    out = llvm.run("llvm-mc", ["--disassemble", "--show-encoding", "-triple=aarch64", "-mattr=" + DISASM_ATTR], src)
    text = {}
    for line in out.stdout.split("\n"):
        m = re.match(r"\s*(.*?)\s*// encoding: \[(.*)\]", line)
        if m:
            text["".join(b[2:] for b in m.group(2).split(","))] = m.group(1).replace("\t", " ")
    return text


BRANCH = re.compile(r"^(b|bl|b\.\w+|cbz|cbnz|tbz|tbnz|adr|adrp|ldr|ldrsw|prfm)\s+(.*?)#-?(0x)?[0-9a-f]+$")


def asm_line(t, label):
    # PC-relative immediates (branch targets, literals) become a label: llvm-mca only needs the
    # instruction's class, not where it goes.
    m = BRANCH.match(t)
    if m and (m.group(1) not in ("ldr", "ldrsw", "prfm") or "[" not in t):
        return "%s %s%s" % (m.group(1), m.group(2), label)
    return t


def mca_costs(llvm, cpu, blocks, text, workdir, tag):
    """{vaddr-and-length key: cycles per execution} for the given blocks, one llvm-mca run with one
    code region per block, and {key: cycles if no latency showed} for the blocks that hold
    floating-point instructions (llvm-mca's Block RThroughput, the resource bound). A block
    llvm-mca refuses is left out (costed as cold)."""
    todo = list(blocks)
    for attempt in range(40):
        lines, where = [], []
        for i, (va, n, c, words) in enumerate(todo):
            lines.append("# LLVM-MCA-BEGIN b%d" % i); where.append(i)
            lines.append(".Lb%d:" % i); where.append(i)
            for w in words:
                t = text.get(w)
                if t is None:
                    t = "nop"   # an encoding LLVM cannot decode (none seen so far): one slot
                lines.append(asm_line(t, ".Lb%d" % i)); where.append(i)
            lines.append("# LLVM-MCA-END"); where.append(i)
        src = "\n".join(lines) + "\n"
        path = os.path.join(workdir, "%s-%s.s" % (tag, cpu))
        open(path, "w").write(src)
        out = llvm.run("llvm-mca", ["-mtriple=aarch64", "-mcpu=" + MCPU[cpu], "-iterations=100",
                                    "-instruction-info=false", "-resource-pressure=false", "-"], src)
        if out.returncode == 0:
            break
        bad = set(int(m.group(1)) for m in re.finditer(r"<stdin>:(\d+):\d+: error", out.stderr))
        # An instruction without a scheduling class (LSE atomics such as ldadd, RCpc loads such
        # as ldapr) is reported without a line: find its lines by its text.
        for m in re.finditer(r"(?:unsupported instruction|unable to resolve scheduling class).*\n.*note: instruction:\s*(.*)",
                             out.stderr):
            t = " ".join(m.group(1).split())
            bad |= set(i + 1 for i, l in enumerate(lines) if " ".join(l.split()) == t)
        if not bad:
            raise SystemExit("llvm-mca failed on %s:\n%s" % (path, out.stderr[:3000]))
        drop = set(where[l - 1] for l in bad if 0 < l <= len(where))
        todo = [b for i, b in enumerate(todo) if i not in drop]
    else:
        raise SystemExit("llvm-mca keeps failing on %s" % path)
    open(os.path.join(workdir, "%s-%s.mca.txt" % (tag, cpu)), "w").write(out.stdout)
    costs, fp_bound = {}, {}
    regions = re.split(r"\n\[\d+\] Code Region - ", "\n" + out.stdout)
    for r in regions[1:]:
        name = r.split("\n", 1)[0].strip()
        it = int(re.search(r"Iterations:\s+(\d+)", r).group(1))
        cyc = int(re.search(r"Total Cycles:\s+(\d+)", r).group(1))
        va, n, c, words = todo[int(name[1:])]
        costs[(va, n)] = cyc / it
        if any(FP_MNEMONIC.match(text.get(w, "")) for w in words):
            fp_bound[(va, n)] = float(re.search(r"Block RThroughput:\s+([\d.]+)", r).group(1))
    return costs, fp_bound


# Floating-point instructions (scalar and vector: fmla, fadd, fmul, fcvt*, fmax, ...).
FP_MNEMONIC = re.compile(r"^\s*f[a-z0-9]+\s")
# The A72's floating-point latencies against the Cortex-A57 model llvm-mca uses for it (A72 SOG
# vs LLVM's A57 model: FADD 4 vs 5, FMUL 3 vs 5, FMLA 7 vs 9): the shortest ratio, 3/5, bounds how
# much faster a floating-point block bound by its latencies can be on a real A72.
A72_FP_LATENCY_RATIO = 0.6

PAGE = 4096
FLOW = re.compile(r"^(b|br|blr|bl|ret|b\.\w+|cbz|cbnz|tbz|tbnz|svc|brk|udf)\b")


def join_page_splits(llvm, blocks):
    """QEMU ends a translation block at a guest page boundary, so straight-line code that
    crosses one is counted as two blocks, and costed apart each half loses the overlap with
    the other (a loop body split so came out at nearly twice its cycles, and where the split
    falls moves with every code change). A block that falls through into one starting at a
    page boundary is joined with it for costing, for the executions that came that way.
    Returns (blocks to cost, [(joined key, first key, second key, first's share)])."""
    start = {va: (va, n, c, w) for va, n, c, w in blocks}
    ends = [b for b in blocks if (b[0] + 4 * b[1]) % PAGE == 0 and (b[0] + 4 * b[1]) in start]
    if not ends:
        return blocks, []
    last = disassemble(llvm, [b[3][-1] for b in ends])
    left = {(va, n): c for va, n, c, _ in blocks}
    joined = {}
    for va, n, c, w in sorted(ends):
        b = start[va + 4 * n]
        if FLOW.match(last.get(w[-1], "b")):
            continue
        take = min(c, left[(b[0], b[1])])
        if take > 0:
            left[(b[0], b[1])] -= take
            joined[(va, n)] = (b, take)
    out, joins = [], []
    for va, n, c, w in blocks:
        rest = left[(va, n)]
        if (va, n) in joined:
            b, take = joined[(va, n)]
            out.append((va, n + b[1], take, w + b[3]))
            joins.append(((va, n + b[1]), (va, n), (b[0], b[1]), n / (n + b[1])))
            rest -= take
        if rest > 0:
            out.append((va, n, rest, w))
    return out, joins


def estimate(llvm, cpu, blocks, workdir, tag, text=None, hot=HOT):
    """Cycles of the counted window, with the hot blocks' costs for attribution."""
    original = blocks
    blocks, joins = join_page_splits(llvm, blocks)
    total_insns = sum(n * c for _, n, c, _ in blocks)
    order = sorted(blocks, key=lambda b: -b[1] * b[2])
    hot_blocks, acc = [], 0
    for b in order:
        if acc >= hot * total_insns:
            break
        hot_blocks.append(b); acc += b[1] * b[2]
    if text is None:
        text = disassemble(llvm, [w for b in hot_blocks for w in b[3]])
    costs, fp_bound = mca_costs(llvm, cpu, hot_blocks, text, workdir, tag)
    hot_cyc = sum(costs[(va, n)] * c for va, n, c, _ in hot_blocks if (va, n) in costs)
    # On the A72 only (its model's floating-point latencies are the A57's): the cycles the
    # floating-point blocks could lose at A72_FP_LATENCY_RATIO of those latencies, each down to no
    # less than its resource bound.
    fp_saving = 0.0 if cpu != "cortex-a72" else sum(
        (costs[k] - max(fp_bound[k], A72_FP_LATENCY_RATIO * costs[k])) * c for va, n, c, _ in hot_blocks for k in [(va, n)] if k in fp_bound)
    hot_ins = sum(n * c for va, n, c, _ in hot_blocks if (va, n) in costs)
    cpi = hot_cyc / hot_ins if hot_ins else 1.0
    cold_ins = total_insns - hot_ins
    per_block = {}
    for va, n, c, _ in blocks:
        per_block[(va, n)] = per_block.get((va, n), 0) + (costs[(va, n)] * c if (va, n) in costs else n * c * cpi)
    # A joined block's cycles go back to its two halves by their instruction counts.
    for key, a, b, share in joins:
        cyc = per_block.pop(key, 0)
        per_block[a] = per_block.get(a, 0) + cyc * share
        per_block[b] = per_block.get(b, 0) + cyc * (1 - share)
    for va, n, c, _ in original:
        per_block.setdefault((va, n), 0)
    return {"instructions": total_insns, "cycles": hot_cyc + cold_ins * cpi, "hot_fraction": hot_ins / max(total_insns, 1),
            "hot_blocks": len(costs), "blocks": len(blocks), "cpi_hot": cpi, "per_block": per_block,
            "fp_latency_saving": fp_saving * (1 + cold_ins * cpi / max(hot_cyc, 1))}


# ---- attribution of blocks to code ---------------------------------------------------------

class Symbols:
    """Address -> function name for one ELF file (its full symbol table)."""
    def __init__(self, path, nm="aarch64-linux-gnu-nm"):
        out = subprocess.run([nm, "--defined-only", path], capture_output=True, text=True).stdout
        syms = []
        for l in out.split("\n"):
            f = l.split(" ", 2)
            # ARM mapping symbols ($x, $d) are not functions; Swift's mangled names start with $s.
            if len(f) == 3 and f[1] in "TtWw" and not re.match(r"\$[xd](\.|$)", f[2]):
                syms.append((int(f[0], 16), f[2]))
        syms.sort()
        self.addr = [a for a, _ in syms]
        self.name = [s for _, s in syms]

    def lookup(self, off):
        import bisect
        i = bisect.bisect_right(self.addr, off) - 1
        return self.name[i] if i >= 0 else "?"


def maps_lookup(maps_path):
    """Guest /proc/self/maps -> function(vaddr) -> (file, file offset) for executable mappings."""
    rows = []
    for l in open(maps_path):
        f = l.split()
        if len(f) >= 6 and "x" in f[1]:
            lo, hi = (int(x, 16) for x in f[0].split("-"))
            rows.append((lo, hi, int(f[2], 16), f[5]))
    def find(va):
        for lo, hi, off, path in rows:
            if lo <= va < hi:
                return path, va - lo + off
        return "?", va
    return find


def elf_vaddr_of_offset(path):
    """File offset -> link-time address for a shared object's loadable segments."""
    out = subprocess.run(["aarch64-linux-gnu-readelf", "-lW", path], capture_output=True, text=True).stdout
    segs = []
    for l in out.split("\n"):
        f = l.split()
        if f and f[0] == "LOAD":
            segs.append((int(f[1], 16), int(f[2], 16), int(f[4], 16)))
    def conv(off):
        for o, v, sz in segs:
            if o <= off < o + sz:
                return off - o + v
        return off
    return conv


# One vocabulary for both engines, so the per-kind rows line up. Matched on facekit's demangled
# Swift names and XNNPACK's microkernel names; first match wins.
KINDS = [
    ("conv2d", ["TiledConvolution.conv", "TiledConvolution.direct", "TiledConvolution.gather", "TiledConvolution.dot", "conv2d",
                "igemm", "gemm", "conv_hwc"]),
    ("depthwise", ["depthwise", "dwconv"]),
    ("add/mul/sub", ["addPReLU", "addNEON", "binary", "vadd", "vmul", "vsub", "vbinary", "vsqrdiff", "vdiv"]),
    ("activation", ["prelu", "relu", "vclamp", "logistic", "sigmoid", "tanh", "vneg"]),
    ("pool", ["pool"]),
    ("reduce (mean/sum)", ["mean", "rsum", "rdsum", "raddstore", "rmax", "reduce", "softmax"]),
    ("sqrt/rsqrt", ["sqrt"]),
    ("copy/transpose/pad/concat", ["transpose", "memcpy", "memmove", "memset", "copy", "pad", "fill", "concat", "slice"]),
    ("input quantization", ["quantizeInputs"]),
    # facekit runs PAD, RELU, CONCATENATION, RESHAPE inline in the engine's step dispatch
    ("engine step (inlined pad/relu/concat)", ["QuantizedEngine.execute"]),
]
OTHER = "runtime/other"


def kind_of(name):
    low = name.lower()
    for kind, frags in KINDS:
        if any(f.lower() in low for f in frags):
            return kind
    return OTHER


def demangle(names):
    """Swift names demangled by the toolchain's `swift demangle` when there is one."""
    names = list(names)
    try:
        out = subprocess.run(["swift", "demangle", "--simplified", "--compact"], input="\n".join(names),
                             capture_output=True, text=True, timeout=120).stdout.split("\n")
        if len(out) >= len(names):
            return dict(zip(names, out))
    except (OSError, subprocess.SubprocessError):
        pass
    return {n: n for n in names}


# ---- the report ------------------------------------------------------------------------------

MODELS = ["detector", "landmarks", "blendshapes"]
MICRO_ITER = 10000   # board/arm-core/microbench.c
# Arm's software optimization guides: cycles per iteration of each microbenchmark loop (16
# instructions; see board/arm-core/microbench.c for the per-instruction figures they come from).
GUIDE = {"cortex-a76": {"sdot": 8, "fmla": 8, "smlal": 16, "chain": 32, "ichain": 32},
         "cortex-a72": {"fmla": 16, "smlal": 16, "chain": 64, "ichain": 48}}
# Published real-board TFLite CPU timings, for the second check (the estimate must land within
# 2x). One was found for one of the three models: terryky/tflite_gles_app's README (section 5,
# "Performance of inference [ms]", as of its commit e38d6e0, 2022-01-05) times Blazeface,
# MediaPipe's face_detection_front.tflite, with TensorFlow Lite CPU fp32 on a Raspberry Pi 4 at
# 10 ms. That file has the same 90 operators with the same shapes as the face landmarker's
# face_detector.tflite (compared op by op; only the weights differ, which do not change the work),
# so its time is the detector's. It ran on every core (common/util_tflite.cpp sets
# std::thread::hardware_concurrency() threads: 4), on a 1.5 GHz Pi 4 of its day. A single-thread
# time on that board then lies between the published time (threads gained nothing) and 4x it
# (perfect scaling); the estimate, converted at 1.5 GHz, must land within 2x of that range.
# For the other two models no citable real-board figure was found (board/arm-core/README.md says
# where we looked). XNNPACK's own table (google/XNNPACK README, "Raspberry Pi", benchmarked
# 2022-02-08): FP32 MobileNet v2 1.0X, ~300 M MACs, 46 ms on a Raspberry Pi 4 (ARM64, Cortex-A72
# at 1.5 GHz) with 4 threads, bounds XNNPACK's single-thread fp32 rate on an A72 from below
# (perfect 4-thread scaling) and above (no scaling): compared with the estimate's MACs/cycle on
# the landmark model, which has the same structure (1x1 + depthwise convolutions). Indirect: a
# different model.
PUBLISHED = [
    {"core": "cortex-a72", "model": "detector", "what": "TensorFlow Lite CPU fp32, 4 threads",
     "board": "Raspberry Pi 4 (Cortex-A72, 1.5 GHz)", "ms": 10.0, "ghz": 1.5, "threads": 4,
     "source": "terryky/tflite_gles_app README.md (e38d6e0), 'Performance of inference', Blazeface: "
               "face_detection_front.tflite, the same 90 ops and shapes as face_detector.tflite"},
]
XNNPACK_MNV2 = {"source": "google/XNNPACK README.md, Performance / Raspberry Pi (benchmarked 2022-02-08)",
                "model": "FP32 MobileNet v2 1.0X (300 M MACs)", "board": "Raspberry Pi 4, ARM64, Cortex-A72 1.5 GHz, 4 threads",
                "ms": 46.0, "macs": 300e6, "ghz": 1.5, "threads": 4}
# The frame's warp (detector input 128x128x3, landmark crop 256x256x3, bilinear) is not counted:
# estimated at ~12 instructions per output value, at the facekit inference's own cycles/instruction.
WARP_VALUES = (128 * 128 + 256 * 256) * 3
WARP_INSNS_PER_VALUE = 12


def facekit_traffic(layers_path):
    """Bytes per inference from the graph: weights (int8 or int16) + int32 bias and multipliers,
    and every op's int16 output written once and read once."""
    t = {m: {"weights_bytes": 0, "activation_bytes": 0} for m in MODELS}
    for l in open(layers_path):
        f = l.split()
        if not f or f[0] != "layer" or f[1] not in t:
            continue
        m, op, wide = f[1], f[3], int(f[4])
        inH, inW, inC, oH, oW, oC, kh, kw = map(int, f[5:13])
        n = int(f[15])
        if op == "CONV_2D":
            t[m]["weights_bytes"] += kh * kw * inC * oC * (2 if wide else 1) + 8 * oC
        elif op == "DEPTHWISE_CONV_2D":
            t[m]["weights_bytes"] += kh * kw * oC * (2 if wide else 1) + 8 * oC
        t[m]["activation_bytes"] += 2 * 2 * n
    return t


def litert_traffic(path):
    d = {}
    for l in open(path):
        k, v = l.split()
        d[k] = int(v)
    return d


def attribute_facekit(bl, head, binary, per_block):
    entry = int(subprocess.run(["aarch64-linux-gnu-readelf", "-h", binary], capture_output=True, text=True).stdout
                .split("Entry point address:")[1].split()[0], 16)
    base = int(head["entry_code"], 16) - entry
    syms = Symbols(binary)
    names = {(va, n): syms.lookup(va - base) for va, n, c, w in bl}
    dem = demangle(set(names.values()))
    return {k: dem.get(v, v) for k, v in names.items()}


def attribute_litert(bl, maps):
    find = maps_lookup(maps)
    cache, names = {}, {}
    for va, n, c, w in bl:
        path, off = find(va)
        if path.endswith(".so") or ".so." in path:
            if path not in cache:
                cache[path] = (Symbols(path), elf_vaddr_of_offset(path))
            s, conv = cache[path]
            names[(va, n)] = s.lookup(conv(off))
        else:
            names[(va, n)] = os.path.basename(path)
    return names


def by_kind(per_block, names):
    out = collections.Counter()
    for k, cyc in per_block.items():
        out[kind_of(names.get(k, "?"))] += cyc
    return dict(out)


def check_outputs(run_dir, crop):
    """Largest |LiteRT - reference| relative to the reference's range, over the outputs (the
    references were made by LiteRT on x86: a sanity check that the counted run is the model)."""
    import numpy as np   # only when the LiteRT side runs (the venv's numpy)
    worst = 0.0
    k = 0
    while os.path.exists(os.path.join(crop, "output%d.npy" % k)):
        a = np.load(os.path.join(run_dir, "output%d.npy" % k)).astype(np.float64).reshape(-1)
        b = np.load(os.path.join(crop, "output%d.npy" % k)).astype(np.float64).reshape(-1)
        worst = max(worst, float(np.abs(a - b).max() / max(np.abs(b).max(), 1e-9)))
        k += 1
    return worst


def tracked_frame(llvm, core, R, mca_dir, engines, tracked):
    """The whole per-frame call of each pipeline on tracked frames: facekit's packaged aarch64
    binary (`facekit bench pipeline --count-frames`) and MediaPipe's face landmarker
    (mediapipe_run.py), cycles per frame. `tracked`: (video name, first frame, frame count)."""
    media, first, n = tracked[0], int(tracked[1]), int(tracked[2])
    out = {"frames": n, "media": "%s, frames %d-%d (tracked)" % (media, first, first + n - 1)}
    for engine in engines:
        d = os.path.join(R, engine + "-frame")
        if os.path.exists(os.path.join(d, "unsupported")):
            out[engine + "_error"] = open(os.path.join(d, "unsupported")).read().strip()
            continue
        if engine == "mediapipe":
            faces = open(os.path.join(d, "faces.txt")).read().split()
            if faces != ["1"] * n:
                raise SystemExit("%s: MediaPipe tracked a face in frames %s, not in all %d" % (d, faces, n))
        head, bl = parse_bb(os.path.join(d, "bb.txt"))
        e = estimate(llvm, core, bl, mca_dir, engine + "-frame")
        c = e["cycles"] / n
        out[engine + "_cycles"] = round(c)
        out[engine + "_ms"] = round(c / (GHZ[core] * 1e6), 3)
        out[engine + "_fps"] = round(GHZ[core] * 1e9 / c, 1)
        out[engine + "_instructions"] = e["instructions"] // n
    if "mediapipe_cycles" in out:
        out["ratio"] = round(out["facekit_cycles"] / out["mediapipe_cycles"], 3)
    return out


def main():
    import argparse, json
    ap = argparse.ArgumentParser()
    ap.add_argument("--work", required=True); ap.add_argument("--llvm", required=True)
    ap.add_argument("--layers", required=True); ap.add_argument("--cores", required=True)
    ap.add_argument("--repo", required=True); ap.add_argument("--crop", action="append", default=[])
    ap.add_argument("--json", action="store_true"); ap.add_argument("--facekit-only", action="store_true")
    ap.add_argument("--frame", action="store_true")
    ap.add_argument("--tracked", nargs=3, metavar=("VIDEO", "FIRST", "COUNT"), default=("single_face.mp4", "4", "8"))
    a = ap.parse_args()
    llvm = LLVM(a.llvm)
    cores = a.cores.split()
    crops = dict(c.split("=", 1) for c in a.crop)
    fk_traffic = facekit_traffic(a.layers)
    res, kinds, notes = {}, {}, {}
    for core in cores:
        R = os.path.join(a.work, "runs", core)
        mca_dir = os.path.join(R, "mca"); os.makedirs(mca_dir, exist_ok=True)
        res[core] = {}
        for m in MODELS:
            row = {}
            d = os.path.join(R, "facekit-" + m)
            head, bl = parse_bb(os.path.join(d, "bb.txt"))
            e = estimate(llvm, core, bl, mca_dir, "facekit-" + m)
            names = attribute_facekit(bl, head, os.path.join(a.repo, ".cache/arm-core/build", core, "armcore"), e["per_block"])
            kinds[(core, m, "facekit")] = by_kind(e["per_block"], names)
            row["facekit_cycles"] = round(e["cycles"])
            row["facekit_ms"] = round(e["cycles"] / (GHZ[core] * 1e6), 3)
            row["facekit_instructions"] = e["instructions"]
            row["facekit_hot_coverage"] = round(e["hot_fraction"], 4)
            row["facekit_traffic_bytes"] = fk_traffic[m]
            if not a.facekit_only:
                d = os.path.join(R, "litert-" + m)
                head, bl = parse_bb(os.path.join(d, "bb.txt"))
                e = estimate(llvm, core, bl, mca_dir, "litert-" + m)
                names = attribute_litert(bl, os.path.join(d, "maps"))
                kinds[(core, m, "litert")] = by_kind(e["per_block"], names)
                row["litert_cycles"] = round(e["cycles"])
                row["ratio"] = round(row["facekit_cycles"] / e["cycles"], 3)
                row["litert_ms"] = round(e["cycles"] / (GHZ[core] * 1e6), 3)
                row["litert_instructions"] = e["instructions"]
                row["litert_hot_coverage"] = round(e["hot_fraction"], 4)
                row["litert_traffic_bytes"] = litert_traffic(os.path.join(d, "traffic.txt"))
                if core == "cortex-a72":
                    # The A57 model's longer floating-point latencies (the one microbenchmark
                    # outside 15 %) can only overstate LiteRT here: the ratio if they did, fully.
                    low = e["cycles"] - e["fp_latency_saving"]
                    row["litert_cycles_a72_fp_latencies"] = round(low)
                    row["ratio_a72_fp_latencies"] = round(row["facekit_cycles"] / low, 3)
                row["litert_output_error"] = check_outputs(d, crops[m])
            res[core][m] = row
        # The frame: three models + the warp estimate; post-processing is left out (detector
        # decoding and NMS, landmark projection: well under 1 % of the models' instructions).
        fk_ms = sum(res[core][m]["facekit_ms"] for m in MODELS)
        cpi = res[core]["landmarks"]["facekit_cycles"] / res[core]["landmarks"]["facekit_instructions"]
        warp_ms = WARP_VALUES * WARP_INSNS_PER_VALUE * cpi / (GHZ[core] * 1e6)
        res[core]["frame_ms"] = round(fk_ms + warp_ms, 3)
        res[core]["frame_fps"] = round(1000 / (fk_ms + warp_ms), 1)
        res[core]["frame_warp_ms_estimate"] = round(warp_ms, 3)
        if not a.facekit_only:
            lt_ms = sum(res[core][m]["litert_ms"] for m in MODELS)
            res[core]["frame_fps_litert"] = round(1000 / (lt_ms + warp_ms), 1)
        if not a.facekit_only or a.frame:
            res[core]["tracked_frame"] = tracked_frame(llvm, core, R, mca_dir, ("facekit",) if a.facekit_only else ("facekit", "mediapipe"),
                                                    a.tracked)
        res[core]["clock_ghz"] = GHZ[core]
        res[core]["llvm_mca_cpu"] = MCPU[core]
    validation = {}
    if not a.facekit_only:
        micro = {}
        for core in cores:
            micro[core] = {}
            for k, want in GUIDE[core].items():
                d = os.path.join(a.work, "runs", core, "micro-" + k)
                head, bl = parse_bb(os.path.join(d, "bb.txt"))
                e = estimate(llvm, core, bl, os.path.join(a.work, "runs", core, "mca"), "micro-" + k)
                got = e["cycles"] / MICRO_ITER
                err = (got - want) / want
                micro[core][k] = {"model_cycles_per_iteration": round(got, 2), "guide_cycles_per_iteration": want,
                                  "error_pct": round(100 * err, 1), "within_15pct": abs(err) <= 0.15}
        validation["microbenchmarks"] = micro
        pub = []
        for p in PUBLISHED:
            core, m = p["core"], p["model"]
            if core in res:
                # The estimate at the published board's clock, against the single-thread range
                # that a time on `threads` threads implies: [ms, threads x ms].
                est = round(res[core][m]["litert_cycles"] / (p["ghz"] * 1e6), 3)
                lo, hi = p["ms"], p["ms"] * p["threads"]
                pub.append(dict(p, estimate_ms=est, ratio_estimate_to_published=round(est / p["ms"], 2),
                                single_thread_range_ms=[lo, hi], within_2x=lo / 2 <= est <= 2 * hi))
        validation["published_litert"] = pub
        validation["published_litert_note"] = ("a published real-board timing was found for the detector only (4 threads, so it "
                                               "bounds a single-thread time from both sides); for the landmark model the indirect "
                                               "check is against XNNPACK's published MobileNet v2 rate on a Pi 4")
        if "cortex-a72" in res:
            x = XNNPACK_MNV2
            lo = x["macs"] / (x["ms"] * 1e-3 * x["ghz"] * 1e9 * x["threads"])
            hi = lo * x["threads"]
            macs = sum(int(l.split()[16]) for l in open(a.layers) if l.split()[:2] == ["layer", "landmarks"])
            est = macs / res["cortex-a72"]["landmarks"]["litert_cycles"]
            validation["xnnpack_rate_a72"] = dict({k: v for k, v in x.items() if k not in ("macs", "ghz", "threads")},
                published_single_thread_macs_per_cycle_range=[round(lo, 2), round(hi, 2)],
                estimate_landmarks_macs_per_cycle=round(est, 2), within_range=lo <= est <= hi)
    res["validation"] = validation
    res["notes"] = {
        "cycles": "llvm-mca 19 steady state per executed basic block x executions, one inference; blocks covering 99 % of "
                  "instructions costed, the rest at the hot blocks' cycles/instruction",
        "cortex-a76": "-mcpu=neoverse-n1 (same pipeline as the A76; LLVM's cortex-a76 uses the Cortex-A57 model), 2.4 GHz (Pi 5)",
        "cortex-a72": "-mcpu=cortex-a72 = LLVM's Cortex-A57 scheduling model, 1.8 GHz (Pi 4)",
        "not_modelled": "caches and DRAM (every load an L1 hit), branch mispredictions, instruction fetch, TLB; "
                        "traffic_bytes = weights + activations (written once, read once) per inference",
        "frame": "detector + landmarks + blendshapes (counted) + warp (estimated, %d instructions per output value); "
                 "post-processing left out" % WARP_INSNS_PER_VALUE,
        "litert": "ai-edge-litert 1.4.0, default XNNPACK delegate, num_threads=1, second invoke() counted",
        "tracked_frame": "the whole per-frame call on %s tracked frames of %s, every thread's instructions "
                         "(one core's work): facekit's packaged aarch64 binary (Swift 6.0.3, `facekit bench pipeline "
                         "--count-frames %s,%s`) and MediaPipe 1.2.3's FaceLandmarker.detect_for_video (VIDEO mode, blend "
                         "shapes and matrices); decoding excluded" % (a.tracked[2], a.tracked[0], a.tracked[1], a.tracked[2]),
    }
    if a.json:
        print(json.dumps(res, indent=1, sort_keys=False))
        return
    print_table(res, kinds, cores, a.facekit_only)


def print_table(res, kinds, cores, facekit_only):
    mb = lambda t: (t["weights_bytes"] + t["activation_bytes"]) / 1e6
    print("ESTIMATE (llvm-mca 19 on QEMU-counted basic blocks, one inference per model; caches not modelled)\n")
    for core in cores:
        print("== %s (%s model, %.1f GHz)" % (core, MCPU[core], GHZ[core]))
        if facekit_only:
            print("  %-12s %14s %10s %9s %12s" % ("model", "facekit Mcyc", "ms", "Minstr", "traffic MB"))
        else:
            print("  %-12s %14s %10s %9s %12s | %13s %10s %9s %12s | %6s" % ("model", "facekit Mcyc", "ms", "Minstr", "traffic MB",
                  "LiteRT Mcyc", "ms", "Minstr", "traffic MB", "ratio"))
        for m in MODELS:
            r = res[core][m]
            line = "  %-12s %14.1f %10.2f %9.1f %12.2f" % (m, r["facekit_cycles"] / 1e6, r["facekit_ms"], r["facekit_instructions"] / 1e6,
                                                        mb(r["facekit_traffic_bytes"]))
            if not facekit_only:
                line += " | %13.1f %10.2f %9.1f %12.2f | %6.2f" % (r["litert_cycles"] / 1e6, r["litert_ms"], r["litert_instructions"] / 1e6,
                                                                 mb(r["litert_traffic_bytes"]), r["ratio"])
            print(line)
        if not facekit_only and "ratio_a72_fp_latencies" in res[core][MODELS[0]]:
            print("  with the A72's own, shorter floating-point latencies (at most; worst case for facekit): LiteRT " + "; ".join(
                  "%s %.1f Mcyc, ratio %.2f" % (m, res[core][m]["litert_cycles_a72_fp_latencies"] / 1e6, res[core][m]["ratio_a72_fp_latencies"])
                  for m in MODELS))
        print("  frame (3 models + warp estimate %.2f ms): facekit %.1f fps%s" % (res[core]["frame_warp_ms_estimate"], res[core]["frame_fps"],
              "" if facekit_only else ", LiteRT %.1f fps" % res[core]["frame_fps_litert"]))
        t = res[core].get("tracked_frame")
        if t:
            mp = ("MediaPipe %.1f Mcyc, %.2f ms, %.1f fps; ratio %.2f" % (t["mediapipe_cycles"] / 1e6, t["mediapipe_ms"], t["mediapipe_fps"], t["ratio"])
                  if "mediapipe_cycles" in t else "MediaPipe not counted (--facekit-only)" if facekit_only
                  else "MediaPipe does not run: " + t.get("mediapipe_error", "?"))
            print("  tracked frame, whole pipeline (%s): facekit %.1f Mcyc, %.2f ms, %.1f fps | %s" % (
                t["media"], t["facekit_cycles"] / 1e6, t["facekit_ms"], t["facekit_fps"], mp))
        print("  per layer kind, Mcycles (facekit / LiteRT):")
        for m in MODELS:
            fk = kinds[(core, m, "facekit")]
            lt = kinds.get((core, m, "litert"), {})
            ks = sorted(set(fk) | set(lt), key=lambda k: -(fk.get(k, 0) + lt.get(k, 0)))
            cells = []
            for k in ks:
                if fk.get(k, 0) + lt.get(k, 0) < 0.005 * (sum(fk.values()) + sum(lt.values())):
                    continue
                cells.append("%s %.1f/%s" % (k, fk.get(k, 0) / 1e6, "-" if facekit_only else "%.1f" % (lt.get(k, 0) / 1e6)))
            print("    %-12s %s" % (m, "; ".join(cells)))
        print()
    v = res.get("validation", {})
    if v.get("microbenchmarks"):
        print("VALIDATION: microbenchmarks, cycles per 16-instruction iteration (model vs Arm's optimization guides)")
        for core, d in v["microbenchmarks"].items():
            print("  %-11s %s" % (core, "; ".join("%s %.1f vs %d (%+.1f%%%s)" % (k, x["model_cycles_per_iteration"], x["guide_cycles_per_iteration"],
                  x["error_pct"], "" if x["within_15pct"] else ", OUT of 15%") for k, x in d.items())))
    x = v.get("xnnpack_rate_a72")
    if x:
        print("  LiteRT vs published (indirect; %s): %s, %s, %.0f ms -> single-thread %.2f..%.2f MACs/cycle; "
              "estimate on the landmark model %.2f MACs/cycle%s" % (x["source"], x["model"], x["board"], x["ms"],
              x["published_single_thread_macs_per_cycle_range"][0], x["published_single_thread_macs_per_cycle_range"][1],
              x["estimate_landmarks_macs_per_cycle"], "" if x["within_range"] else " (OUTSIDE)"))
    if "published_litert_note" in v:
        print("  " + v["published_litert_note"])
    for p in v.get("published_litert", []):
        print("  published: %s %s on %s: %.1f ms (%s); one thread there %.1f..%.1f ms; estimate %.2f ms at %.1f GHz, %.2fx the "
              "published time%s" % (p["what"], p["model"], p["board"], p["ms"], p["source"], p["single_thread_range_ms"][0],
              p["single_thread_range_ms"][1], p["estimate_ms"], p["ghz"], p["ratio_estimate_to_published"],
              "" if p["within_2x"] else " OUT of 2x"))
    print()
    for k, t in res["notes"].items():
        print("%s: %s" % (k, t))


if __name__ == "__main__":
    main()
