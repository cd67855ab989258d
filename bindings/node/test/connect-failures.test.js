'use strict';
// close() returns whatever a node's connection met: a port outside 1-65535
// (refused by the engine when the client is built, naming the node), a
// refused connection, a name that does not resolve, a TLS handshake that
// fails, a frozen node (SIGSTOP: it accepts and never answers), and a
// socket layer that throws instead of emitting 'error'. Each case: one bad
// node of three (the acquire is granted by the other two) and a client of
// the bad node alone (the acquire is refused with the engine's UNAVAILABLE),
// then close(), which must resolve (a hang fails the test by its timeout).
const { test, before, after } = require('node:test');
const assert = require('node:assert/strict');
const net = require('node:net');
const { Client } = require('..');
const { startNodes, assertNoUnhandled, withBackend, BACKEND, settled } = require('./helpers');
const { freePort } = require('./servers');

let nodes;
before(async () => { nodes = await startNodes(4); });
after(async () => { await nodes.stop(); assertNoUnhandled(assert); });

const client = (urls) => new Client(withBackend({ nodes: urls, nodeTimeout: 500 }));

test(`[${BACKEND}] a port outside 1-65535 is InvalidArgument naming nodes[i] when the client is built`, () => {
  for (const [i, bad] of [[1, 'redis://127.0.0.1:99999'], [0, 'redis://127.0.0.1:0'], [2, 'rediss://[::1]:65536'],
    [1, 'redis://127.0.0.1:1?cluster=yes&addr=127.0.0.1:70000'], [0, 'redis://127.0.0.1:1?master_name=m&addr=h:123456']]) {
    const urls = ['redis://127.0.0.1:7001', 'redis://127.0.0.1:7002', 'redis://127.0.0.1:7003'];
    urls[i] = bad;
    assert.throws(() => new Client(withBackend({ nodes: urls })), (e) => {
      assert.equal(e.code, 'INVALID_ARGUMENT', e.message);
      assert.match(e.message, new RegExp(`nodes\\[${i}\\]: redis: invalid port `));
      assert.match(e.message, /a TCP port is a number from 1 to 65535/);
      return true;
    }, bad);
  }
  // The ends of the range are ports.
  new Client(withBackend({ nodes: ['redis://127.0.0.1:1', 'redis://127.0.0.1:65535'] })).close();
});

/** Acquires with `bad` as one node of three, then alone; closes each client. */
async function closesAfter(bad, resource) {
  const good = nodes.urls.slice(0, 2);
  const three = client([bad, ...good]);
  const lock = await three.acquire(resource, { ttl: 10000, wait: 0 });
  assert.ok(lock.validity > 0);
  await three.close(); // with the lock still held: close releases it
  const alone = client([bad]);
  await assert.rejects(alone.acquire(resource, { ttl: 10000, wait: 0 }), (e) => {
    assert.equal(e.code, 'UNAVAILABLE', e.message);
    return true;
  });
  await alone.close();
  // A client closed while its first acquire is still connecting.
  const early = client([bad]);
  const pending = early.acquire(resource, { ttl: 10000, wait: 0 }).then(() => 'granted', (e) => e.code);
  await early.close();
  assert.ok(['UNAVAILABLE', 'CANCELED', 'CLOSED'].includes(await pending), await pending);
  const d = await settled();
  if (d.handles !== null) assert.equal(d.handles, 0, 'handles left');
}

test(`[${BACKEND}] close() returns after a refused connection`, { timeout: 60000 }, async () => {
  await closesAfter(`redis://127.0.0.1:${await freePort()}`, 'connfail:refused');
});

test(`[${BACKEND}] close() returns after a name that does not resolve`, { timeout: 60000 }, async () => {
  await closesAfter('redis://nonexistent.invalid:6379', 'connfail:dns');
});

test(`[${BACKEND}] close() returns after a failed TLS handshake (rediss:// to a plain node)`, { timeout: 60000 }, async () => {
  await closesAfter(`rediss://127.0.0.1:${nodes.nodes[3].port}`, 'connfail:tls');
});

test(`[${BACKEND}] close() returns with a frozen node (SIGSTOP)`, { timeout: 60000 }, async () => {
  await nodes.freeze(3);
  try {
    await closesAfter(nodes.urls[3], 'connfail:frozen');
  } finally {
    await nodes.thaw(3);
  }
});

test(`[${BACKEND}] close() returns when the socket layer throws instead of emitting 'error'`, { timeout: 60000 }, async () => {
  const connect = net.connect;
  const bad = `redis://127.0.0.1:${nodes.nodes[3].port}`;
  net.connect = (opts, ...rest) => {
    if (opts && opts.port === nodes.nodes[3].port) throw new RangeError('a socket layer that throws');
    return connect.call(net, opts, ...rest);
  };
  try {
    await closesAfter(bad, 'connfail:throws');
  } finally {
    net.connect = connect;
  }
});
