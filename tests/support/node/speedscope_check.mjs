// Checks a speedscope file (what `emb trace --format speedscope` writes) against speedscope's
// own definition of its format, from the speedscope npm package pinned in package.json:
//  1. its JSON schema, dist/release/file-format-schema.json (generated from
//     src/lib/file-format-spec.ts), validated by Ajv, a JSON Schema validator;
//  2. what its importer does with an evented profile (src/lib/file-format.ts,
//     importEventedProfile: each "O" is CallTreeProfileBuilder.enterFrame(frames[ev.frame],
//     ev.at - startValue), each "C" leaveFrame(...), src/lib/profile.ts), which throws
//     "Tried to leave frame ... while frame ... was at the top" for a close of any frame but
//     the one on top, and "Samples must be provided in increasing order of cumulative value"
//     for a value that goes back. Those two rules are replayed here, with a frame index
//     that must name a shared frame and an empty stack at the profile's end.
// Prints one JSON object: each profile's name, its slices (opens per frame name) and its
// deepest stack. Exits 1 naming the first violation. Usage: node speedscope_check.mjs FILE
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const require = createRequire(import.meta.url);
const Ajv = require('ajv');
const here = path.dirname(fileURLToPath(import.meta.url));
const schemaPath = path.join(here, 'node_modules/speedscope/dist/release/file-format-schema.json');
const schema = JSON.parse(fs.readFileSync(schemaPath, 'utf8'));
const file = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'));

function fail(message) {
  console.error(`speedscope_check: ${process.argv[2]}: ${message}`);
  process.exit(1);
}

const ajv = new Ajv({ allErrors: true, strict: false });
const validate = ajv.compile(schema);
if (!validate(file))
  fail(`not valid against ${path.basename(schemaPath)}: ${ajv.errorsText(validate.errors)}`);

const frames = file.shared.frames;
const out = { name: file.name, frames: frames.length, profiles: {} };
for (const p of file.profiles) {
  if (p.type !== 'evented') fail(`profile ${p.name}: ${p.type}, not evented`);
  const stack = [];
  let last = -Infinity, deepest = 0;
  const slices = {};
  for (const [i, ev] of p.events.entries()) {
    const at = ev.at - p.startValue;
    if (!Number.isInteger(ev.frame) || ev.frame < 0 || ev.frame >= frames.length)
      fail(`profile ${p.name}: event ${i}: frame ${ev.frame} is not a shared frame`);
    if (at < last)
      fail(`profile ${p.name}: event ${i}: value ${at} after ${last} (not increasing)`);
    if (ev.at > p.endValue) fail(`profile ${p.name}: event ${i}: at ${ev.at} past endValue`);
    last = at;
    const name = frames[ev.frame].name;
    if (ev.type === 'O') {
      stack.push(ev.frame);
      deepest = Math.max(deepest, stack.length);
      slices[name] = (slices[name] || 0) + 1;
    } else {
      const top = stack.pop();
      if (top !== ev.frame)
        fail(`profile ${p.name}: event ${i}: leaves "${name}" while ` +
             `"${top === undefined ? '(nothing)' : frames[top].name}" is at the top`);
    }
  }
  if (stack.length) fail(`profile ${p.name}: ${stack.length} frames still open at its end`);
  out.profiles[p.name] = { slices, deepest };
}
console.log(JSON.stringify(out));
