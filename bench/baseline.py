#!/usr/bin/python3
"""Python baselines for xrt's benchmarks (bench/*.c), single-threaded.

Usage (through Debian's /usr/bin/python3 with python3-numpy, python3-torch):
  baseline.py numpy_sum N AXIS   x.sum(axis=AXIS) of an NxN f32 array
  baseline.py torch_transpose N  x.t().contiguous() of an NxN f32 tensor
  baseline.py torch_conv         3x3 64->64 conv2d, padding 1, on a
                                 1x64x56x56 NCHW f32 input, no bias
  options: --reps K (default 9), --min-time S (default 0.3: repeat until
           at least S seconds were measured, up to 200 runs)

Prints the best-of-k seconds of one operation on one line (e.g. "0.0401"),
or "skip <reason>" and exits 0 when a module is missing, so a benchmark can
go on without the baseline.  Bad usage exits 2 with a message on stderr.
"""
import os
import sys
import time

# Single thread everywhere, set before numpy/torch load their BLAS.
for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(var, "1")


def best_time(fn, reps, min_time):
    """Best wall time of one fn() over at least reps runs (after a warm-up),
    continuing until min_time seconds in total or 200 runs."""
    fn()
    best, total, runs = float("inf"), 0.0, 0
    while runs < reps or (total < min_time and runs < 200):
        t0 = time.perf_counter()
        fn()
        dt = time.perf_counter() - t0
        best = min(best, dt)
        total += dt
        runs += 1
    return best


def load(name):
    try:
        return __import__(name), None
    except Exception as e:  # ImportError, or a broken install
        return None, "%s: %s" % (name, str(e).splitlines()[0] if str(e) else type(e).__name__)


def usage(message):
    sys.stderr.write("baseline.py: %s\n" % message)
    sys.exit(2)


def positive_int(text, what):
    try:
        v = int(text)
    except ValueError:
        v = 0
    if v < 1:
        usage("%s must be a positive integer, not %r" % (what, text))
    return v


def numpy_sum(args, reps, min_time):
    if len(args) != 2:
        usage("usage: numpy_sum N AXIS")
    n = positive_int(args[0], "N")
    if args[1] not in ("0", "1"):
        usage("AXIS must be 0 or 1, not %r" % args[1])
    axis = int(args[1])
    np, why = load("numpy")
    if np is None:
        return "skip " + why
    x = np.random.default_rng(1).standard_normal((n, n), dtype=np.float32)
    return best_time(lambda: x.sum(axis=axis), reps, min_time)


def torch_module():
    torch, why = load("torch")
    if torch is None:
        return None, why
    torch.set_num_threads(1)
    torch.manual_seed(1)
    return torch, None


def torch_transpose(args, reps, min_time):
    if len(args) != 1:
        usage("usage: torch_transpose N")
    n = positive_int(args[0], "N")
    torch, why = torch_module()
    if torch is None:
        return "skip " + why
    x = torch.randn(n, n, dtype=torch.float32)
    return best_time(lambda: x.t().contiguous(), reps, min_time)


def torch_conv(args, reps, min_time):
    if args:
        usage("usage: torch_conv")
    torch, why = torch_module()
    if torch is None:
        return "skip " + why
    x = torch.randn(1, 64, 56, 56, dtype=torch.float32)
    w = torch.randn(64, 64, 3, 3, dtype=torch.float32)
    conv = torch.nn.functional.conv2d
    with torch.no_grad():
        return best_time(lambda: conv(x, w, padding=1), reps, min_time)


COMMANDS = {"numpy_sum": numpy_sum, "torch_transpose": torch_transpose,
            "torch_conv": torch_conv}


def main(argv):
    reps, min_time, rest = 9, 0.3, []
    i = 0
    while i < len(argv):
        if argv[i] in ("--reps", "--min-time") and i + 1 < len(argv):
            if argv[i] == "--reps":
                reps = positive_int(argv[i + 1], "--reps")
            else:
                try:
                    min_time = max(0.0, float(argv[i + 1]))
                except ValueError:
                    usage("bad --min-time %r" % argv[i + 1])
            i += 2
            continue
        rest.append(argv[i])
        i += 1
    if not rest or rest[0] not in COMMANDS:
        sys.stderr.write(__doc__)
        return 2
    result = COMMANDS[rest[0]](rest[1:], reps, min_time)
    print(result if isinstance(result, str) else "%.6g" % result)
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except MemoryError:
        print("skip out of memory")
        sys.exit(0)
