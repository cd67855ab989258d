'use strict';
// The client's `tls` option (ca, cert, key, servername, rejectUnauthorized)
// on both backends (scripts/test.sh and test-wasm.sh: one host, lib/host.js,
// makes the TLS connections of both). Certificates are made here by
// core/testkit/tlstest/mkcerts.sh (a private CA, an unrelated CA, server
// certificates for 127.0.0.1 and for redis.internal, a client certificate),
// and TLS-only redis-servers started on them.
const nodeTest = require('node:test');
const assert = require('node:assert/strict');
const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { Client, InvalidArgumentError } = require('..');
const { withBackend, assertNoUnhandled, BACKEND, ROOT, startNodes, waitFor } = require('./helpers');
const { startServer } = require('./servers');

const test = nodeTest.test;
const client = (nodes, tls) => new Client(withBackend({ nodes, nodeTimeout: 2000, ...(tls === undefined ? {} : { tls }) }));

let dir; // the certificates
const pem = (name) => fs.readFileSync(path.join(dir, name));
let plain; // server.pem, no client certificate asked
let mutual; // server.pem, --tls-auth-clients yes
let internal; // internal.pem (redis.internal only)

function tlsServer(cert, key, authClients) {
  return startServer((port) => ['--port', '0', '--tls-port', String(port),
    '--tls-cert-file', path.join(dir, cert), '--tls-key-file', path.join(dir, key),
    '--tls-ca-cert-file', path.join(dir, 'ca.pem'), '--tls-auth-clients', authClients ? 'yes' : 'no']);
}

nodeTest.before(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'liblock-certs-'));
  execFileSync('sh', [path.join(ROOT, 'core/testkit/tlstest/mkcerts.sh'), dir], { stdio: ['ignore', 'ignore', 'inherit'] });
  [plain, mutual, internal] = await Promise.all([
    tlsServer('server.pem', 'server.key', false),
    tlsServer('server.pem', 'server.key', true),
    tlsServer('internal.pem', 'internal.key', false),
  ]);
});
nodeTest.after(async () => {
  await Promise.all([plain, mutual, internal].filter(Boolean).map((s) => s.kill()));
  fs.rmSync(dir, { recursive: true, force: true });
  assertNoUnhandled(assert);
});

const url = (s, q = '') => `rediss://127.0.0.1:${s.port}${q}`;

async function locks(nodes, tls) {
  const c = client(nodes, tls);
  try {
    const lock = await c.acquire('tls:ok', { ttl: 10000, wait: 0 });
    await lock.release();
  } finally {
    await c.close();
  }
}

async function unavailable(nodes, tls, cause) {
  const c = client(nodes, tls);
  try {
    await assert.rejects(c.acquire('tls:refused', { ttl: 10000, wait: 0 }), (e) => {
      assert.equal(e.code, 'UNAVAILABLE', e.message);
      assert.match(e.message, /node 0 \(127\.0\.0\.1:\d+\)/);
      assert.match(e.message, cause);
      return true;
    });
  } finally {
    await c.close();
  }
}

test(`[${BACKEND}] tls.ca: the private CA verifies the server (a string, a Buffer, an array)`, async () => {
  await locks([url(plain)], { ca: pem('ca.pem') });
  await locks([url(plain)], { ca: pem('ca.pem').toString() });
  await locks([url(plain)], { ca: [pem('other-ca.pem'), pem('ca.pem')] });
});

test(`[${BACKEND}] without tls.ca, or with an unrelated CA: UNAVAILABLE, the node's cause says why`, async () => {
  await unavailable([url(plain)], undefined, /unable to get local issuer certificate|self[- ]signed|certificate/i);
  await unavailable([url(plain)], { ca: pem('other-ca.pem') }, /unable to get local issuer certificate|self-signed certificate in certificate chain/);
});

test(`[${BACKEND}] mutual TLS: with tls.cert and tls.key the lock is taken, without them UNAVAILABLE`, async () => {
  await locks([url(mutual)], { ca: pem('ca.pem'), cert: pem('client.pem'), key: pem('client.key') });
  await unavailable([url(mutual)], { ca: pem('ca.pem') }, /alert certificate required/);
});

