#!/usr/bin/python3
"""`make bench-models`: the model zoo (models.py) on xrt against PyTorch
eager and ONNX Runtime, printing KEY = NUMBER lines:

    bench_models.py --xrt BUILD/xrt --out DIR [--reps N] [--rounds R]
                    [--ort DIR] [MODEL...]

Per model M (gen.py writes it into DIR/M first):
  model.M.max_rel_err    max |xrt - torch| / max |torch| over the elements
                         of each result (`xrt run` of the model on its
                         arguments against PyTorch's results), the worst
                         result
  model.M.fusion_rel_diff
                         the same measure between xrt's results with and
                         without the simulator's fusion (XRT_SIM_NO_FUSION=1)
  model.M.xrt_ms         best call of `xrt bench --threads 1` (N calls
                         after 2 warm-up calls) over R rounds, in which
                         every timing below runs once, in turn
  model.M.torch_ms       best call of the PyTorch model, torch.set_num_threads(1)
                         and openblas_set_num_threads(1) (its matmuls run in
                         OpenBLAS, which has a thread pool of its own),
                         torch.no_grad() (autograd for mlp_train), N calls
                         after 2 warm-up calls
  model.M.ratio_torch    torch_ms / xrt_ms (higher is better for xrt)
  model.M.gflops         the model's dot_general and convolution FLOPs / xrt_ms
  model.M.xrt_ms_2t, model.M.torch_ms_2t, model.M.ratio_torch_2t
                         the same with two threads on each side
  model.M.ort_ms, model.M.ratio_ort, model.M.ort_ms_2t, model.M.ratio_ort_2t
                         ONNX Runtime (onnxruntime-node under DIR/ort, or
                         --ort DIR: see tools/deps.sh bench) running
                         torch.onnx.export of the same model with
                         intraOpNumThreads 1 and 2
A baseline that cannot run prints "# model.M.KEY: why" instead of its keys;
"# model.M.spread ..." gives each timing's best and worst round.
N is --reps (default 10, or $BENCH_MODELS_REPS); R is --rounds (default 3,
or $BENCH_MODELS_ROUNDS).  Needs Debian's
/usr/bin/python3 with python3-numpy (python3-torch for the baselines).
"""
import argparse
import json
import os
import subprocess
import sys
import time
import warnings

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.dont_write_bytecode = True  # no __pycache__ in the source tree

import gen  # noqa: E402
import models  # noqa: E402


def fail(msg):
    sys.stderr.write("bench_models.py: %s\n" % msg)
    sys.exit(2)


def xrt_inputs(d, n):
    out = []
    for k in range(n):
        out += ["--input", os.path.join(d, "arg_%d.npy" % k)]
    return out


def xrt_results(d, meta, xrt, outdir, env=None):
    """`xrt run` of the model on its arguments: its results, as float64."""
    r = subprocess.run([xrt, "run", os.path.join(d, "model.mlir"), "--output-dir", outdir] +
                       xrt_inputs(d, meta["num_args"]), stdout=subprocess.DEVNULL,
                       stderr=subprocess.PIPE, text=True, env=env)
    if r.returncode != 0:
        fail("xrt run %s failed: %s" % (d, r.stderr.strip()))
    return [np.load(os.path.join(outdir, "result_%d.npy" % k)).astype(np.float64)
            for k in range(meta["num_results"])]


def rel_diff(got, want):
    """max |got - want| / max |want| over the elements, the worst result."""
    worst = 0.0
    for k, (a, ref) in enumerate(zip(got, want)):
        if a.shape != ref.shape:
            fail("result %d is %s, expected %s" % (k, a.shape, ref.shape))
        scale = np.abs(ref).max() if ref.size else 0.0
        err = np.abs(a - ref).max() if ref.size else 0.0
        worst = max(worst, err / scale if scale > 0 else err)
    return worst


def max_rel_err(d, meta, xrt):
    """xrt's results against PyTorch's, and against xrt's own with the
    simulator's fusion off (XRT_SIM_NO_FUSION: every op its own loop), which
    must agree to the ops' own rounding."""
    fused = xrt_results(d, meta, xrt, os.path.join(d, "xrt_out"))
    refs = [np.load(os.path.join(d, "ref_%d.npy" % k)).astype(np.float64)
            for k in range(meta["num_results"])]
    env = dict(os.environ, XRT_SIM_NO_FUSION="1")
    unfused = xrt_results(d, meta, xrt, os.path.join(d, "xrt_out_unfused"), env)
    return rel_diff(fused, refs), rel_diff(fused, unfused)


