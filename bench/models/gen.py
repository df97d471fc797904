#!/usr/bin/python3
"""Writes the model zoo (models.py) for xrt:

    gen.py OUTDIR [MODEL...]      (default: every model)

For each model M, OUTDIR/M/ gets model.mlir (StableHLO text), arg_K.npy
(the K-th @main argument: the data inputs, then the weights), ref_K.npy
(PyTorch's K-th result on the same arguments) and meta.json (flops,
number of arguments and results).  Files already written for the same
generator sources are kept.  Needs Debian's /usr/bin/python3 with
python3-numpy and python3-torch.
"""
import hashlib
import json
import os
import sys

import numpy as np

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
import models  # noqa: E402


def sources_digest():
    here = os.path.dirname(os.path.abspath(__file__))
    h = hashlib.sha256()
    for f in ("hlo.py", "models.py", "gen.py"):
        with open(os.path.join(here, f), "rb") as fh:
            h.update(fh.read())
    return h.hexdigest()[:16]


def torch_outputs(m):
    import torch
    fn, targs = m.torch_setup(m.args)
    if m.train:
        outs = fn(*targs)
    else:
        with torch.no_grad():
            outs = fn(*targs)
    return [o.detach().numpy() for o in outs]


def generate(outdir, name, digest):
    d = os.path.join(outdir, name)
    meta_path = os.path.join(d, "meta.json")
    if os.path.exists(meta_path):
        with open(meta_path) as f:
            if json.load(f).get("digest") == digest:
                return
    os.makedirs(d, exist_ok=True)
    m = models.MODELS[name]()
    with open(os.path.join(d, "model.mlir"), "w") as f:
        f.write(m.hlo)
    for k, a in enumerate(m.args):
        np.save(os.path.join(d, "arg_%d.npy" % k), a)
    refs = torch_outputs(m)
    for k, r in enumerate(refs):
        np.save(os.path.join(d, "ref_%d.npy" % k), r)
    meta = {"name": name, "flops": m.flops, "num_args": len(m.args),
            "num_results": len(refs), "digest": digest}
    with open(meta_path, "w") as f:
        json.dump(meta, f)
    print("gen.py: wrote %s (%d arguments, %.3f GFLOP)" % (d, len(m.args), m.flops / 1e9))


def main(argv):
    if len(argv) < 2:
        sys.stderr.write("usage: gen.py OUTDIR [MODEL...]\n")
        return 2
    names = argv[2:] or list(models.MODELS)
    for n in names:
        if n not in models.MODELS:
            sys.stderr.write("gen.py: unknown model '%s' (have: %s)\n" %
                             (n, ", ".join(models.MODELS)))
            return 2
    digest = sources_digest()
    for n in names:
        generate(argv[1], n, digest)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
