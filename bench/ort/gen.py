#!/usr/bin/python3
"""Writes the models of `make bench-ort`, each twice with the same weights.

For every variant (a model at one batch size or sequence length) it writes
into OUT:

  NAME.tvms   the model as a TVMScript module with high-level Relax ops, its
              weights as parameters after the input (num_input: 1): what
              phasec compiles;
  NAME.npz    the input and every weight, named after the parameters, in the
              shapes the .tvms declares: what phasec binds;
  NAME.onnx   the same model as an ONNX graph (onnx.helper, opset 17), the
              weights as initializers: what ONNX Runtime runs;
  NAME.in.npy the input alone (what the ONNX Runtime side feeds as "x");

and OUT/models.json, the list of variants with the repetitions each gets.

Why Python: onnx.helper, the only way Debian gives us to write ONNX, is a
Python library, and NumPy writes .npy/.npz natively; one script that builds
both forms from the same arrays cannot let them drift apart. Weights come
from numpy.random.default_rng with a fixed seed per model, scaled by
1/sqrt(fan_in) (He scaling before a relu) so that activations stay O(1)
and the relative error of the comparison means something.

Usage: gen.py OUT [NAME...]   (no names: every variant)
"""

import json
import math
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OPSET = 17  # LayerNormalization is opset 17; onnx 1.12 (Debian 12) stops there.

HEADER = """# from tvm.script import ir as I
# from tvm.script import tir as T
# from tvm.script import relax as R

"""


def f32(a):
    return np.ascontiguousarray(a, dtype=np.float32)