def xrt_ms(d, meta, xrt, threads, reps):
    r = subprocess.run([xrt, "bench", os.path.join(d, "model.mlir"), "--json",
                        "--threads", str(threads), "--iterations", str(reps), "--warmup", "2"] +
                       xrt_inputs(d, meta["num_args"]), capture_output=True, text=True)
    if r.returncode != 0:
        fail("xrt bench %s failed: %s" % (d, r.stderr.strip()))
    return json.loads(r.stdout)["min_ms"]


def best_ms(fn, reps):
    fn()
    fn()
    best = float("inf")
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best * 1e3


def openblas_lib():
    """The OpenBLAS that torch loaded (Debian's torch does its matrix
    products there), or None."""
    import ctypes
    with open("/proc/self/maps") as f:
        for line in f:
            path = line.split()[-1]
            if "libopenblas" in os.path.basename(path):
                return ctypes.CDLL(path)
    return None


def set_torch_threads(threads):
    """torch.set_num_threads sets only torch's OpenMP pool; OpenBLAS keeps
    a pthread pool of its own with one thread per core, so without this a
    "one thread" torch runs every matmul on both cores.  Returns the
    OpenBLAS kernel name (openblas_get_corename) or None."""
    import torch
    torch.set_num_threads(threads)
    lib = openblas_lib()
    if lib is None:
        return None
    lib.openblas_set_num_threads(threads)
    lib.openblas_get_corename.restype = __import__("ctypes").c_char_p
    return lib.openblas_get_corename().decode()


def torch_ms(m, threads, reps):
    import torch
    set_torch_threads(threads)
    fn, targs = m.torch_setup(m.args)
    if m.train:
        return best_ms(lambda: fn(*targs), reps)
    with torch.no_grad():
        return best_ms(lambda: fn(*targs), reps)


# ---- ONNX Runtime (onnxruntime-node, driven by ort_bench.js) ----

def ort_module_dir(ort_dir):
    # Absolute: node's require() reads a relative name as a package name.
    return os.path.abspath(os.path.join(ort_dir, "node_modules", "onnxruntime-node"))


def ort_export(m, d):
    """torch.onnx.export of the model with its weights as initializers and
    its data inputs as graph inputs; returns the .onnx path."""
    import torch
    path = os.path.join(d, "model.onnx")
    if os.path.exists(path) and os.path.getmtime(path) >= os.path.getmtime(
            os.path.join(d, "meta.json")) and os.path.exists(os.path.join(d, "ort_input_0.npy")):
        return path
    fn, targs = m.torch_setup(m.args)
    n_in = m.num_inputs

    class Wrapped(torch.nn.Module):
        def __init__(self):
            super().__init__()
            for i, t in enumerate(targs[n_in:]):
                self.register_buffer("w%d" % i, t)

        def forward(self, *inputs):
            ws = [getattr(self, "w%d" % i) for i in range(len(targs) - n_in)]
            outs = fn(*inputs, *ws)
            return outs[0] if len(outs) == 1 else tuple(outs)

    with torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("ignore")  # LSTM batch size, shape inference notes
        torch.onnx.export(Wrapped(), tuple(targs[:n_in]), path, opset_version=14,
                          input_names=["input%d" % i for i in range(n_in)],
                          do_constant_folding=True)
    # The data inputs in the PyTorch model's layout (NCHW where xrt's is NHWC).
    for k, t in enumerate(targs[:n_in]):
        np.save(os.path.join(d, "ort_input_%d.npy" % k), t.numpy())
    return path


def ort_ms(onnx_path, d, n_in, ort_dir, threads, reps):
    """Best call in ms, or (None, why)."""
    inputs = [os.path.join(d, "ort_input_%d.npy" % k) for k in range(n_in)]
    r = subprocess.run(["node", os.path.join(HERE, "ort_bench.js"), ort_module_dir(ort_dir),
                        onnx_path, str(threads), str(reps)] + inputs,
                       capture_output=True, text=True)
    if r.returncode != 0:
        why = " ".join((r.stderr.strip() or r.stdout.strip() or "no output").split())
        return None, why[:300]
    out = json.loads(r.stdout)
    ref = np.load(os.path.join(d, "ref_0.npy")).astype(np.float64)
    got = np.array(out["output0"], dtype=np.float64).reshape(ref.shape)
    err = np.abs(got - ref).max() / max(np.abs(ref).max(), 1e-30)
    if err > 1e-3:
        return None, "its result differs from torch's by %.3g relative" % err
    return out["min_ms"], None


def ort_why_not(ort_dir):
    if subprocess.run(["sh", "-c", "command -v node"], capture_output=True).returncode != 0:
        return "node is not installed"
    if not os.path.isdir(ort_module_dir(ort_dir)):
        return "onnxruntime-node is not installed in %s (tools/deps.sh bench)" % ort_dir
    return None


