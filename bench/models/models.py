"""The model zoo of `make bench-models`: each model written twice with the
same seeded weights, once as StableHLO through hlo.Builder (the way
`jax.jit(f).lower(...).as_text()` writes it: weights as @main arguments)
and once as an ordinary PyTorch model (what a PyTorch user would write:
F.conv2d, F.layer_norm, torch.nn.LSTM, autograd).

A model is a Model: its StableHLO text, its @main arguments (numpy arrays,
the data inputs first), its FLOPs (dot_general and convolution only), and
torch_setup(args) -> (fn, torch_args): fn(*torch_args) runs one call in
PyTorch and returns the outputs in @main's result order.  Used by Debian's
/usr/bin/python3 (numpy, torch).
"""
import math

import numpy as np

import hlo

F32_MIN = float(np.finfo(np.float32).min)


class Model:
    def __init__(self, name, builder, args, torch_setup, train=False, onnx=True,
                 num_inputs=1):
        self.name = name
        self.num_inputs = num_inputs  # args[:num_inputs] are data, the rest weights
        self.hlo = builder.text()
        self.flops = builder.flops
        self.args = [np.ascontiguousarray(a, dtype=a.dtype) for a in args]
        self.torch_setup = torch_setup
        self.train = train   # needs autograd (no torch.no_grad())
        self.onnx = onnx     # torch.onnx.export can write it


def _rng(seed):
    return np.random.default_rng(seed)


def _w(rng, shape, fan_in):
    return (rng.standard_normal(shape) / math.sqrt(fan_in)).astype(np.float32)


def _torch():
    import torch  # only the baseline needs it
    return torch


# ---------------------------------------------------------------------------
# Shared StableHLO pieces, as JAX lowers them.

def _relu(b, x):
    return b.max(x, b.full(0.0, x.shape))


def _softmax_last(b, x):
    """jax.nn.softmax over the last axis."""
    r = len(x.shape) - 1
    keep = list(range(r))
    m = b.bcast(b.reduce(x, [r], "max"), x.shape, keep)
    e = b.exp(b.sub(x, m))
    s = b.bcast(b.reduce(e, [r], "add"), x.shape, keep)
    return b.div(e, s)


def _layer_norm(b, x, g, beta, eps=1e-5):
    """Over the last axis of a 2-D x, as flax.linen.LayerNorm (two passes)."""
    n = x.shape[1]
    mean = b.bcast(b.div(b.reduce(x, [1]), b.full(float(n), (x.shape[0],))), x.shape, [0])
    xc = b.sub(x, mean)
    var = b.div(b.reduce(b.mul(xc, xc), [1]), b.full(float(n), (x.shape[0],)))
    inv = b.rsqrt(b.add(var, b.full(eps, var.shape)))
    y = b.mul(xc, b.bcast(inv, x.shape, [0]))
    return b.add(b.mul(y, b.bcast(g, x.shape, [1])), b.bcast(beta, x.shape, [1]))


def _gelu_tanh(b, x):
    """jax.nn.gelu(approximate=True)."""
    x3 = b.mul(b.mul(x, x), x)
    inner = b.add(x, b.scale(x3, 0.044715))
    t = b.tanh(b.scale(inner, math.sqrt(2.0 / math.pi)))
    return b.mul(b.scale(x, 0.5), b.add(b.full(1.0, x.shape), t))


# ---------------------------------------------------------------------------
# mlp_train: one SGD step of a 784-512-10 MLP on a batch of 256 (softmax
# cross-entropy against one-hot labels), forward + backward as jax.grad
# writes it + the update.  Results: loss, then the new w1, b1, w2, b2.