class Model:
    """Builds the TVMScript text and the ONNX graph of one variant side by
    side: every helper appends the Relax binding and the ONNX node(s) that
    compute the same thing, so the two forms stay in step."""

    def __init__(self, name, doc, seed):
        self.name, self.doc = name, doc
        self.rng = np.random.default_rng(seed)
        self.params = []  # (name, relax shape, array) in parameter order
        self.inits = []  # ONNX initializers
        self.nodes = []  # ONNX nodes
        self.lines = []  # Relax bindings
        self.n = 0

    def fresh(self, prefix):
        self.n += 1
        return "%s%d" % (prefix, self.n)

    # --- parameters ---------------------------------------------------

    def input(self, name, shape):
        x = f32(self.rng.standard_normal(shape))
        self.params.append((name, shape, x))
        self.input_name, self.input_shape, self.input_value = name, shape, x
        return name

    def weight(self, name, array, relax_shape=None):
        """A weight: a parameter of the Relax function (in relax_shape, by
        default the array's: a conv bias is (C, 1, 1) there, to broadcast)
        and an ONNX initializer of the same values in the array's shape."""
        array = f32(array)
        rshape = tuple(relax_shape or array.shape)
        self.params.append((name, rshape, array.reshape(rshape)))
        self.inits.append(numpy_helper.from_array(array, name))
        return name

    def uniform(self, shape, scale):
        return self.rng.uniform(-scale, scale, size=shape)

    def const(self, value):
        """A float32 scalar: R.const in Relax, an initializer in ONNX."""
        name = self.fresh("c")
        self.inits.append(numpy_helper.from_array(np.array(value, dtype=np.float32), name))
        return name, 'R.const(%r, "float32")' % float(value)

    def shape_const(self, dims):
        name = self.fresh("shape")
        self.inits.append(numpy_helper.from_array(np.array(dims, dtype=np.int64), name))
        return name

    # --- ops: each returns the output name, the same in both forms ----

    def bind(self, relax_expr, onnx_nodes, out):
        self.lines.append("%s = %s" % (out, relax_expr))
        self.nodes.extend(onnx_nodes)
        return out

    def matmul(self, a, b):
        out = self.fresh("mm")
        return self.bind("R.matmul(%s, %s)" % (a, b), [helper.make_node("MatMul", [a, b], [out])], out)

    def add(self, a, b):
        out = self.fresh("add")
        return self.bind("R.add(%s, %s)" % (a, b), [helper.make_node("Add", [a, b], [out])], out)

    def relu(self, a):
        out = self.fresh("relu")
        return self.bind("R.nn.relu(%s)" % a, [helper.make_node("Relu", [a], [out])], out)

    def softmax(self, a):
        out = self.fresh("softmax")
        return self.bind("R.nn.softmax(%s, axis=-1)" % a, [helper.make_node("Softmax", [a], [out], axis=-1)], out)

    def divide(self, a, value):
        out = self.fresh("div")
        cname, cexpr = self.const(value)
        return self.bind("R.divide(%s, %s)" % (a, cexpr), [helper.make_node("Div", [a, cname], [out])], out)

    def gelu(self, a):
        """Exact GELU, x/2 * (1 + erf(x/sqrt 2)): R.nn.gelu; in ONNX (Gelu is
        opset 20) the erf form, which ONNX Runtime's graph optimizer fuses
        into its Gelu kernel."""
        out = self.fresh("gelu")
        s, _ = self.const(1 / math.sqrt(2))
        one, _ = self.const(1.0)
        half, _ = self.const(0.5)
        t1, t2, t3, t4 = (self.fresh("g") for _ in range(4))
        nodes = [
            helper.make_node("Mul", [a, s], [t1]),
            helper.make_node("Erf", [t1], [t2]),
            helper.make_node("Add", [t2, one], [t3]),
            helper.make_node("Mul", [a, t3], [t4]),
            helper.make_node("Mul", [t4, half], [out]),
        ]
        return self.bind("R.nn.gelu(%s)" % a, nodes, out)

    def layer_norm(self, a, gamma, beta, eps):
        out = self.fresh("ln")
        return self.bind(
            "R.nn.layer_norm(%s, %s, %s, axes=[-1], epsilon=%r, center=True, scale=True)" % (a, gamma, beta, eps),
            [helper.make_node("LayerNormalization", [a, gamma, beta], [out], axis=-1, epsilon=eps)], out)

    def reshape(self, a, dims):
        out = self.fresh("reshape")
        shp = self.shape_const(dims)
        return self.bind("R.reshape(%s, R.shape(%s))" % (a, list(dims)),
                         [helper.make_node("Reshape", [a, shp], [out])], out)

    def permute(self, a, axes):
        out = self.fresh("perm")
        return self.bind("R.permute_dims(%s, axes=%s)" % (a, list(axes)),
                         [helper.make_node("Transpose", [a], [out], perm=list(axes))], out)

    def conv2d(self, a, w, stride, pad, bias=None):
        """A convolution (NCHW, OIHW); with bias, R.add of a (C, 1, 1) bias in
        Relax and Conv's third input in ONNX."""
        out = self.fresh("conv")
        conv = out if bias is None else self.fresh("convnb")
        self.lines.append("%s = R.nn.conv2d(%s, %s, strides=[%d, %d], padding=[%d, %d, %d, %d])"
                          % (conv, a, w, stride, stride, pad, pad, pad, pad))
        if bias is not None:
            self.lines.append("%s = R.add(%s, %s)" % (out, conv, bias))
        self.nodes.append(helper.make_node("Conv", [a, w] + ([bias] if bias else []), [out],
                                           kernel_shape=list(self.shape_of_weight(w)[2:]),
                                           strides=[stride, stride], pads=[pad] * 4))
        return out

    def shape_of_weight(self, name):
        for n, shape, _ in self.params:
            if n == name:
                return shape
        raise KeyError(name)

    def batch_norm(self, a, g, b, m, v, eps=1e-5):
        out = self.fresh("bn")
        tup = self.fresh("bnt")
        self.lines.append("%s = R.nn.batch_norm(%s, %s, %s, %s, %s, axis=1, epsilon=%r, center=True, scale=True, training=False)"
                          % (tup, a, g, b, m, v, eps))
        self.lines.append("%s = %s[0]" % (out, tup))
        self.nodes.append(helper.make_node("BatchNormalization", [a, g, b, m, v], [out], epsilon=eps))
        return out

    def max_pool(self, a, size, stride, pad):
        out = self.fresh("maxpool")
        return self.bind("R.nn.max_pool2d(%s, pool_size=[%d, %d], strides=[%d, %d], padding=[%d, %d, %d, %d])"
                         % (a, size, size, stride, stride, pad, pad, pad, pad),
                         [helper.make_node("MaxPool", [a], [out], kernel_shape=[size, size],
                                           strides=[stride, stride], pads=[pad] * 4)], out)

    def global_avg_pool(self, a):
        out = self.fresh("gap")
        return self.bind("R.nn.adaptive_avg_pool2d(%s, output_size=[1, 1])" % a,
                         [helper.make_node("GlobalAveragePool", [a], [out])], out)

    # --- output -------------------------------------------------------

    def finish(self, result, out_shape):
        self.result, self.out_shape = result, out_shape

    def tvms(self):
        sig = ", ".join('%s: R.Tensor(%s, dtype="float32")' % (n, tuple_str(s)) for n, s, _ in self.params)
        lines = list(self.lines)
        # The last binding defines the result: name it gv.
        assert lines[-1].startswith(self.result + " = ")
        lines[-1] = "gv" + lines[-1][len(self.result):]
        body = "".join("            %s\n" % l for l in lines)
        doc = "".join("# %s\n" % l for l in self.doc.splitlines())
        return (HEADER + doc + "@I.ir_module\nclass Module:\n    @R.function\n"
                + "    def main(%s) -> R.Tensor(%s, dtype=\"float32\"):\n" % (sig, tuple_str(self.out_shape))
                + '        R.func_attr({"num_input": 1})\n        with R.dataflow():\n'
                + body + "            R.output(gv)\n        return gv\n")

    def onnx(self):
        x = helper.make_tensor_value_info(self.input_name, TensorProto.FLOAT, list(self.input_shape))
        y = helper.make_tensor_value_info(self.result, TensorProto.FLOAT, list(self.out_shape))
        graph = helper.make_graph(self.nodes, self.name, [x], [y], initializer=self.inits)
        m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)], producer_name="phasec bench/ort/gen.py")
        m.ir_version = 8  # what ONNX Runtime accepts for opset 17
        onnx.checker.check_model(m)
        return m


