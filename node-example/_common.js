'use strict';
// Shared bits of the examples: the node URLs from LIBLOCK_NODES and a tiny logger.
let origin = Date.now();

function setOrigin(ms) { origin = ms; }

function nodes() {
  const urls = (process.env.LIBLOCK_NODES || '').split(',').filter(Boolean);
  if (urls.length === 0) {
    console.error('set LIBLOCK_NODES (comma-separated redis:// URLs), or run node-example/demo.sh');
    process.exit(2);
  }
  return urls;
}

function pids() {
  return (process.env.LIBLOCK_NODE_PIDS || '').split(',').filter(Boolean).map(Number);
}

function alive(pid) {
  try { process.kill(pid, 0); return true; } catch { return false; }
}

function log(who, what) {
  console.log(`  ${((Date.now() - origin) / 1000).toFixed(3).padStart(6)}s  ${who.padEnd(10)} ${what}`);
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

module.exports = { nodes, pids, alive, log, sleep, setOrigin };