def mlp_train(seed=0):
    B, I, H, O, lr = 256, 784, 512, 10, 0.1
    rng = _rng(seed)
    x = rng.standard_normal((B, I)).astype(np.float32)
    y = np.eye(O, dtype=np.float32)[rng.integers(0, O, B)]
    w1, b1 = _w(rng, (I, H), I), (0.1 * rng.standard_normal(H)).astype(np.float32)
    w2, b2 = _w(rng, (H, O), H), (0.1 * rng.standard_normal(O)).astype(np.float32)

    b = hlo.Builder("mlp_train")
    ax, ay, aw1, ab1, aw2, ab2 = (b.arg(a.shape) for a in (x, y, w1, b1, w2, b2))
    hp = b.bias(b.matmul(ax, aw1), ab1, 1)
    h = _relu(b, hp)
    logits = b.bias(b.matmul(h, aw2), ab2, 1)
    m = b.bcast(b.reduce(logits, [1], "max"), (B, O), [0])
    sh = b.sub(logits, m)
    e = b.exp(sh)
    se = b.reduce(e, [1])
    logp = b.sub(sh, b.bcast(b.log(se), (B, O), [0]))
    loss = b.div(b.neg(b.reduce(b.mul(ay, logp), [0, 1])), b.const(float(B)))
    # backward
    g_logp = b.mul(b.full(-1.0 / B, (B, O)), ay)
    g_lse = b.neg(b.reduce(g_logp, [1]))
    g_e = b.bcast(b.div(g_lse, se), (B, O), [0])
    g_logits = b.add(g_logp, b.mul(g_e, e))
    g_b2 = b.reduce(g_logits, [0])
    g_w2 = b.dot(h, g_logits, [0], [0])
    g_h = b.dot(g_logits, aw2, [1], [1])
    g_hp = b.select(b.compare(hp, b.full(0.0, hp.shape), "GT"), g_h, b.full(0.0, hp.shape))
    g_b1 = b.reduce(g_hp, [0])
    g_w1 = b.dot(ax, g_hp, [0], [0])
    new = [b.sub(p, b.scale(g, lr)) for p, g in ((aw1, g_w1), (ab1, g_b1), (aw2, g_w2),
                                                  (ab2, g_b2))]
    b.ret([loss] + new)

    def torch_setup(args):
        torch = _torch()

        def step(x, y, w1, b1, w2, b2):
            ws = [t.detach().requires_grad_() for t in (w1, b1, w2, b2)]
            h = torch.relu(torch.addmm(ws[1], x, ws[0]))
            logits = torch.addmm(ws[3], h, ws[2])
            loss = -(y * torch.log_softmax(logits, 1)).sum() / B
            grads = torch.autograd.grad(loss, ws)
            with torch.no_grad():
                return [loss.detach()] + [w - lr * g for w, g in zip(ws, grads)]
        return step, [torch.from_numpy(a) for a in args]

    return Model("mlp_train", b, [x, y, w1, b1, w2, b2], torch_setup, train=True, onnx=False,
                 num_inputs=2)


# ---------------------------------------------------------------------------
# cnn_nchw: SqueezeNet 1.0 (torchvision's squeezenet1_0) on 1x3x224x224,
# NCHW activations, OIHW kernels, ceil-mode 3x3/2 max pools.  Result:
# the 1x1000 class scores.

_FIRES = [(96, 16, 64), (128, 16, 64), (128, 32, 128), "pool", (256, 32, 128),
          (256, 48, 192), (384, 48, 192), (384, 64, 256), "pool", (512, 64, 256)]