def tuple_str(shape):
    """A Python tuple literal: (768,) for one dimension."""
    inner = ", ".join(str(d) for d in shape)
    return "(%s,)" % inner if len(shape) == 1 else "(%s)" % inner


# --- the models --------------------------------------------------------------


def mlp(batch):
    m = Model("mlp_b%d" % batch, "The 784-512-512-10 MLP (relu between layers, softmax last), batch %d." % batch, seed=1)
    h = m.input("x", (batch, 784))
    dims = [784, 512, 512, 10]
    for i in range(3):
        w = m.weight("w%d" % i, m.uniform((dims[i], dims[i + 1]), math.sqrt(6 / dims[i])))
        b = m.weight("b%d" % i, m.uniform((dims[i + 1],), 0.1))
        h = m.add(m.matmul(h, w), b)
        h = m.relu(h) if i < 2 else m.softmax(h)
    m.finish(h, (batch, 10))
    return m


def cnn(batch):
    m = Model("cnn_b%d" % batch,
              "The small CNN: three 3x3 convolutions (3->32->64->64 channels) with bias and relu,\n"
              "max pooling after the first two, global average pooling; 32x32 images, batch %d." % batch, seed=2)
    h = m.input("x", (batch, 3, 32, 32))
    chans = [3, 32, 64, 64]
    for i in range(3):
        cin, cout = chans[i], chans[i + 1]
        w = m.weight("w%d" % i, m.uniform((cout, cin, 3, 3), math.sqrt(6 / (cin * 9))))
        bias = m.uniform((cout,), 0.1)
        b = m.weight("b%d" % i, bias, relax_shape=(cout, 1, 1))
        h = m.relu(m.conv2d(h, w, 1, 1, bias=b))
        if i < 2:
            h = m.max_pool(h, 2, 2, 0)
    h = m.reshape(m.global_avg_pool(h), (batch, 64))
    m.finish(h, (batch, 64))
    return m


