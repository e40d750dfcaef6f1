// ONNX Runtime's side of `make bench-ort`: times one model on the CPU
// execution provider (graph optimizations on: ORT_ENABLE_ALL) with each
// requested intra-op thread count, one warm-up run and then the median of up
// to REPS timed runs within BUDGET seconds (at least one), and writes each
// thread count's output as OUT.<threads>.npy for the comparison with phasec.
// Besides the wall time it records the process's CPU time per run (user and
// system, all threads): on a shared machine, the work a run costs whatever
// the load.
//
// usage: node ort.js MODEL.onnx INPUT.npy OUT THREADS(1,2) REPS BUDGET
// prints one JSON line: {"version", "runs": {threads: {"ms", "cpu_ms", "n"}}}
'use strict';

const fs = require('fs');
const ort = require('onnxruntime-node');

// readNpy reads a little-endian float32 .npy (the only kind gen.py writes).
function readNpy(path) {
  const buf = fs.readFileSync(path);
  if (buf.toString('latin1', 0, 6) !== '\x93NUMPY') throw new Error(`${path}: not a .npy file`);
  const major = buf[6];
  const hlen = major === 1 ? buf.readUInt16LE(8) : buf.readUInt32LE(8);
  const start = major === 1 ? 10 : 12;
  const header = buf.toString('latin1', start, start + hlen);
  if (!/'descr':\s*'<f4'/.test(header) || /'fortran_order':\s*True/.test(header)) {
    throw new Error(`${path}: want a C-order little-endian float32 array, header ${header}`);
  }
  const shape = header.match(/'shape':\s*\(([^)]*)\)/)[1].split(',').map((s) => s.trim()).filter((s) => s !== '').map(Number);
  const off = start + hlen;
  const data = new Float32Array(buf.buffer.slice(buf.byteOffset + off, buf.byteOffset + buf.length));
  return { shape, data };
}

// writeNpy writes a float32 array as a version 1.0 .npy.
function writeNpy(path, shape, data) {
  const dims = shape.length === 1 ? `${shape[0]},` : shape.join(', ');
  let header = `{'descr': '<f4', 'fortran_order': False, 'shape': (${dims}), }`;
  const pad = 64 - ((10 + header.length + 1) % 64);
  header += ' '.repeat(pad % 64) + '\n';
  const head = Buffer.alloc(10);
  head.write('\x93NUMPY', 0, 'latin1');
  head[6] = 1;
  head[7] = 0;
  head.writeUInt16LE(header.length, 8);
  fs.writeFileSync(path, Buffer.concat([head, Buffer.from(header, 'latin1'), Buffer.from(data.buffer, data.byteOffset, data.byteLength)]));
}

function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

async function main() {
  const [model, inputPath, out, threadList, reps, budget] = process.argv.slice(2);
  if (!budget) throw new Error('usage: node ort.js MODEL.onnx INPUT.npy OUT THREADS REPS BUDGET');
  const input = readNpy(inputPath);
  const result = { version: ort.env.versions.node, runs: {} };
  for (const threads of threadList.split(',').map(Number)) {
    const session = await ort.InferenceSession.create(model, {
      executionProviders: ['cpu'],
      graphOptimizationLevel: 'all',
      executionMode: 'sequential',
      intraOpNumThreads: threads,
      interOpNumThreads: 1,
    });
    const feeds = { [session.inputNames[0]]: new ort.Tensor('float32', input.data, input.shape) };
    let outputs = await session.run(feeds); // warm-up
    const times = [];
    const cpu = [];
    const deadline = performance.now() + Number(budget) * 1000;
    while (times.length < Number(reps) && (times.length === 0 || performance.now() < deadline)) {
      const c0 = process.cpuUsage();
      const t0 = performance.now();
      outputs = await session.run(feeds);
      times.push(performance.now() - t0);
      const c = process.cpuUsage(c0);
      cpu.push((c.user + c.system) / 1000);
    }
    const y = outputs[session.outputNames[0]];
    writeNpy(`${out}.${threads}.npy`, y.dims, y.data);
    result.runs[threads] = { ms: median(times), cpu_ms: median(cpu), n: times.length };
    await session.release();
  }
  console.log(JSON.stringify(result));
}

main().catch((e) => {
  console.error(`ort.js: ${e.stack || e}`);
  process.exit(1);
});
