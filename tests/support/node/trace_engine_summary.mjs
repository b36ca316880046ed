// What Chrome DevTools' trace engine (@paulirish/trace_engine, the Performance panel's
// parser, published from the DevTools sources) makes of a Trace Event Format file: its
// threads, the slices on each and the flows. Prints one JSON object; exits 1 when the
// engine rejects the file. Usage: node trace_engine_summary.mjs FILE
import fs from 'node:fs';
import * as Trace from '@paulirish/trace_engine/models/trace/trace.js';

// The engine measures with DOMRect, which Node lacks (the package's README says to
// polyfill it, as its own analyze-trace.mjs does).
globalThis.DOMRect ??= class DOMRect {
  constructor(x = 0, y = 0, width = 0, height = 0) {
    Object.assign(this, {x, y, width, height});
  }
};

const doc = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'));
const model = Trace.TraceModel.Model.createWithAllHandlers();
await model.parse(doc.traceEvents);
const data = model.parsedTrace().data;

const threads = {};
for (const [pid, proc] of data.Renderer.processes) {
  for (const [tid, thread] of proc.threads) {
    const slices = {};
    for (const e of thread.entries) {
      if (e.ph === 'X') slices[e.name] = (slices[e.name] ?? 0) + 1;
    }
    threads[`${pid}:${tid}`] = {name: thread.name ?? null, slices};
  }
}
const flows = data.Flows.flows.map(f => f.map(e => `${e.name}@${e.pid}:${e.tid}`));
console.log(JSON.stringify({threads, flows}));