test(`[${BACKEND}] tls.servername verifies a certificate for redis.internal at 127.0.0.1; without it the name does not match`, async () => {
  await locks([url(internal)], { ca: pem('ca.pem'), servername: 'redis.internal' });
  await unavailable([url(internal)], { ca: pem('ca.pem') }, /IP: 127\.0\.0\.1 is not in the cert's list/);
});

test(`[${BACKEND}] skip_verify=true in the URL still turns verification off; so does rejectUnauthorized: false`, async () => {
  await locks([url(plain, '?skip_verify=true')]);
  await locks([url(plain, '?skip_verify=true')], { ca: pem('other-ca.pem') });
  await locks([url(plain)], { rejectUnauthorized: false });
});

test(`[${BACKEND}] bad tls options: InvalidArgumentError naming the field at construction, no key material`, () => {
  const key = pem('client.key').toString();
  const keyLine = key.split('\n')[1];
  const cases = [
    [{ ca: 42 }, /tls\.ca: must be a PEM string or a Buffer, got number/],
    [{ ca: [pem('ca.pem'), null] }, /tls\.ca\[1\]: must be a PEM string or a Buffer, got null/],
    [{ ca: [] }, /tls\.ca: must not be an empty array/],
    [{ ca: pem('garbage.pem') }, /tls\.ca: holds no PEM certificate/],
    [{ ca: key }, /tls\.ca: holds no PEM certificate/],
    [{ ca: '-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n' }, /tls\.ca: not a certificate node:tls can use/],
    [{ cert: pem('client.pem') }, /tls\.cert: needs tls\.key/],
    [{ key }, /tls\.key: needs tls\.cert/],
    [{ cert: pem('garbage.pem'), key }, /tls\.cert: not a PEM certificate node:tls can use/],
    [{ cert: pem('client.pem'), key: pem('garbage.pem') }, /tls\.key: not a PEM private key node:tls can use/],
    [{ cert: pem('client.pem'), key: pem('server.key') }, /tls\.key: does not match tls\.cert/],
    [{ cert: 7, key }, /tls\.cert: must be a PEM string or a Buffer, got number/],
    [{ servername: '' }, /tls\.servername: must be a non-empty string/],
    [{ rejectUnauthorized: 'no' }, /tls\.rejectUnauthorized: must be true or false, got string/],
    [{ cafile: 'x' }, /tls: unknown option "cafile" \(known: ca, cert, key, servername, rejectUnauthorized\)/],
    ['ca.pem', /tls: must be an object, got string/],
    [null, /tls: must be an object, got null/],
  ];
  for (const [tls, re] of cases) {
    assert.throws(() => client([url(plain)], tls), (e) => {
      assert.ok(e instanceof InvalidArgumentError, e.message);
      assert.match(e.message, re);
      assert.ok(!e.message.includes(keyLine) && !e.message.includes('PRIVATE KEY'), e.message);
      return true;
    }, JSON.stringify(tls));
  }
});

// Per node: two TLS nodes whose certificates come from two private CAs and
// a plain node, in one client.
nodeTest.describe('per-node tls', () => {
  let other; // other.pem, from other-ca
  let bare; // no TLS
  nodeTest.before(async () => {
    [other, bare] = await Promise.all([
      tlsServer('other.pem', 'other.key', false),
      startServer((port) => ['--port', String(port)]),
    ]);
  });
  nodeTest.after(async () => { await Promise.all([other, bare].filter(Boolean).map((s) => s.kill())); });
  const nodes = (second) => [url(plain), second, `redis://127.0.0.1:${bare.port}`];

  test(`[${BACKEND}] nodes[i] = { url, tls }: each node its own CA, the key on all three`, async () => {
    const c = client(nodes({ url: url(other), tls: { ca: pem('other-ca.pem') } }), { ca: pem('ca.pem') });
    try {
      const lock = await c.acquire('tls:pernode', { ttl: 10000, wait: 0 });
      const i = await c.inspect('tls:pernode');
      assert.deepEqual(i.nodes.map((n) => [n.holder, n.error]), [[true, null], [true, null], [true, null]]);
      await lock.release();
    } finally {
      await c.close();
    }
  });

  test(`[${BACKEND}] with the client's CA only, the other CA's node fails with its verification cause`, async () => {
    const c = client(nodes({ url: url(other) }), { ca: pem('ca.pem') });
    try {
      const lock = await c.acquire('tls:clientca', { ttl: 10000, wait: 0 }); // 2 of 3
      const i = await c.inspect('tls:clientca');
      assert.deepEqual(i.nodes.map((n) => n.holder), [true, false, true]);
      assert.match(i.nodes[1].error, /unable to verify the first certificate/);
      await lock.release();
    } finally {
      await c.close();
    }
  });

  test(`[${BACKEND}] a node's tls replaces the client's: 2 of 3 failing is UNAVAILABLE naming both`, async () => {
    const c = client([{ url: url(plain), tls: { ca: pem('other-ca.pem') } }, url(other), `redis://127.0.0.1:${bare.port}`], { ca: pem('ca.pem') });
    try {
      await assert.rejects(c.acquire('tls:replaced', { ttl: 10000, wait: 0 }), (e) => {
        assert.equal(e.code, 'UNAVAILABLE', e.message);
        assert.deepEqual(e.nodes.map((n) => n.node), [0, 1]);
        for (const n of e.nodes) assert.match(n.cause, /unable to verify the first certificate|unable to get local issuer certificate|self-signed certificate in certificate chain/);
        return true;
      });
    } finally {
      await c.close();
    }
  });

  test(`[${BACKEND}] bad node entries: InvalidArgumentError naming the entry`, () => {
    const cases = [
      [{ url: url(other), tls: { ca: 42 } }, /nodes\[1\]\.tls\.ca: must be a PEM string or a Buffer, got number/],
      [{ url: url(other), tls: { ca: pem('garbage.pem') } }, /nodes\[1\]\.tls\.ca: holds no PEM certificate/],
      [{ url: url(other), tls: { cert: pem('client.pem') } }, /nodes\[1\]\.tls\.cert: needs nodes\[1\]\.tls\.key/],
      [{ url: url(other), tls: { cert: pem('client.pem'), key: pem('server.key') } }, /nodes\[1\]\.tls\.key: does not match nodes\[1\]\.tls\.cert/],
      [{ url: url(other), tls: { cafile: 'x' } }, /nodes\[1\]\.tls: unknown option "cafile"/],
      [{ url: url(other), tls: null }, /nodes\[1\]\.tls: must be an object, got null/],
      [{ url: url(other), ca: 'x' }, /nodes\[1\]: unknown option "ca" \(known: url, tls\)/],
      [{ tls: {} }, /nodes\[1\]\.url: must be a string/],
      [{ url: 'http://x' }, /nodes\[1\]/],
    ];
    for (const [node, re] of cases) {
      assert.throws(() => client(nodes(node), { ca: pem('ca.pem') }), (e) => {
        assert.ok(e instanceof InvalidArgumentError, e.message);
        assert.match(e.message, re);
        return true;
      }, JSON.stringify(node));
    }
  });
});

// A Redis Cluster whose nodes listen with TLS and run their bus and
// replication over it (build/redisnodes -cluster -tls DIR): a rediss://
// cluster=yes URL with the private CA takes the lock on its shard (the
// primary and, the default WAIT 1, its replica); without the CA nothing.
nodeTest.describe('tls cluster', () => {
  let dep;
  nodeTest.before(async () => { dep = await startNodes(3, ['-cluster', '-tls', dir]); });
  nodeTest.after(async () => { if (dep) await dep.stop(); });

  test(`[${BACKEND}] rediss:// cluster=yes with tls.ca: the lock on its shard, then nothing left`, async () => {
    assert.match(dep.clusterTlsUrl, /^rediss:\/\/127\.0\.0\.1:\d+\?.*cluster=yes/);
    const c = new Client(withBackend({ nodes: [dep.clusterTlsUrl], nodeTimeout: 3000, tls: { ca: pem('ca.pem') } }));
    try {
      const l = await c.acquire('tls:clu', { ttl: 10000, wait: 0 });
      assert.equal(l.key, '{tls:clu}');
      await waitFor(async () => (await dep.keys()).flat().filter((k) => k === '{tls:clu}').length === 2,
        { what: 'the key on its primary and its replica' });
      await l.release();
      await waitFor(async () => (await dep.keys()).every((k) => k.length === 0), { what: 'no key left' });
    } finally {
      await c.close();
    }
  });

  test(`[${BACKEND}] rediss:// cluster=yes without tls.ca: UNAVAILABLE, the certificate is the cause`, async () => {
    const c = new Client(withBackend({ nodes: [dep.clusterTlsUrl], nodeTimeout: 3000 }));
    try {
      await assert.rejects(c.acquire('tls:clu', { ttl: 10000, wait: 0 }), (e) => {
        assert.equal(e.code, 'UNAVAILABLE', e.message);
        assert.match(e.message, /certificate/i);
        return true;
      });
      assert.ok((await dep.keys()).every((k) => k.length === 0), 'nothing taken');
    } finally {
      await c.close();
    }
  });
});
