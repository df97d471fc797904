"""A tiny StableHLO builder: writes a program as
`jax.jit(f).lower(...).as_text()` does (pretty op forms, weights as @main
arguments, `precision = [DEFAULT, DEFAULT]`, every broadcast spelled out
with broadcast_in_dim), and counts the useful FLOPs of its dot_generals and
convolutions.  Shapes are checked as ops are added, so a model that does not
fit together fails here rather than in xrt.

    b = Builder("mlp")
    x = b.arg((2, 3))
    y = b.add(x, b.full(1.0, x.shape))
    b.ret([y])
    text = b.text()

Only what the models of bench/models use is here.  Used by Debian's
/usr/bin/python3 (numpy only).
"""
import math

import numpy as np

_DT = {"f32": np.float32, "i32": np.int32, "i1": np.bool_}


def ttype(shape, dtype="f32"):
    """tensor<2x3xf32>"""
    return "tensor<%s%s>" % ("".join("%dx" % d for d in shape), dtype)


def fmt_float(v):
    """An f32 literal as MLIR prints it: 1.000000e+00 when six digits are
    exact, else the shortest decimal that reads back; infinities in hex."""
    f = np.float32(v)
    if np.isinf(f):
        return "0x7F800000" if f > 0 else "0xFF800000"
    s = "%.6e" % float(f)
    if np.float32(float(s)) == f:
        return s
    return repr(float(f)) if np.float32(repr(float(f))) == f else "%.9e" % float(f)


class Value:
    def __init__(self, name, shape, dtype="f32"):
        self.name, self.shape, self.dtype = name, tuple(shape), dtype

    @property
    def type(self):
        return ttype(self.shape, self.dtype)

    def __repr__(self):
        return "%s : %s" % (self.name, self.type)


