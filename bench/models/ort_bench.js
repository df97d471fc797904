// ort_bench.js - times an ONNX model on ONNX Runtime (onnxruntime-node)
// for bench_models.py:
//
//   node ort_bench.js ORT_MODULE_DIR MODEL.onnx THREADS REPS INPUT.npy...
//
// One session with intraOpNumThreads = THREADS (interOpNumThreads 1,
// sequential execution, every graph optimization), the .npy files (f32,
// C order) as the graph's inputs in order; 2 warm-up runs, then REPS timed
// ones.  Prints {"min_ms": BEST, "output0": [...first output...]} as JSON;
// exits 1 with the reason on stderr when something fails.
'use strict';
const fs = require('fs');

function readNpy(path) {
  const buf = fs.readFileSync(path);
  if (buf.readUInt32BE(0) !== 0x934e554d) throw new Error(path + ': not a .npy file');
  const major = buf[6];
  const hlen = major === 1 ? buf.readUInt16LE(8) : buf.readUInt32LE(8);
  const hstart = major === 1 ? 10 : 12;
  const header = buf.toString('latin1', hstart, hstart + hlen);
  if (!/'descr':\s*'<f4'/.test(header)) throw new Error(path + ': not little-endian f32');
  if (/'fortran_order':\s*True/.test(header)) throw new Error(path + ': Fortran order');
  const m = /'shape':\s*\(([^)]*)\)/.exec(header);
  const dims = m[1].split(',').map((s) => s.trim()).filter((s) => s.length).map(Number);
  const off = hstart + hlen;
  const bytes = buf.subarray(off);
  const data = new Float32Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.length));
  return { dims, data };
}

async function main() {
  const [modDir, modelPath, threadsArg, repsArg, ...inputs] = process.argv.slice(2);
  if (!modDir || !modelPath || !threadsArg || !repsArg) {
    process.stderr.write('usage: node ort_bench.js ORT_MODULE_DIR MODEL.onnx THREADS REPS INPUT.npy...\n');
    process.exit(2);
  }
  const ort = require(modDir);
  const session = await ort.InferenceSession.create(modelPath, {
    intraOpNumThreads: Number(threadsArg),
    interOpNumThreads: 1,
    executionMode: 'sequential',
    graphOptimizationLevel: 'all',
  });
  const feeds = {};
  session.inputNames.forEach((name, i) => {
    const a = readNpy(inputs[i]);
    feeds[name] = new ort.Tensor('float32', a.data, a.dims);
  });
  let out = null;
  for (let i = 0; i < 2; i++) out = await session.run(feeds);
  let best = Infinity;
  for (let i = 0; i < Number(repsArg); i++) {
    const t0 = process.hrtime.bigint();
    out = await session.run(feeds);
    const ms = Number(process.hrtime.bigint() - t0) / 1e6;
    if (ms < best) best = ms;
  }
  const first = out[session.outputNames[0]];
  process.stdout.write(JSON.stringify({ min_ms: best, output0: Array.from(first.data) }) + '\n');
}

main().catch((e) => {
  process.stderr.write('ort_bench.js: ' + (e && e.message ? e.message : String(e)) + '\n');
  process.exit(1);
});
