// What @tracerbench/trace-model (TracerBench's model of Chrome trace events) makes of a
// Trace Event Format file: processes and threads by name, the complete slices on each
// thread with their nesting, counters (points per name, and each name's [ts, value]
// series, start in microseconds, as the model holds them), instants and flow phases. Prints one JSON object;
// exits 1 when the model cannot be built. Usage: node tracerbench_summary.cjs FILE
'use strict';
const fs = require('fs');
const { buildModel } = require('@tracerbench/trace-model');

const doc = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'));
const model = buildModel(doc);
const out = { processes: {}, threads: {}, counters: {}, series: {}, instants: {}, flows: { s: 0, f: 0 } };
for (const p of model.processes) {
  out.processes[p.id] = p.name;
  for (const e of p.events) {
    if (e.ph === 'C') {
      out.counters[e.name] = (out.counters[e.name] || 0) + 1;
      (out.series[e.name] = out.series[e.name] || []).push([e.start, e.args.value]);
    }
  }
  for (const t of p.threads) {
    const th = { name: t.name, slices: {}, nested: 0, instants: 0 };
    for (const e of t.events) {
      if (e.ph === 'X') {
        th.slices[e.name] = (th.slices[e.name] || 0) + 1;
        if (e.parent !== undefined) th.nested++;
      } else if (e.ph === 'i' || e.ph === 'I') {
        th.instants++;
        const k = `${e.cat}`;
        out.instants[k] = (out.instants[k] || 0) + 1;
      } else if (e.ph === 's' || e.ph === 'f') {
        out.flows[e.ph]++;
      }
    }
    out.threads[`${p.id}:${t.id}`] = th;
  }
}
console.log(JSON.stringify(out));