def _ceil_pool_pad(n, k=3, s=2):
    """The high padding that makes a VALID pool of n ceil-mode."""
    out = -(-(n - k) // s) + 1
    return (out - 1) * s + k - n


def cnn_nchw(seed=0):
    rng = _rng(seed)
    args = [rng.standard_normal((1, 3, 224, 224)).astype(np.float32)]

    def conv_w(o, i, k):
        args.append(_w(rng, (o, i, k, k), i * k * k) * np.float32(math.sqrt(2.0)))
        args.append((0.01 * rng.standard_normal(o)).astype(np.float32))
        return len(args) - 2

    stem = conv_w(96, 3, 7)
    fires = []
    for f in _FIRES:
        if f == "pool":
            fires.append("pool")
            continue
        cin, sq, ex = f
        fires.append((conv_w(sq, cin, 1), conv_w(ex, sq, 1), conv_w(ex, sq, 3)))
    head = conv_w(1000, 512, 1)

    b = hlo.Builder("cnn_nchw")
    av = [b.arg(a.shape) for a in args]

    def conv_relu(x, wi, stride=1, pad=0):
        y = b.conv(x, av[wi], stride, pad)
        return _relu(b, b.bias(y, av[wi + 1], 1))

    def pool(x):
        ph, pw = _ceil_pool_pad(x.shape[2]), _ceil_pool_pad(x.shape[3])
        return b.reduce_window_max(x, (1, 1, 3, 3), (1, 1, 2, 2),
                                   ((0, 0), (0, 0), (0, ph), (0, pw)))

    x = pool(conv_relu(av[0], stem, 2))
    for f in fires:
        if f == "pool":
            x = pool(x)
            continue
        s = conv_relu(x, f[0])
        x = b.concat([conv_relu(s, f[1]), conv_relu(s, f[2], 1, 1)], 1)
    x = conv_relu(x, head)
    n = x.shape[2] * x.shape[3]
    y = b.div(b.reduce(x, [2, 3]), b.full(float(n), (1, 1000)))
    b.ret([y])

    def torch_setup(args):
        torch = _torch()
        import torch.nn.functional as F
        t = [torch.from_numpy(a) for a in args]

        def forward(x, *w):
            def cr(x, i, stride=1, pad=0):
                return F.relu(F.conv2d(x, w[i - 1], w[i], stride=stride, padding=pad))
            x = F.max_pool2d(cr(x, stem, 2), 3, 2, ceil_mode=True)
            for f in fires:
                if f == "pool":
                    x = F.max_pool2d(x, 3, 2, ceil_mode=True)
                    continue
                s = cr(x, f[0])
                x = torch.cat([cr(s, f[1]), cr(s, f[2], 1, 1)], 1)
            x = cr(x, head)
            return [torch.flatten(F.adaptive_avg_pool2d(x, 1), 1)]
        return forward, t

    return Model("cnn_nchw", b, args, torch_setup)


# ---------------------------------------------------------------------------
# gpt_prefill: 2 GPT-2-size decoder layers (d 768, 12 heads, tanh GELU)
# and the final layer norm on 128 tokens.  Result: 128x768.

D, NH, HD = 768, 12, 64


def _gpt_weights(rng, layers):
    ws = []
    for _ in range(layers):
        ws += [(1 + 0.1 * rng.standard_normal(D)).astype(np.float32),
               (0.1 * rng.standard_normal(D)).astype(np.float32),
               _w(rng, (D, 3 * D), D), (0.02 * rng.standard_normal(3 * D)).astype(np.float32),
               _w(rng, (D, D), D), (0.02 * rng.standard_normal(D)).astype(np.float32),
               (1 + 0.1 * rng.standard_normal(D)).astype(np.float32),
               (0.1 * rng.standard_normal(D)).astype(np.float32),
               _w(rng, (D, 4 * D), D), (0.02 * rng.standard_normal(4 * D)).astype(np.float32),
               _w(rng, (4 * D, D), 4 * D), (0.02 * rng.standard_normal(D)).astype(np.float32)]
    ws += [(1 + 0.1 * rng.standard_normal(D)).astype(np.float32),
           (0.1 * rng.standard_normal(D)).astype(np.float32)]
    return ws


def _gpt_mlp(b, x, p):
    h = _layer_norm(b, x, p[6], p[7])
    h = _gelu_tanh(b, b.bias(b.matmul(h, p[8]), p[9], 1))
    return b.add(x, b.bias(b.matmul(h, p[10]), p[11], 1))


def gpt_prefill(seed=0, layers=2, T=128):
    rng = _rng(seed)
    x = rng.standard_normal((T, D)).astype(np.float32)
    ws = _gpt_weights(rng, layers)

    b = hlo.Builder("gpt_prefill")
    ax = b.arg(x.shape)
    aw = [b.arg(w.shape) for w in ws]
    mask = b.compare(b.iota((T, T), 0), b.iota((T, T), 1), "GE")
    mask = b.bcast(mask, (NH, T, T), [1, 2])
    h = ax
    for l in range(layers):
        p = aw[12 * l:12 * l + 12]
        a = _layer_norm(b, h, p[0], p[1])
        qkv = b.bias(b.matmul(a, p[2]), p[3], 1)
        q, k, v = (b.reshape(b.slice(qkv, [0, i * D], [T, (i + 1) * D]), (T, NH, HD))
                   for i in range(3))
        s = b.scale(b.dot(q, k, [2], [2], [1], [1]), 1.0 / math.sqrt(HD))  # NH x T x T
        s = b.select(mask, s, b.full(F32_MIN, s.shape))
        o = b.dot(_softmax_last(b, s), v, [2], [0], [0], [1])               # NH x T x HD
        o = b.reshape(b.transpose(o, [1, 0, 2]), (T, D))
        h = b.add(h, b.bias(b.matmul(o, p[4]), p[5], 1))
        h = _gpt_mlp(b, h, p)
    b.ret([_layer_norm(b, h, aw[-2], aw[-1])])

    def torch_setup(args):
        torch = _torch()
        import torch.nn.functional as F
        keep = torch.tril(torch.ones(T, T, dtype=torch.bool))

        def forward(x, *w):
            for l in range(layers):
                p = w[12 * l:12 * l + 12]
                a = F.layer_norm(x, (D,), p[0], p[1], 1e-5)
                q, k, v = torch.addmm(p[3], a, p[2]).split(D, 1)
                q, k, v = (t.view(T, NH, HD).transpose(0, 1) for t in (q, k, v))
                s = torch.matmul(q, k.transpose(1, 2)) * (1.0 / math.sqrt(HD))
                s = s.masked_fill(~keep, F32_MIN)
                o = torch.matmul(torch.softmax(s, -1), v).transpose(0, 1).reshape(T, D)
                x = x + torch.addmm(p[5], o, p[4])
                a = F.layer_norm(x, (D,), p[6], p[7], 1e-5)
                a = F.gelu(torch.addmm(p[9], a, p[8]), approximate="tanh")
                x = x + torch.addmm(p[11], a, p[10])
            return [F.layer_norm(x, (D,), w[-2], w[-1], 1e-5)]
        return forward, [torch.from_numpy(a) for a in args]

    return Model("gpt_prefill", b, [x] + ws, torch_setup)


# ---------------------------------------------------------------------------
# gpt_decode: the same 2 layers on one token against a 512-token KV cache
# (per layer a 512x768 K and V, inputs): the token's key and value are
# appended (concatenate) and it attends to all 513.  Results: the final
# layer norm (1x768), then each layer's new key and value (1x768).

def gpt_decode(seed=0, layers=2, P=512):
    rng = _rng(seed)
    x = rng.standard_normal((1, D)).astype(np.float32)
    caches = [rng.standard_normal((P, D)).astype(np.float32) for _ in range(2 * layers)]
    ws = _gpt_weights(rng, layers)
    S = P + 1

    b = hlo.Builder("gpt_decode")
    ax = b.arg(x.shape)
    ac = [b.arg(c.shape) for c in caches]
    aw = [b.arg(w.shape) for w in ws]
    h, new_kv = ax, []
    for l in range(layers):
        p = aw[12 * l:12 * l + 12]
        a = _layer_norm(b, h, p[0], p[1])
        qkv = b.bias(b.matmul(a, p[2]), p[3], 1)
        q, k, v = (b.slice(qkv, [0, i * D], [1, (i + 1) * D]) for i in range(3))
        new_kv += [k, v]
        K = b.reshape(b.concat([ac[2 * l], k], 0), (S, NH, HD))
        V = b.reshape(b.concat([ac[2 * l + 1], v], 0), (S, NH, HD))
        s = b.scale(b.dot(b.reshape(q, (NH, HD)), K, [1], [2], [0], [1]),
                    1.0 / math.sqrt(HD))                                     # NH x S
        o = b.dot(_softmax_last(b, s), V, [1], [0], [0], [1])                # NH x HD
        h = b.add(h, b.bias(b.matmul(b.reshape(o, (1, D)), p[4]), p[5], 1))
        h = _gpt_mlp(b, h, p)
    b.ret([_layer_norm(b, h, aw[-2], aw[-1])] + new_kv)

    def torch_setup(args):
        torch = _torch()
        import torch.nn.functional as F

        def forward(x, *rest):
            cs, w = rest[:2 * layers], rest[2 * layers:]
            kv = []
            for l in range(layers):
                p = w[12 * l:12 * l + 12]
                a = F.layer_norm(x, (D,), p[0], p[1], 1e-5)
                q, k, v = torch.addmm(p[3], a, p[2]).split(D, 1)
                kv += [k, v]
                K = torch.cat([cs[2 * l], k]).view(S, NH, HD).transpose(0, 1)
                V = torch.cat([cs[2 * l + 1], v]).view(S, NH, HD).transpose(0, 1)
                s = torch.matmul(q.view(NH, 1, HD), K.transpose(1, 2)) * (1.0 / math.sqrt(HD))
                o = torch.matmul(torch.softmax(s, -1), V).reshape(1, D)
                x = x + torch.addmm(p[5], o, p[4])
                a = F.layer_norm(x, (D,), p[6], p[7], 1e-5)
                a = F.gelu(torch.addmm(p[9], a, p[8]), approximate="tanh")
                x = x + torch.addmm(p[11], a, p[10])
            return [F.layer_norm(x, (D,), w[-2], w[-1], 1e-5)] + kv
        return forward, [torch.from_numpy(a) for a in args]

    return Model("gpt_decode", b, [x] + caches + ws, torch_setup, num_inputs=1 + 2 * layers)


# ---------------------------------------------------------------------------
# rnn: an LSTM (input 128, hidden 256, batch 8) over 64 steps, as jax.lax.scan
# lowers it: a stablehlo.while whose carried values are the step, h, c,
# the outputs, the inputs and the weights; each step dynamic_slices its
# input and dynamic_update_slices its output.  Weights in PyTorch's layout
# (gates i, f, g, o).  Results: the 64x8x256 outputs, the last h and c.

def rnn(seed=0, T=64, B=8, I=128, H=256):
    rng = _rng(seed)
    x = rng.standard_normal((T, B, I)).astype(np.float32)
    w_ih, w_hh = _w(rng, (4 * H, I), I), _w(rng, (4 * H, H), H)
    b_ih = (0.1 * rng.standard_normal(4 * H)).astype(np.float32)
    b_hh = (0.1 * rng.standard_normal(4 * H)).astype(np.float32)

    b = hlo.Builder("rnn")
    ax, awi, awh, abi, abh = (b.arg(a.shape) for a in (x, w_ih, w_hh, b_ih, b_hh))
    init = [b.const(0, "i32"), b.full(0.0, (B, H)), b.full(0.0, (B, H)),
            b.full(0.0, (T, B, H)), ax, awi, awh, abi, abh]

    def cond(b, v):
        return b.compare(v[0], b.const(T, "i32"), "LT")

    def body(b, v):
        i, h, c, ys, xs, wi, wh, bi, bh = v
        z = b.const(0, "i32")
        xt = b.reshape(b.dynamic_slice(xs, [i, z, z], (1, B, I)), (B, I))
        g = b.add(b.dot(xt, wi, [1], [1]), b.dot(h, wh, [1], [1]))
        g = b.bias(b.bias(g, bi, 1), bh, 1)
        gi, gf, gg, go = (b.slice(g, [0, k * H], [B, (k + 1) * H]) for k in range(4))
        c2 = b.add(b.mul(b.logistic(gf), c), b.mul(b.logistic(gi), b.tanh(gg)))
        h2 = b.mul(b.logistic(go), b.tanh(c2))
        ys2 = b.dynamic_update_slice(ys, b.reshape(h2, (1, B, H)), [i, z, z])
        return [b.add(i, b.const(1, "i32")), h2, c2, ys2, xs, wi, wh, bi, bh]

    out = b.while_loop(init, cond, body, trips=T)
    b.ret([out[3], out[1], out[2]])

    def torch_setup(args):
        torch = _torch()
        lstm = torch.nn.LSTM(I, H).requires_grad_(False)
        with torch.no_grad():
            for name, a in zip(("weight_ih_l0", "weight_hh_l0", "bias_ih_l0", "bias_hh_l0"),
                               args[1:]):
                getattr(lstm, name).copy_(torch.from_numpy(a))

        def forward(x):
            y, (h, c) = lstm(x)
            return [y, h[0], c[0]]
        return forward, [torch.from_numpy(args[0])]

    return Model("rnn", b, [x, w_ih, w_hh, b_ih, b_hh], torch_setup)


# ---------------------------------------------------------------------------
# Convolutional networks in NHWC with HWIO kernels (as JAX and flax write
# them); the PyTorch twins run NCHW with the same weights transposed.

def _bn_params(rng, c):
    return [(1 + 0.1 * rng.standard_normal(c)).astype(np.float32),     # scale
            (0.1 * rng.standard_normal(c)).astype(np.float32),         # offset
            (0.1 * rng.standard_normal(c)).astype(np.float32),         # mean
            (0.5 + rng.random(c)).astype(np.float32)]                  # variance


def _conv_bn_args(rng, args, k, cin, cout, groups=1):
    """Appends an HWIO kernel and its batch-norm parameters; returns the
    kernel's index."""
    fan_in = k * k * cin // groups
    args.append(_w(rng, (k, k, cin // groups, cout), fan_in) * np.float32(math.sqrt(2.0)))
    args += _bn_params(rng, cout)
    return len(args) - 5


def _bn_jax(b, x, scale, offset, mean, var, eps=1e-5):
    """Batch norm in inference as flax.linen.BatchNorm writes it (NHWC)."""
    c = len(x.shape) - 1
    mul = b.mul(b.rsqrt(b.add(var, b.full(eps, var.shape))), scale)
    y = b.mul(b.sub(x, b.bcast(mean, x.shape, [c])), b.bcast(mul, x.shape, [c]))
    return b.add(y, b.bcast(offset, x.shape, [c]))


def _oihw(a):
    return np.ascontiguousarray(a.transpose(3, 2, 0, 1))


# MobileNetV2 (width 1.0): expansion t, channels c, repeats n, stride s.
_MBV2 = [(1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 4, 2), (6, 96, 3, 1),
         (6, 160, 3, 2), (6, 320, 1, 1)]


def mobile(seed=0):
    """mobile: MobileNetV2 on 1x224x224x3: depthwise convolutions
    (feature_group_count = channels), batch norm as flax writes it with
    every weight and statistic an argument, ReLU6 as clamp, inverted
    residuals.  Result: the 1x1000 class scores."""
    rng = _rng(seed)
    args = [rng.standard_normal((1, 224, 224, 3)).astype(np.float32)]
    plan = [("conv", _conv_bn_args(rng, args, 3, 3, 32), 2, 1, True)]
    cin = 32
    blocks = []
    for t, c, n, s in _MBV2:
        for r in range(n):
            stride = s if r == 0 else 1
            hid = cin * t
            layers = []
            if t != 1:
                layers.append((_conv_bn_args(rng, args, 1, cin, hid), 1, 0, 1, True))
            layers.append((_conv_bn_args(rng, args, 3, hid, hid, hid), stride, 1, hid, True))
            layers.append((_conv_bn_args(rng, args, 1, hid, c), 1, 0, 1, False))
            blocks.append((layers, stride == 1 and cin == c))
            cin = c
    last = _conv_bn_args(rng, args, 1, cin, 1280)
    args += [_w(rng, (1280, 1000), 1280), (0.01 * rng.standard_normal(1000)).astype(np.float32)]

    b = hlo.Builder("mobile")
    av = [b.arg(a.shape) for a in args]

    def cbr(x, wi, stride, pad, groups, act):
        y = b.conv(x, av[wi], stride, pad, "nhwc", groups)
        y = _bn_jax(b, y, *av[wi + 1:wi + 5])
        return b.clamp(0.0, y, 6.0) if act else y

    x = cbr(av[0], plan[0][1], 2, 1, 1, True)
    for layers, res in blocks:
        y = x
        for wi, stride, pad, groups, act in layers:
            y = cbr(y, wi, stride, pad, groups, act)
        x = b.add(x, y) if res else y
    x = cbr(x, last, 1, 0, 1, True)
    x = b.div(b.reduce(x, [1, 2]), b.full(float(x.shape[1] * x.shape[2]), (1, 1280)))
    b.ret([b.bias(b.matmul(x, av[-2]), av[-1], 1)])

    def torch_setup(args):
        torch = _torch()
        import torch.nn.functional as F
        t = [torch.from_numpy(np.ascontiguousarray(args[0].transpose(0, 3, 1, 2)))]
        t += [torch.from_numpy(_oihw(a) if a.ndim == 4 else a) for a in args[1:]]

        def forward(x, *w):
            def cbr(x, wi, stride, pad, groups, act):
                y = F.conv2d(x, w[wi - 1], None, stride, pad, 1, groups)
                # w[wi - 1] is args[wi]: the kernel, then scale, offset, mean, var
                y = F.batch_norm(y, w[wi + 2], w[wi + 3], w[wi], w[wi + 1], False, 0.0, 1e-5)
                return F.relu6(y) if act else y
            x = cbr(x, plan[0][1], 2, 1, 1, True)
            for layers, res in blocks:
                y = x
                for wi, stride, pad, groups, act in layers:
                    y = cbr(y, wi, stride, pad, groups, act)
                x = x + y if res else y
            x = cbr(x, last, 1, 0, 1, True)
            x = torch.flatten(F.adaptive_avg_pool2d(x, 1), 1)
            return [torch.addmm(w[-1], x, w[-2])]
        return forward, t

    return Model("mobile", b, args, torch_setup)


# ResNet-18: blocks per stage, channels per stage.
_R18 = [(2, 64), (2, 128), (2, 256), (2, 512)]


def cnn_nhwc(seed=0):
    """cnn_nhwc: ResNet-18 on 1x224x224x3 in NHWC with HWIO kernels and
    stablehlo.batch_norm_inference (statistics as arguments), a 3x3/2 max
    pool with padding, 1x1/2 projection shortcuts.  Result: 1x1000."""
    rng = _rng(seed)
    args = [rng.standard_normal((1, 224, 224, 3)).astype(np.float32)]
    stem = _conv_bn_args(rng, args, 7, 3, 64)
    cin, stages = 64, []
    for n, c in _R18:
        for r in range(n):
            stride = 2 if r == 0 and c != 64 else 1
            c1 = _conv_bn_args(rng, args, 3, cin, c)
            c2 = _conv_bn_args(rng, args, 3, c, c)
            down = _conv_bn_args(rng, args, 1, cin, c) if stride != 1 or cin != c else None
            stages.append((c1, c2, down, stride))
            cin = c
    args += [_w(rng, (512, 1000), 512), (0.01 * rng.standard_normal(1000)).astype(np.float32)]

    b = hlo.Builder("cnn_nhwc")
    av = [b.arg(a.shape) for a in args]

    def cb(x, wi, stride, pad):
        y = b.conv(x, av[wi], stride, pad, "nhwc")
        return b.batch_norm_inference(y, *av[wi + 1:wi + 5], 1e-5, 3)

    x = _relu(b, cb(av[0], stem, 2, 3))
    x = b.reduce_window_max(x, (1, 3, 3, 1), (1, 2, 2, 1), ((0, 0), (1, 1), (1, 1), (0, 0)))
    for c1, c2, down, stride in stages:
        y = _relu(b, cb(x, c1, stride, 1))
        y = cb(y, c2, 1, 1)
        sc = cb(x, down, stride, 0) if down is not None else x
        x = _relu(b, b.add(y, sc))
    x = b.div(b.reduce(x, [1, 2]), b.full(float(x.shape[1] * x.shape[2]), (1, 512)))
    b.ret([b.bias(b.matmul(x, av[-2]), av[-1], 1)])

    def torch_setup(args):
        torch = _torch()
        import torch.nn.functional as F
        t = [torch.from_numpy(np.ascontiguousarray(args[0].transpose(0, 3, 1, 2)))]
        t += [torch.from_numpy(_oihw(a) if a.ndim == 4 else a) for a in args[1:]]

        def forward(x, *w):
            def cb(x, wi, stride, pad):
                y = F.conv2d(x, w[wi - 1], None, stride, pad)
                return F.batch_norm(y, w[wi + 2], w[wi + 3], w[wi], w[wi + 1], False, 0.0, 1e-5)
            x = F.max_pool2d(F.relu(cb(x, stem, 2, 3)), 3, 2, 1)
            for c1, c2, down, stride in stages:
                y = F.relu(cb(x, c1, stride, 1))
                y = cb(y, c2, 1, 1)
                x = F.relu(y + (cb(x, down, stride, 0) if down is not None else x))
            x = torch.flatten(F.adaptive_avg_pool2d(x, 1), 1)
            return [torch.addmm(w[-1], x, w[-2])]
        return forward, t

    return Model("cnn_nhwc", b, args, torch_setup)


MODELS = {
    "mlp_train": mlp_train,
    "cnn_nchw": cnn_nchw,
    "gpt_prefill": gpt_prefill,
    "gpt_decode": gpt_decode,
    "rnn": rnn,
    "mobile": mobile,
    "cnn_nhwc": cnn_nhwc,
}
