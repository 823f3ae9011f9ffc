#!/usr/bin/env python3
"""Build the int8-arithmetic all-MiniLM-L6-v2 from the shipped model.onnx, deterministically.

  python benches/int8/make_int8.py [--src model.onnx] [--out .cache/models/minilm-u8-sq075/model.onnx]
                               [--scales calib_amax.json] [--calibrate]

Recipe (the variant docs/embeddings.md reports as "u8, SmoothQuant 0.75, FFN-down f32"):
 1. The shipped graph stores int8 weights with per-output-column f32 scales and dequantizes them
    with Cast+Mul. For the 24 attention MatMuls (Q, K, V, attention-out) and the 6 FFN-up MatMuls
    the product is folded into an f32 initializer (numpy, exact). Word/position embeddings and the
    6 FFN-down MatMuls (input = GELU output, the most quantization-sensitive) keep the shipped
    int8 Cast+Mul form and stay f32 arithmetic.
 2. SmoothQuant, alpha 0.75: per group of MatMuls sharing an input X, per input channel j,
    s_j = amax|X_j|^0.75 / amax|W_j,:|^0.25; an elementwise Mul by 1/s is inserted on X and the
    weight rows are multiplied by s (exact in f32). amax|X_j| comes from calib_amax.json (made by
    --calibrate from LoCoMo turns/questions that compare.py does not evaluate on; values rounded
    to 4 significant digits so the build does not depend on ulp-level CPU differences).
 3. onnxruntime.quantization.quantize_dynamic, weight_type QUInt8, per_channel, MatMul only
    (const-B MatMuls only, the default): DynamicQuantizeLinear + MatMulInteger + Mul per MatMul.
Prints the sha256 of the result.
"""
import argparse, hashlib, json, logging, os, sys, tempfile
import numpy as np, onnx
from onnx import numpy_helper as nh, helper

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SRC = os.path.join(ROOT, ".cache/models/all-minilm-l6-v2-int8/model.onnx")
ALPHA = 0.75


def fold_matmul_weights(m):
    """Fold Cast(int8)*scale into f32 for MatMul weights, except those feeding FFN-down MatMuls."""
    g = m.graph
    init = {i.name: i for i in g.initializer}
    producers = {o: n for n in g.node for o in n.output}
    consumers = {}
    for n in g.node:
        for x in n.input:
            consumers.setdefault(x, []).append(n)
    folded, drop, remove = [], set(), set()
    for mm in g.node:
        if mm.op_type != "MatMul":
            continue
        mul = producers.get(mm.input[1])
        if mul is None or mul.op_type != "Mul" or mul.input[1] not in init:
            continue
        cast = producers.get(mul.input[0])
        if cast is None or cast.op_type != "Cast" or cast.input[0] not in init:
            continue
        q = nh.to_array(init[cast.input[0]])
        if q.shape[0] > q.shape[1]:  # 1536x384: FFN-down, left as shipped
            continue
        assert len(consumers[mul.output[0]]) == 1 and len(consumers[cast.output[0]]) == 1
        w = (q.astype(np.float32) * nh.to_array(init[mul.input[1]]).astype(np.float32)).astype(np.float32)
        folded.append(nh.from_array(w, mul.output[0]))
        drop.update([cast.input[0], mul.input[1]])
        remove.update([id(cast), id(mul)])
    keep = [n for n in g.node if id(n) not in remove]
    del g.node[:]
    g.node.extend(keep)
    rest = [i for i in g.initializer if i.name not in drop]
    del g.initializer[:]
    g.initializer.extend(rest + folded)
    return len(folded)


def const_b_groups(m):
    init = {i.name for i in m.graph.initializer}
    groups = {}
    for n in m.graph.node:
        if n.op_type == "MatMul" and n.input[1] in init:
            groups.setdefault(n.input[0], []).append(n)
    return groups