class Builder:
    def __init__(self, name):
        self.name = name
        self.args = []
        self.lines = []
        self.indent = 4
        self.next_id = 0
        self.counts = {}
        self.flops = 0
        self.results = None

    # ---- names and lines ----
    def _fresh(self, base=None):
        if base is None:
            n = "%%%d" % self.next_id
            self.next_id += 1
            return n
        k = self.counts.get(base, -1)
        self.counts[base] = k + 1
        return "%%%s" % base if k < 0 else "%%%s_%d" % (base, k)

    def _emit(self, line):
        self.lines.append(" " * self.indent + line)

    def _op(self, text, shape, dtype="f32", base=None):
        v = Value(self._fresh(base), shape, dtype)
        self._emit("%s = %s" % (v.name, text))
        return v

    # ---- arguments and constants ----
    def arg(self, shape, dtype="f32"):
        v = Value("%%arg%d" % len(self.args), shape, dtype)
        self.args.append(v)
        return v

    def const(self, value, dtype="f32"):
        """A scalar constant (%cst for floats, %c for integers)."""
        if dtype == "f32":
            lit, base = fmt_float(value), "cst"
        elif dtype == "i1":
            lit, base = "true" if value else "false", "c"
        else:
            lit, base = "%d" % int(value), "c"
        return self._op("stablehlo.constant dense<%s> : %s" % (lit, ttype((), dtype)), (),
                        dtype, base)

    def bcast(self, v, shape, dims):
        """broadcast_in_dim: operand dimension i goes to result dimension dims[i]."""
        shape = tuple(shape)
        assert len(dims) == len(v.shape), (v.shape, dims)
        for i, d in enumerate(dims):
            assert v.shape[i] in (1, shape[d]), (v.shape, shape, dims)
        return self._op("stablehlo.broadcast_in_dim %s, dims = [%s] : (%s) -> %s" %
                        (v.name, ", ".join(map(str, dims)), v.type, ttype(shape, v.dtype)),
                        shape, v.dtype)

    def full(self, value, shape, dtype="f32"):
        return self.bcast(self.const(value, dtype), shape, [])

    def bias(self, v, b, dim):
        """v + b broadcast along dimension dim of v."""
        return self.add(v, self.bcast(b, v.shape, [dim]))

    # ---- elementwise ----
    def _binary(self, op, a, b):
        assert a.shape == b.shape and a.dtype == b.dtype, (op, a, b)
        return self._op("stablehlo.%s %s, %s : %s" % (op, a.name, b.name, a.type), a.shape,
                        a.dtype)

    def add(self, a, b): return self._binary("add", a, b)
    def sub(self, a, b): return self._binary("subtract", a, b)
    def mul(self, a, b): return self._binary("multiply", a, b)
    def div(self, a, b): return self._binary("divide", a, b)
    def max(self, a, b): return self._binary("maximum", a, b)
    def min(self, a, b): return self._binary("minimum", a, b)

    def _unary(self, op, a):
        return self._op("stablehlo.%s %s : %s" % (op, a.name, a.type), a.shape, a.dtype)

    def neg(self, a): return self._unary("negate", a)
    def exp(self, a): return self._unary("exponential", a)
    def log(self, a): return self._unary("log", a)
    def tanh(self, a): return self._unary("tanh", a)
    def rsqrt(self, a): return self._unary("rsqrt", a)
    def logistic(self, a): return self._unary("logistic", a)

    def scale(self, a, s):
        """a * s for a Python number s (a broadcast constant, as JAX writes it)."""
        return self.mul(a, self.full(s, a.shape))

    def compare(self, a, b, direction, kind=None):
        assert a.shape == b.shape
        kind = kind or ("FLOAT" if a.dtype == "f32" else "SIGNED")
        return self._op("stablehlo.compare  %s, %s, %s,  %s : (%s, %s) -> %s" %
                        (direction, a.name, b.name, kind, a.type, b.type,
                         ttype(a.shape, "i1")), a.shape, "i1")

    def select(self, p, a, b):
        assert p.shape == a.shape == b.shape and p.dtype == "i1"
        return self._op("stablehlo.select %s, %s, %s : %s, %s" %
                        (p.name, a.name, b.name, p.type, a.type), a.shape, a.dtype)

    def clamp(self, lo, x, hi):
        """lo and hi: scalars (Python numbers)."""
        lo, hi = self.const(lo), self.const(hi)
        return self._op("stablehlo.clamp %s, %s, %s : (%s, %s, %s) -> %s" %
                        (lo.name, x.name, hi.name, lo.type, x.type, hi.type, x.type),
                        x.shape, x.dtype)

    def convert(self, a, dtype):
        return self._op("stablehlo.convert %s : (%s) -> %s" %
                        (a.name, a.type, ttype(a.shape, dtype)), a.shape, dtype)

    def iota(self, shape, dim, dtype="i32"):
        return self._op("stablehlo.iota dim = %d : %s" % (dim, ttype(shape, dtype)), shape, dtype)

    # ---- shapes ----
    def reshape(self, a, shape):
        assert math.prod(shape) == math.prod(a.shape), (a.shape, shape)
        return self._op("stablehlo.reshape %s : (%s) -> %s" %
                        (a.name, a.type, ttype(shape, a.dtype)), shape, a.dtype)

    def transpose(self, a, perm):
        shape = tuple(a.shape[p] for p in perm)
        return self._op("stablehlo.transpose %s, dims = [%s] : (%s) -> %s" %
                        (a.name, ", ".join(map(str, perm)), a.type, ttype(shape, a.dtype)),
                        shape, a.dtype)

    def slice(self, a, start, limit):
        shape = tuple(l - s for s, l in zip(start, limit))
        return self._op("stablehlo.slice %s [%s] : (%s) -> %s" %
                        (a.name, ", ".join("%d:%d" % sl for sl in zip(start, limit)), a.type,
                         ttype(shape, a.dtype)), shape, a.dtype)

    def concat(self, vals, dim):
        shape = list(vals[0].shape)
        shape[dim] = sum(v.shape[dim] for v in vals)
        return self._op("stablehlo.concatenate %s, dim = %d : (%s) -> %s" %
                        (", ".join(v.name for v in vals), dim,
                         ", ".join(v.type for v in vals), ttype(shape, vals[0].dtype)),
                        shape, vals[0].dtype)

    def dynamic_slice(self, a, idx, sizes):
        return self._op("stablehlo.dynamic_slice %s, %s, sizes = [%s] : (%s, %s) -> %s" %
                        (a.name, ", ".join(i.name for i in idx), ", ".join(map(str, sizes)),
                         a.type, ", ".join(i.type for i in idx), ttype(sizes, a.dtype)),
                        sizes, a.dtype)

    def dynamic_update_slice(self, a, upd, idx):
        return self._op("stablehlo.dynamic_update_slice %s, %s, %s : (%s, %s, %s) -> %s" %
                        (a.name, upd.name, ", ".join(i.name for i in idx), a.type, upd.type,
                         ", ".join(i.type for i in idx), a.type), a.shape, a.dtype)

    # ---- products ----
    def dot(self, a, b, lc, rc, lb=(), rb=()):
        """dot_general with contracting dims lc x rc and batching dims lb x rb:
        the result is batch dims, then a's free dims, then b's."""
        for i, j in zip(lc, rc):
            assert a.shape[i] == b.shape[j], (a.shape, b.shape, lc, rc)
        for i, j in zip(lb, rb):
            assert a.shape[i] == b.shape[j], (a.shape, b.shape, lb, rb)
        batch = [a.shape[i] for i in lb]
        af = [d for i, d in enumerate(a.shape) if i not in lc and i not in lb]
        bf = [d for i, d in enumerate(b.shape) if i not in rc and i not in rb]
        shape = tuple(batch + af + bf)
        self.flops += 2 * math.prod(shape) * math.prod(a.shape[i] for i in lc)
        bd = ""
        if lb:
            bd = "batching_dims = [%s] x [%s], " % (", ".join(map(str, lb)),
                                                    ", ".join(map(str, rb)))
        return self._op(
            "stablehlo.dot_general %s, %s, %scontracting_dims = [%s] x [%s], "
            "precision = [DEFAULT, DEFAULT] : (%s, %s) -> %s" %
            (a.name, b.name, bd, ", ".join(map(str, lc)), ", ".join(map(str, rc)), a.type,
             b.type, ttype(shape)), shape)

    def matmul(self, a, w):
        """a[..., k] x w[k, n]."""
        return self.dot(a, w, [len(a.shape) - 1], [0])

    def conv(self, x, w, stride=1, pad=0, layout="nchw", groups=1):
        """2-D convolution: NCHW input with OIHW kernel, or NHWC with HWIO;
        pad on every side of both spatial dimensions."""
        if layout == "nchw":
            n, c, h, wd = x.shape
            o, i, kh, kw = w.shape
            dn = "[b, f, 0, 1]x[o, i, 0, 1]->[b, f, 0, 1]"
        else:
            n, h, wd, c = x.shape
            kh, kw, i, o = w.shape
            dn = "[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]"
        assert i * groups == c, (x.shape, w.shape, groups)
        oh = (h + 2 * pad - kh) // stride + 1
        ow = (wd + 2 * pad - kw) // stride + 1
        shape = (n, o, oh, ow) if layout == "nchw" else (n, oh, ow, o)
        self.flops += 2 * math.prod(shape) * i * kh * kw
        return self._op(
            "stablehlo.convolution(%s, %s) dim_numbers = %s, window = {stride = [%d, %d], "
            "pad = [[%d, %d], [%d, %d]], rhs_dilate = [1, 1]} {batch_group_count = 1 : i64, "
            "feature_group_count = %d : i64, precision_config = [#stablehlo<precision DEFAULT>, "
            "#stablehlo<precision DEFAULT>]} : (%s, %s) -> %s" %
            (x.name, w.name, dn, stride, stride, pad, pad, pad, pad, groups, x.type, w.type,
             ttype(shape)), shape)

    # ---- reductions ----
    def reduce(self, a, dims, kind="add"):
        init = self.const(0.0 if kind == "add" else -np.inf)
        shape = tuple(d for i, d in enumerate(a.shape) if i not in dims)
        op = "add" if kind == "add" else "maximum"
        return self._op("stablehlo.reduce(%s init: %s) applies stablehlo.%s across "
                        "dimensions = [%s] : (%s, %s) -> %s" %
                        (a.name, init.name, op, ", ".join(map(str, dims)), a.type, init.type,
                         ttype(shape)), shape)

    def reduce_window_max(self, a, window, strides, padding):
        """padding: (low, high) per dimension."""
        init = self.const(-np.inf)
        shape = tuple((d + lo + hi - k) // s + 1
                      for d, k, s, (lo, hi) in zip(a.shape, window, strides, padding))
        v = Value(self._fresh(), shape)
        pad = "[%s]" % ", ".join("[%d, %d]" % p for p in padding)
        self._emit('%s = "stablehlo.reduce_window"(%s, %s) <{padding = dense<%s> : '
                   'tensor<%dx2xi64>, window_dimensions = array<i64: %s>, '
                   'window_strides = array<i64: %s>}> ({' %
                   (v.name, a.name, init.name, pad, len(shape), ", ".join(map(str, window)),
                    ", ".join(map(str, strides))))
        self._emit("^bb0(%arg_l: tensor<f32>, %arg_r: tensor<f32>):")
        r = self._fresh()
        self._emit("  %s = stablehlo.maximum %%arg_l, %%arg_r : tensor<f32>" % r)
        self._emit("  stablehlo.return %s : tensor<f32>" % r)
        self._emit("}) : (%s, tensor<f32>) -> %s" % (a.type, ttype(shape)))
        return v

    def batch_norm_inference(self, x, scale, offset, mean, var, eps, feature_index):
        return self._op('"stablehlo.batch_norm_inference"(%s, %s, %s, %s, %s) '
                        '<{epsilon = %s : f32, feature_index = %d : i64}> : '
                        '(%s, %s, %s, %s, %s) -> %s' %
                        (x.name, scale.name, offset.name, mean.name, var.name, fmt_float(eps),
                         feature_index, x.type, scale.type, offset.type, mean.type, var.type,
                         x.type), x.shape)

    # ---- control flow ----
    def while_loop(self, init, cond_fn, body_fn, trips=1):
        """stablehlo.while over the values init: cond_fn(builder, carried)
        returns an i1 scalar, body_fn(builder, carried) the next carried
        values.  Returns the final values.  The body's FLOPs count trips
        times."""
        base = self._fresh()
        names = [self._fresh("iterArg") for _ in init]
        carried = [Value(n, v.shape, v.dtype) for n, v in zip(names, init)]
        types = ", ".join(v.type for v in init)
        self._emit("%s:%d = stablehlo.while(%s) : %s" %
                   (base, len(init),
                    ", ".join("%s = %s" % (n, v.name) for n, v in zip(names, init)), types))
        self._emit(" cond {")
        self.indent += 2
        c = cond_fn(self, carried)
        self._emit("stablehlo.return %s : %s" % (c.name, c.type))
        self.indent -= 2
        self._emit("} do {")
        self.indent += 2
        before = self.flops
        nxt = body_fn(self, carried)
        self.flops += (self.flops - before) * (trips - 1)
        assert [v.type for v in nxt] == [v.type for v in init]
        self._emit("stablehlo.return %s : %s" % (", ".join(v.name for v in nxt), types))
        self.indent -= 2
        self._emit("}")
        return [Value("%s#%d" % (base, i), v.shape, v.dtype) for i, v in enumerate(init)]

    # ---- the program ----
    def ret(self, values):
        self.results = list(values)
        self._emit("return %s : %s" % (", ".join(v.name for v in values),
                                       ", ".join(v.type for v in values)))

    def text(self):
        assert self.results is not None, "ret() first"
        args = ", ".join("%s: %s" % (a.name, a.type) for a in self.args)
        res = ", ".join('%s {jax.result_info = "[%d]"}' % (r.type, i)
                        for i, r in enumerate(self.results))
        head = ("module @jit_%s attributes {mhlo.num_partitions = 1 : i32, "
                "mhlo.num_replicas = 1 : i32} {\n"
                "  func.func public @main(%s) -> (%s) {\n" % (self.name, args, res))
        return head + "\n".join(self.lines) + "\n  }\n}\n"
