'use strict';
// One-off redis-servers with special settings (a unix socket, a password,
// TLS), started by the tests that need them on free 127.0.0.1 ports in a
// temporary directory and SIGKILLed in teardown. build/redisnodes starts
// plain ones; these need flags it does not take.
const { spawn, execFileSync } = require('node:child_process');
const fs = require('node:fs');
const net = require('node:net');
const os = require('node:os');
const path = require('node:path');
const readline = require('node:readline');

const INSTALL = 'apt-get install -y redis-server openssl';

/** A port that was free a moment ago (the server may still lose a race: start() retries). */
function freePort() {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => { const { port } = s.address(); s.close(() => resolve(port)); });
  });
}

/**
 * Starts redis-server with `args(port)` added to a throw-away configuration;
 * resolves once it logs that it accepts connections. Returns { port, dir,
 * kill() }. Retries with another port when the chosen one was taken.
 * @param {(port: number, dir: string) => string[]} args
 */
async function startServer(args) {
  try {
    execFileSync('redis-server', ['--version'], { stdio: 'ignore' });
  } catch {
    throw new Error(`redis-server is missing: ${INSTALL}`);
  }
  let last = '';
  for (let attempt = 0; attempt < 5; attempt++) {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'liblock-redis-'));
    const port = await freePort();
    const child = spawn('redis-server', ['--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir, ...args(port, dir)], { stdio: ['ignore', 'pipe', 'pipe'] });
    const exited = new Promise((resolve) => child.once('exit', resolve));
    let log = '';
    const ready = await new Promise((resolve) => {
      const timer = setTimeout(() => resolve(false), 20000);
      const lines = readline.createInterface({ input: child.stdout });
      lines.on('line', (l) => {
        log += l + '\n';
        if (/ready to accept connections/i.test(l)) { clearTimeout(timer); resolve(true); }
      });
      child.stderr.on('data', (d) => { log += d; });
      exited.then(() => { clearTimeout(timer); resolve(false); });
    });
    const kill = async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exited;
      fs.rmSync(dir, { recursive: true, force: true });
    };
    if (ready) return { port, dir, kill };
    await kill();
    last = log;
    if (!/Address already in use/.test(log)) break;
  }
  throw new Error(`redis-server did not start (Debian's redis-server has TLS support: ${INSTALL}):\n${last}`);
}

/** Writes a self-signed certificate for IP 127.0.0.1 (cert.pem, key.pem) into dir, with openssl. */
function selfSigned(dir) {
  const cert = path.join(dir, 'cert.pem');
  const key = path.join(dir, 'key.pem');
  try {
    execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes',
      '-keyout', key, '-out', cert, '-days', '1', '-subj', '/CN=liblock test',
      '-addext', 'subjectAltName=IP:127.0.0.1'], { stdio: ['ignore', 'ignore', 'pipe'] });
  } catch (e) {
    throw new Error(`openssl could not make a self-signed certificate (${INSTALL}): ${e.stderr || e.message}`);
  }
  return { cert, key };
}

module.exports = { startServer, selfSigned, freePort };