def bench_model(name, args, keys):
    d = os.path.join(args.out, name)
    gen.generate(args.out, name, gen.sources_digest())
    with open(os.path.join(d, "meta.json")) as f:
        meta = json.load(f)
    m = models.MODELS[name]()
    p = "model.%s." % name

    def key(k, v, fmt="%.3f"):
        keys.append((p + k, v))
        print(("%s%s = " + fmt) % (p, k, v), flush=True)

    err, fusion_diff = max_rel_err(d, meta, args.xrt)
    key("max_rel_err", err, "%.3g")
    key("fusion_rel_diff", fusion_diff, "%.3g")
    try:
        import torch  # noqa: F401
        have_torch = True
    except Exception as e:  # ImportError or a broken install
        have_torch = False
        print("# %storch_ms: torch cannot be imported: %s" % (p, str(e).splitlines()[0]))
    if have_torch:
        core = set_torch_threads(1)
        print("# %storch_blas: %s" % (p, "OpenBLAS kernel " + core if core else
                                      "no OpenBLAS loaded"))
    why = ort_why_not(args.ort) if have_torch else "torch is needed to export the model"
    if not why and not m.onnx:
        why = "the model is a training step (autograd), which torch.onnx.export does not write"
    onnx_path = None
    if not why:
        try:
            onnx_path = ort_export(m, d)
        except Exception as e:
            why = "torch.onnx.export failed: %s" % str(e).splitlines()[0][:200]
    # Rounds, each side in turn within each: this machine's speed moves
    # (10-30 %, for minutes at a time), and a ratio of two figures taken
    # minutes apart measured the machine as much as the runtimes.  Each
    # side keeps its best round; the spread of its rounds is printed.
    runs = {k: [] for k in ("xrt_ms", "xrt_ms_2t", "torch_ms", "torch_ms_2t",
                            "ort_ms", "ort_ms_2t")}
    for _ in range(args.rounds):
        runs["xrt_ms"].append(xrt_ms(d, meta, args.xrt, 1, args.reps))
        runs["xrt_ms_2t"].append(xrt_ms(d, meta, args.xrt, 2, args.reps))
        if have_torch:
            runs["torch_ms"].append(torch_ms(m, 1, args.reps))
            runs["torch_ms_2t"].append(torch_ms(m, 2, args.reps))
        for t, k in ((1, "ort_ms"), (2, "ort_ms_2t")):
            if not why:
                o, why = ort_ms(onnx_path, d, m.num_inputs, args.ort, t, args.reps)
                runs[k].append(o)
    best = {k: min(v) for k, v in runs.items() if v and None not in v}
    x1, x2 = best["xrt_ms"], best["xrt_ms_2t"]
    key("xrt_ms", x1)
    key("gflops", meta["flops"] / (x1 * 1e-3) / 1e9, "%.2f")
    key("xrt_ms_2t", x2)
    if have_torch:
        key("torch_ms", best["torch_ms"])
        key("ratio_torch", best["torch_ms"] / x1)
        key("torch_ms_2t", best["torch_ms_2t"])
        key("ratio_torch_2t", best["torch_ms_2t"] / x2)
    if why:
        print("# %sratio_ort: %s" % (p, why))
    else:
        key("ort_ms", best["ort_ms"])
        key("ratio_ort", best["ort_ms"] / x1)
        key("ort_ms_2t", best["ort_ms_2t"])
        key("ratio_ort_2t", best["ort_ms_2t"] / x2)
    spread = ["%s %.3f-%.3f" % (k, min(v), max(v)) for k, v in runs.items()
              if v and None not in v]
    print("# %sspread over %d round(s): %s" % (p, args.rounds, ", ".join(spread)))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--xrt", required=True, help="the xrt binary")
    ap.add_argument("--out", required=True, help="where the models are written")
    ap.add_argument("--reps", type=int, default=int(os.environ.get("BENCH_MODELS_REPS", "10")))
    ap.add_argument("--rounds", type=int,
                    default=int(os.environ.get("BENCH_MODELS_ROUNDS", "3")),
                    help="rounds of every side in turn; each keeps its best")
    ap.add_argument("--ort", help="directory with node_modules/onnxruntime-node "
                    "(default: OUT/ort)")
    ap.add_argument("models", nargs="*")
    args = ap.parse_args()
    if args.reps < 1:
        fail("--reps must be at least 1")
    if args.rounds < 1:
        fail("--rounds must be at least 1")
    if not os.access(args.xrt, os.X_OK):
        fail("%s is not an executable" % args.xrt)
    args.ort = args.ort or os.path.join(args.out, "ort")
    names = args.models or list(models.MODELS)
    for n in names:
        if n not in models.MODELS:
            fail("unknown model '%s' (have: %s)" % (n, ", ".join(models.MODELS)))
    os.makedirs(args.out, exist_ok=True)
    keys = []
    for n in names:
        bench_model(n, args, keys)
    return 0


if __name__ == "__main__":
    sys.exit(main())
