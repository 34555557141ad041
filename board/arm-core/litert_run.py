"""LiteRT's side of scripts/arm-bench: one inference of a float .tflite model with
LiteRT's default CPU path (the XNNPACK delegate, one thread), run by an arm64 CPython 3.11 under
qemu-aarch64 with the bbcount plugin. The counted window is the second invoke() only: the first
one may still pack weights or plan memory, which a running kiosk does once.

    litert_run.py MODEL.tflite INPUT.npy OUTDIR

Writes OUTDIR/output<k>.npy (the caller compares them with the reference outputs, to be sure the
counted run computed the real thing) and OUTDIR/maps (the guest's memory map at the window, so
that block addresses can be attributed to libraries and XNNPACK's symbols).
"""
import ctypes, os, sys
import numpy as np
from ai_edge_litert.interpreter import Interpreter

MARK_SYSCALL = 4081   # bbcount's sys= marker; the kernel (QEMU) answers ENOSYS


def main():
    model, inp, out = sys.argv[1:4]
    os.makedirs(out, exist_ok=True)
    libc = ctypes.CDLL(None, use_errno=True)
    it = Interpreter(model_path=model, num_threads=1)
    it.allocate_tensors()
    x = np.load(inp)
    d = it.get_input_details()[0]
    it.set_tensor(d["index"], x.reshape(d["shape"]).astype(d["dtype"]))
    it.invoke()
    libc.syscall(MARK_SYSCALL, 0xFACE)
    it.invoke()
    libc.syscall(MARK_SYSCALL, 0xFACE)
    with open("/proc/self/maps") as f, open(os.path.join(out, "maps"), "w") as g:
        g.write(f.read())
    for k, o in enumerate(it.get_output_details()):
        np.save(os.path.join(out, "output%d.npy" % k), it.get_tensor(o["index"]))
    # Memory traffic beside the cycle estimate: constant operands (weights, biases: XNNPACK packs
    # them as fp32 whatever the file holds) and every op's output (written once, read at least once).
    tensors = {t["index"]: t for t in it.get_tensor_details()}
    ops = it._get_ops_details()
    deq = [op for op in ops if op["op_name"] == "DEQUANTIZE"]   # fp16 weights widened once
    produced = set(i for op in ops if op["op_name"] != "DEQUANTIZE" for i in op["outputs"])
    graph_in = set(d["index"] for d in it.get_input_details())
    deq_in = set(i for op in deq for i in op["inputs"])
    const = set(i for op in ops for i in op["inputs"] if i >= 0 and i not in produced and i not in graph_in and i not in deq_in)
    size = lambda i: int(np.prod(tensors[i]["shape"])) if i in tensors else 0
    with open(os.path.join(out, "traffic.txt"), "w") as g:
        g.write("weights_bytes %d\n" % (4 * sum(size(i) for i in const)))
        g.write("activation_bytes %d\n" % (2 * 4 * sum(size(i) for i in produced)))
    print("litert: %s: %d ops, %d outputs" % (os.path.basename(model), len(it._get_ops_details()), len(it.get_output_details())))


if __name__ == "__main__":
    main()
