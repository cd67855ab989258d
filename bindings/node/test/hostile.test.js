'use strict';
// A hostile node beside real redis-servers: it passes the handshake (INFO, PING,
// AUTH, SELECT, CLIENT, ROLE) and then answers every command with garbage,
// a reply of another type, an endless or a maximal bulk string, an array
// nested 1000 deep, an endless array, nothing, or half a reply. With two
// honest nodes of three the lock is granted and released; with two hostile
// nodes of three the acquire fails with UnavailableError, each hostile node
// named with its own cause, and no key is left. The Go twin of the server
// is core/testkit/redistest/hostile.
const { test, before, after } = require('node:test');
const assert = require('node:assert/strict');
const net = require('node:net');
const { Client, UnavailableError } = require('..');
const { startNodes, assertNoUnhandled, withBackend, eventually } = require('./helpers');

const MAX_BULK = 64 << 20; // the engine's bound on a bulk string (core/engine/resp.go)

// The cause each behaviour gives its node. An endless reply fails at the
// decoder's bound or at the node timeout, whichever comes first on a loaded
// machine.
const CAUSES = {
  garbage: /redis protocol error: (malformed reply line|unexpected reply type)/,
  wrongtype: /redis protocol error: SET answered an array of 2, not OK/,
  endlessbulk: /redis protocol error: bulk string of 2147483647 bytes/,
  maxbulk: /within the node timeout|bulk string not followed by CRLF/,
  deepnesting: /redis protocol error: arrays nested too deep/,
  endlessarray: /within the node timeout|a reply longer than|a reply of more than \d+ values/,
  silent: /within the node timeout/,
  closemidreply: /EOF|closed|reset/,
};

/** A hostile node on a free loopback port. */
async function startHostile(behaviour) {
  const sockets = new Set();
  let asked = 0;
  const server = net.createServer((sock) => {
    sockets.add(sock);
    sock.on('close', () => sockets.delete(sock));
    sock.on('error', () => {});
    let buf = Buffer.alloc(0);
    let hostile = false; // misbehaving: what the client sends is ignored
    sock.on('data', (d) => {
      if (hostile) return;
      buf = Buffer.concat([buf, d]);
      for (;;) {
        const cmd = readCommand(buf);
        if (!cmd) return;
        buf = buf.subarray(cmd.used);
        const name = cmd.args[0].toUpperCase();
        if (name === 'PING') sock.write('+PONG\r\n');
        else if (name === 'INFO') sock.write('$10\r\n# Server\r\n\r\n'); // no run_id: nothing to compare
        else if (['AUTH', 'SELECT', 'CLIENT'].includes(name)) sock.write('+OK\r\n');
        else if (name === 'ROLE') sock.write('*3\r\n$6\r\nmaster\r\n:0\r\n*0\r\n');
        else {
          asked++;
          if (misbehave(sock, behaviour)) { hostile = true; return; }
        }
      }
    });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `redis://127.0.0.1:${server.address().port}`,
    asked: () => asked,
    conns: () => sockets.size,
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

/** Answers one command; true when the connection carries nothing else. */
function misbehave(sock, behaviour) {
  const endless = (chunk) => {
    const big = Buffer.from(chunk.repeat(Math.floor((64 << 10) / chunk.length)));
    const pump = () => {
      while (!sock.destroyed && sock.write(big)) { /* until the buffer is full */ }
      if (!sock.destroyed) sock.once('drain', pump);
    };
    pump();
    return true;
  };
  switch (behaviour) {
    case 'garbage': sock.write('HTTP/1.1 400 Bad Request\r\nContent-Type: text/html\r\n\r\n<html>\x00\xff</html>\r\n'); return false;
    case 'wrongtype': sock.write('*2\r\n$3\r\nfoo\r\n:1\r\n'); return false;
    case 'endlessbulk': sock.write('$2147483647\r\n'); return endless('x');
    case 'maxbulk': sock.write(`$${MAX_BULK}\r\n`); return endless('x');
    case 'deepnesting': sock.write('*1\r\n'.repeat(1000) + ':1\r\n'); return false;
    case 'endlessarray': sock.write('*2147483647\r\n'); return endless(':1\r\n');
    case 'silent': return false;
    case 'closemidreply': sock.end('$10\r\nhello'); return true;
  }
  throw new Error(`unknown behaviour ${behaviour}`);
}

/** One RESP command (an array of bulk strings) at the front of buf, or null. */
function readCommand(buf) {
  let off = 0;
  const line = () => {
    const i = buf.indexOf('\r\n', off);
    if (i < 0) return null;
    const s = buf.subarray(off, i).toString('latin1');
    off = i + 2;
    return s;
  };
  const head = line();
  if (head === null) return null;
  const n = Number(head.slice(1));
  const args = [];
  for (let k = 0; k < n; k++) {
    const h = line();
    if (h === null) return null;
    const size = Number(h.slice(1));
    if (buf.length < off + size + 2) return null;
    args.push(buf.subarray(off, off + size).toString('latin1'));
    off += size + 2;
  }
  return { args, used: off };
}

let nodes;
before(async () => { nodes = await startNodes(2); });
after(async () => { await nodes.stop(); assertNoUnhandled(assert); });

for (const behaviour of Object.keys(CAUSES)) {
  test(`hostile node: ${behaviour}`, async () => {
    const h1 = await startHostile(behaviour);
    const h2 = await startHostile(behaviour);
    try {
      // Two honest nodes of three decide. A generous node timeout: a loaded
      // machine still answers every handshake within it, so the causes are
      // the behaviours' own.
      const honest = new Client(withBackend({ nodes: [nodes.urls[0], nodes.urls[1], h1.url], nodeTimeout: 2000 }));
      const lock = await honest.acquire(`hostile:${behaviour}`, { ttl: 10000, wait: 0 });
      await lock.release();
      await honest.close();
      assert.ok(h1.asked() > 0, 'the hostile node was asked');

      // Two hostile nodes of three: unavailable, each named with its cause.
      const c = new Client(withBackend({ nodes: [nodes.urls[0], h1.url, h2.url], nodeTimeout: 2000 }));
      const err = await c.acquire(`hostile2:${behaviour}`, { ttl: 10000, wait: 0 }).then(() => null, (e) => e);
      await c.close();
      assert.ok(err instanceof UnavailableError, String(err));
      const causes = new Map(err.nodes.map((n) => [n.node, n.cause]));
      assert.ok(!causes.has(0), `the honest node granted: ${err.message}`);
      for (const i of [1, 2]) assert.match(causes.get(i) || '', CAUSES[behaviour], `node ${i}: ${err.message}`);
      await eventually(async () => (await nodes.keys()).every((k) => k.length === 0), { what: 'no key left on the honest nodes' });
      await eventually(() => h1.conns() === 0 && h2.conns() === 0, { what: 'no connection left to the hostile nodes' });
    } finally {
      await h1.close();
      await h2.close();
    }
  });
}
