'use strict';
// make bench's results as rows (core/internal/benchreport/results): every
// figure a table prints is also recorded here, and written as one JSON file
// at the end ($LIBLOCK_BENCH_JSON, build/bench/node.json under make bench),
// which core/internal/benchreport/plot turns into a table and one SVG chart
// per scenario. A bar is liblock's when its name starts with "liblock".
const fs = require('fs');
const path = require('path');

const rows = [];

// record adds one figure; non-finite values (a stalled peer) are left out.
function record(scenario, unit, impl, value, higherIsBetter = false) {
  if (!Number.isFinite(value)) return;
  rows.push({ scenario, unit, impl, value, liblock: impl.startsWith('liblock'), higher_is_better: higherIsBetter });
}

// write writes the rows recorded so far to $LIBLOCK_BENCH_JSON (nothing
// when it is unset or nothing was recorded).
function write(part) {
  const out = process.env.LIBLOCK_BENCH_JSON;
  if (!out || !rows.length) return;
  fs.mkdirSync(path.dirname(out), { recursive: true });
  fs.writeFileSync(out, JSON.stringify({ part, rows }, null, 1) + '\n');
  console.log(`\nresults: ${rows.length} rows in ${out}`);
}

module.exports = { record, write };