def bert(seq):
    """A BERT-base encoder layer (post-norm): self-attention with 12 heads of
    64, residual, layer norm; FFN 768->3072->768 with exact GELU, residual,
    layer norm. Batch 1, written on (seq, 768)."""
    H, NH, D, F = 768, 12, 64, 3072
    m = Model("bert_s%d" % seq,
              "A BERT-base encoder layer: hidden 768, 12 heads, FFN 3072, exact GELU,\n"
              "post-norm layer norms (epsilon 1e-12); sequence length %d, batch 1." % seq, seed=3)
    x = m.input("x", (seq, H))

    def dense(h, name, n_in, n_out):
        w = m.weight("w_" + name, m.uniform((n_in, n_out), math.sqrt(3 / n_in)))
        b = m.weight("b_" + name, m.uniform((n_out,), 0.1))
        return m.add(m.matmul(h, w), b)

    def heads(t):  # (seq, 768) -> (12, seq, 64)
        return m.permute(m.reshape(t, (seq, NH, D)), (1, 0, 2))

    q, k, v = (heads(dense(x, n, H, H)) for n in ("q", "k", "v"))
    scores = m.divide(m.matmul(q, m.permute(k, (0, 2, 1))), math.sqrt(D))
    ctx = m.matmul(m.softmax(scores), v)  # (12, seq, 64)
    ctx = m.reshape(m.permute(ctx, (1, 0, 2)), (seq, H))
    attn = dense(ctx, "o", H, H)

    def ln(h, name):
        g = m.weight("ln%s_g" % name, 1 + m.uniform((H,), 0.1))
        b = m.weight("ln%s_b" % name, m.uniform((H,), 0.1))
        return m.layer_norm(h, g, b, 1e-12)

    h1 = ln(m.add(x, attn), "1")
    ff = dense(m.gelu(dense(h1, "ff1", H, F)), "ff2", F, H)
    out = ln(m.add(h1, ff), "2")
    m.finish(out, (seq, H))
    return m


def bert_gemms(seq):
    """The GEMMs of bert(seq) alone, the yardstick of the fusion goal (the
    layer within 1.25x of its GEMMs): the six dense layers' matmuls without
    bias, and the two attention matmuls per head, their operands reshaped
    (a view) instead of permuted, without scaling or softmax; the same
    weights as bert(seq). No layer norm, so the values grow with seq: the
    comparison's error is relative to the output's scale."""
    H, NH, D, F = 768, 12, 64, 3072
    m = Model("bert_gemms_s%d" % seq,
              "The GEMMs of the BERT-base encoder layer alone (sequence %d): dense matmuls and\n"
              "attention matmuls in the layer's shapes, no bias, softmax, GELU or layer norm." % seq, seed=3)
    x = m.input("x", (seq, H))

    def dense(h, name, n_in, n_out):
        w = m.weight("w_" + name, m.uniform((n_in, n_out), math.sqrt(3 / n_in)))
        m.uniform((n_out,), 0.1)  # the bias of bert(): keeps the random stream, and so the weights, the same
        return m.matmul(h, w)

    q, k, v = (dense(x, n, H, H) for n in ("q", "k", "v"))
    scores = m.matmul(m.reshape(q, (NH, seq, D)), m.reshape(k, (NH, D, seq)))
    ctx = m.reshape(m.matmul(scores, m.reshape(v, (NH, seq, D))), (seq, H))
    attn = dense(ctx, "o", H, H)
    m.uniform((H,), 0.1), m.uniform((H,), 0.1)  # layer norm 1's gamma and beta
    out = dense(dense(attn, "ff1", H, F), "ff2", F, H)
    m.finish(out, (seq, H))
    return m


