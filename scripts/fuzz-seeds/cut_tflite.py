"""Cuts a real TFLite model down to its first N operators (and only the tensors and buffers
they use), so that a seed of a few kilobytes still has the real model's operator options,
float16 weights with their DEQUANTIZE ops, and layout. Usage: cut_tflite.py IN OUT N"""
import sys
from ai_edge_litert import schema_py_generated as schema
import flatbuffers

src, dst, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
model = schema.ModelT.InitFromPackedBuf(open(src, "rb").read(), 0)
sg = model.subgraphs[0]
ops = sg.operators[:n]
used = sorted({i for op in ops for i in list(op.inputs) + list(op.outputs) if i >= 0})
remap = {old: new for new, old in enumerate(used)}
produced = {i for op in ops for i in op.outputs}
buffers = [schema.BufferT()]      # buffer 0 stays the empty sentinel
tensors = []
for old in used:
    t = sg.tensors[old]
    b = model.buffers[t.buffer] if t.buffer < len(model.buffers) else None
    if b is not None and b.data is not None and len(b.data) > 0:
        buffers.append(b)
        t.buffer = len(buffers) - 1
    else:
        t.buffer = 0
    tensors.append(t)
for op in ops:
    op.inputs = [remap[i] if i >= 0 else -1 for i in op.inputs]
    op.outputs = [remap[i] for i in op.outputs]
sg.tensors = tensors
sg.operators = ops
sg.inputs = [remap[i] for i in sg.inputs if i in remap]
# The output: the last operator that computes (DEQUANTIZE outputs are constants to facekit).
def code(op):
    c = model.operatorCodes[op.opcodeIndex]
    return max(c.builtinCode, c.deprecatedBuiltinCode)
sg.outputs = [[op for op in ops if code(op) != schema.BuiltinOperator.DEQUANTIZE][-1].outputs[0]]
model.buffers = buffers
model.subgraphs = [sg]
model.metadata = None
model.signatureDefs = None
model.metadataBuffer = None
b = flatbuffers.Builder(1024)
b.Finish(model.Pack(b), file_identifier=b"TFL3")
open(dst, "wb").write(b.Output())