def calibrate(m, inputs, path):
    import onnxruntime as ort
    from tokenizers import Tokenizer
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from smooth import calib_texts
    mm = onnx.ModelProto(); mm.CopyFrom(m)
    for x in inputs:
        mm.graph.output.append(helper.make_tensor_value_info(x, onnx.TensorProto.FLOAT, None))
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    so.intra_op_num_threads = 1
    s = ort.InferenceSession(mm.SerializeToString(), so, providers=["CPUExecutionProvider"])
    tok = Tokenizer.from_file(os.path.join(os.path.dirname(SRC), "tokenizer.json"))
    tok.no_padding(); tok.enable_truncation(max_length=256)
    amax = {x: None for x in inputs}
    for t in calib_texts():
        ids = np.array([tok.encode(t).ids], np.int64)
        outs = s.run(inputs, {"input_ids": ids, "attention_mask": np.ones_like(ids), "token_type_ids": np.zeros_like(ids)})
        for x, v in zip(inputs, outs):
            a = np.abs(v.reshape(-1, v.shape[-1])).max(0)
            amax[x] = a if amax[x] is None else np.maximum(amax[x], a)
    out = {x: [float(f"{v:.4g}") for v in a] for x, a in amax.items()}
    json.dump(out, open(path, "w"), indent=0)
    print(f"wrote {path}")


def smooth(m, amax, alpha=ALPHA):
    inits = {i.name: i for i in m.graph.initializer}
    muls = []
    for x, mms in const_b_groups(m).items():
        W = [nh.to_array(inits[n.input[1]]) for n in mms]
        wmax = np.max([np.abs(w).max(1) for w in W], axis=0).astype(np.float64)
        a = np.asarray(amax[x], np.float64)
        s = (np.maximum(a, 1e-5) ** alpha / np.maximum(wmax, 1e-5) ** (1 - alpha)).astype(np.float32)
        for n, w in zip(mms, W):
            inits[n.input[1]].CopyFrom(nh.from_array((w * s[:, None]).astype(np.float32), n.input[1]))
        m.graph.initializer.append(nh.from_array((np.float32(1) / s).astype(np.float32), f"{x}__smooth_inv"))
        muls.append((x, helper.make_node("Mul", [x, f"{x}__smooth_inv"], [f"{x}__smoothed"], name=f"smooth_{x}")))
        for n in mms:
            n.input[0] = f"{x}__smoothed"
    nodes = list(m.graph.node)
    for x, mul in muls:
        nodes.insert(next(i for i, n in enumerate(nodes) if x in n.output) + 1, mul)
    del m.graph.node[:]
    m.graph.node.extend(nodes)
    return len(muls)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--src", default=SRC)
    ap.add_argument("--out", default=os.path.join(ROOT, ".cache/models/minilm-u8-sq075/model.onnx"))
    here = os.path.dirname(os.path.abspath(__file__))
    ap.add_argument("--scales", default=os.path.join(here, "calib_amax.json"))
    ap.add_argument("--calibrate", action="store_true")
    a = ap.parse_args()
    logging.disable(logging.WARNING)
    m = onnx.load(a.src)
    print("src sha256", hashlib.sha256(open(a.src, "rb").read()).hexdigest())
    print("folded", fold_matmul_weights(m), "MatMul weights")
    groups = list(const_b_groups(m))
    if a.calibrate or not os.path.exists(a.scales):
        calibrate(m, groups, a.scales)
    print("smoothed", smooth(m, json.load(open(a.scales))), "MatMul groups, alpha", ALPHA)
    onnx.checker.check_model(m)
    from onnxruntime.quantization import quantize_dynamic, QuantType
    with tempfile.TemporaryDirectory() as d:
        tmp = os.path.join(d, "smoothed.onnx")
        onnx.save(m, tmp)
        os.makedirs(os.path.dirname(os.path.abspath(a.out)), exist_ok=True)
        quantize_dynamic(tmp, a.out, weight_type=QuantType.QUInt8, per_channel=True,
                         op_types_to_quantize=["MatMul"])
    q = onnx.load(a.out)
    from collections import Counter
    ops = Counter(n.op_type for n in q.graph.node)
    print("ops:", {k: ops[k] for k in ("DynamicQuantizeLinear", "MatMulInteger", "MatMul", "Cast", "Mul")},
          "opsets:", {d.domain or "ai.onnx": d.version for d in q.opset_import})
    print("size", os.path.getsize(a.out))
    print("sha256", hashlib.sha256(open(a.out, "rb").read()).hexdigest(), a.out)


if __name__ == "__main__":
    main()