def resnet18():
    """ResNet-18 (He et al. 2016, the torchvision layout) at 224x224, batch 1:
    a 7x7/2 convolution, batch norm, relu, 3x3/2 max pooling, four stages of
    two basic blocks (64, 128, 256, 512 channels; a 1x1/2 convolution with
    batch norm on the shortcut where the shape changes), global average
    pooling and a 512->1000 dense layer."""
    m = Model("resnet18_b1",
              "A ResNet-18-shaped network at 224x224, batch 1: convolutions without bias, inference\n"
              "batch norm, relu, max and global average pooling, residual adds, a 1000-way dense layer.", seed=4)
    h = m.input("x", (1, 3, 224, 224))
    count = [0]

    def conv_bn(h, cin, cout, k, stride, relu):
        count[0] += 1
        i = count[0]
        w = m.weight("conv%d_w" % i, m.uniform((cout, cin, k, k), math.sqrt(6 / (cin * k * k))))
        g = m.weight("bn%d_g" % i, 1 + m.uniform((cout,), 0.1))
        b = m.weight("bn%d_b" % i, m.uniform((cout,), 0.1))
        mean = m.weight("bn%d_m" % i, m.uniform((cout,), 0.1))
        var = m.weight("bn%d_v" % i, m.rng.uniform(0.5, 1.5, size=(cout,)))
        h = m.batch_norm(m.conv2d(h, w, stride, k // 2), g, b, mean, var)
        return m.relu(h) if relu else h

    h = m.max_pool(conv_bn(h, 3, 64, 7, 2, True), 3, 2, 1)
    cin = 64
    for cout, stride in ((64, 1), (128, 2), (256, 2), (512, 2)):
        for block in range(2):
            s = stride if block == 0 else 1
            y = conv_bn(conv_bn(h, cin, cout, 3, s, True), cout, cout, 3, 1, False)
            short = conv_bn(h, cin, cout, 1, s, False) if (s != 1 or cin != cout) else h
            h = m.relu(m.add(y, short))
            cin = cout
    h = m.reshape(m.global_avg_pool(h), (1, 512))
    w = m.weight("fc_w", m.uniform((512, 1000), math.sqrt(3 / 512)))
    b = m.weight("fc_b", m.uniform((1000,), 0.1))
    h = m.add(m.matmul(h, w), b)
    m.finish(h, (1, 1000))
    return m


# Variants in the order of the table; reps is the number of timed runs (after
# one warm-up) each side gets at most, budget the seconds a side may spend on
# them (at least one timed run), so that the whole run stays a few minutes.
VARIANTS = [
    ("mlp_b1", lambda: mlp(1), 200, 2),
    ("mlp_b64", lambda: mlp(64), 50, 3),
    ("cnn_b1", lambda: cnn(1), 20, 3),
    ("cnn_b16", lambda: cnn(16), 5, 5),
    ("bert_s32", lambda: bert(32), 20, 3),
    ("bert_s128", lambda: bert(128), 10, 4),
    ("bert_s384", lambda: bert(384), 5, 6),
    ("bert_gemms_s32", lambda: bert_gemms(32), 20, 2),
    ("bert_gemms_s128", lambda: bert_gemms(128), 10, 3),
    ("bert_gemms_s384", lambda: bert_gemms(384), 5, 4),
    ("resnet18_b1", resnet18, 3, 10),
]


def main():
    if len(sys.argv) < 2:
        sys.exit("usage: gen.py OUT [NAME...]")
    out, want = sys.argv[1], set(sys.argv[2:])
    os.makedirs(out, exist_ok=True)
    unknown = want - {v[0] for v in VARIANTS}
    if unknown:
        sys.exit("gen.py: no variant %s (have %s)" % (", ".join(sorted(unknown)), ", ".join(v[0] for v in VARIANTS)))
    manifest = []
    for name, build, reps, budget in VARIANTS:
        if want and name not in want:
            continue
        m = build()
        path = os.path.join(out, name)
        with open(path + ".tvms", "w") as f:
            f.write(m.tvms())
        onnx.save(m.onnx(), path + ".onnx")
        np.savez(path + ".npz", **{n: a for n, _, a in m.params})
        np.save(path + ".in.npy", m.input_value)
        manifest.append({"name": name, "doc": m.doc.splitlines()[0], "input": m.input_name,
                         "output_shape": list(m.out_shape), "reps": reps, "budget_s": budget})
    with open(os.path.join(out, "models.json"), "w") as f:
        json.dump(manifest, f, indent=1)


if __name__ == "__main__":
    main()
