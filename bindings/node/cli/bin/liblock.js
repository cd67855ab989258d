#!/usr/bin/env node
'use strict';
// `liblock` for npm users (npx liblock run ...): runs the static liblock
// command this package carries for the platform, prebuilt/<platform>-<arch>/liblock,
// with the same arguments, standard streams and environment, and exits as it
// does. SIGINT, SIGTERM and SIGHUP sent to this process are passed on (the
// command then releases its lock and stops its child the way it documents).
const { spawn } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

const dir = `${process.platform}-${process.arch}`;
const bin = path.join(__dirname, '..', 'prebuilt', dir, 'liblock');
if (!fs.existsSync(bin)) {
  const built = fs.readdirSync(path.join(__dirname, '..', 'prebuilt')).join(', ');
  process.stderr.write(`liblock: this package has no liblock command for ${dir} (it has: ${built}); ` +
    'install it with Go instead: go install github.com/liblock/liblock/core/cmd/liblock@latest\n');
  process.exit(69);
}
const child = spawn(bin, process.argv.slice(2), { stdio: 'inherit' });
for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
  process.on(sig, () => { try { child.kill(sig); } catch { /* already gone */ } });
}
child.on('error', (e) => {
  process.stderr.write(`liblock: cannot run ${bin}: ${e.message}\n`);
  process.exit(69);
});
child.on('exit', (code, signal) => {
  process.exit(code === null ? 128 + (require('node:os').constants.signals[signal] || 0) : code);
});
