// ioredis and node-redis over TLS (`tls: {...}`), as managed-Redis users
// connect: both servers serve a tls-port from certificates made here with
// the openssl CLI, mutual TLS (Redis's default tls-auth-clients yes).
'use strict';

const { describe, it, before, after } = require('node:test');
const assert = require('node:assert/strict');
const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const Redis = require('ioredis');
const { createClient } = require('redis');
const { KINDS, Server, freePort, stopServers } = require('../lib/servers');
const { whenReady, Closer } = require('../lib/util');

// A CA, a server certificate for 127.0.0.1 and a client one (P-256 keys).
function makeCerts(dir) {
  const run = (args, input) => execFileSync('openssl', args, { input, stdio: ['pipe', 'pipe', 'ignore'] });
  const file = (name) => path.join(dir, name);
  const key = (name) => run(['genpkey', '-algorithm', 'EC', '-pkeyopt', 'ec_paramgen_curve:P-256', '-out', file(`${name}.key`)]);
  key('ca');
  run(['req', '-x509', '-new', '-nodes', '-sha256', '-key', file('ca.key'), '-days', '30',
    '-subj', '/CN=interop-ca', '-out', file('ca.crt')]);
  for (const [name, ext] of [['server', 'subjectAltName = IP:127.0.0.1\n'], ['client', 'basicConstraints = CA:FALSE\n']]) {
    key(name);
    fs.writeFileSync(file(`${name}.ext`), ext);
    const csr = run(['req', '-new', '-sha256', '-subj', `/CN=${name}`, '-key', file(`${name}.key`)]);
    run(['x509', '-req', '-sha256', '-CA', file('ca.crt'), '-CAkey', file('ca.key'), '-CAcreateserial',
      '-days', '30', '-extfile', file(`${name}.ext`), '-out', file(`${name}.crt`)], csr);
  }
  return {
    file,
    tls: { ca: fs.readFileSync(file('ca.crt')), cert: fs.readFileSync(file('client.crt')), key: fs.readFileSync(file('client.key')) },
  };
}

for (const kind of KINDS) {
  describe(`TLS clients [${kind}]`, () => {
    let dir;
    let certs;
    let server;
    let tlsPort;
    const closer = new Closer();

    before(async () => {
      dir = fs.mkdtempSync(path.join(os.tmpdir(), 'latchd-node-tls-'));
      certs = makeCerts(dir);
      tlsPort = await freePort();
      server = await new Server(kind, ['--tls-port', String(tlsPort), '--tls-cert-file', certs.file('server.crt'),
        '--tls-key-file', certs.file('server.key'), '--tls-ca-cert-file', certs.file('ca.crt')]).start();
    });
    after(async () => {
      await closer.closeAll();
      await stopServers([server]);
      fs.rmSync(dir, { recursive: true, force: true });
    });

    it('ioredis with tls: SET NX PX, a lock script, pub/sub', async () => {
      const client = closer.ioredis(server, { port: tlsPort, tls: certs.tls });
      const sub = closer.ioredis(server, { port: tlsPort, tls: certs.tls });
      await Promise.all([whenReady(client), whenReady(sub)]);
      assert.equal(await client.set('lock', 'owner-1', 'PX', 30000, 'NX'), 'OK');
      assert.equal(await client.set('lock', 'owner-2', 'PX', 30000, 'NX'), null);
      const release = "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) end return 0";
      assert.equal(await client.eval(release, 1, 'lock', 'owner-2'), 0);
      assert.equal(await client.eval(release, 1, 'lock', 'owner-1'), 1);
      const got = new Promise((resolve) => sub.on('message', (ch, msg) => resolve([ch, msg])));
      await sub.subscribe('unlocks');
      assert.equal(await client.publish('unlocks', 'x'.repeat(3000)), 1);
      assert.deepEqual(await got, ['unlocks', 'x'.repeat(3000)]);
      const big = 'v'.repeat(1 << 20);
      await client.set('big', big);
      assert.equal(await client.get('big'), big);
    });

    it('node-redis with socket.tls: HSET / HINCRBY / PEXPIRE pipeline', async () => {
      const client = await closer.nodeRedis(server, { socket: { host: server.host, port: tlsPort, tls: true, ...certs.tls, reconnectStrategy: false } });
      const replies = await client.multi()
        .hIncrBy('lock:orders', 'uuid:1', 1).pExpire('lock:orders', 30000).pTTL('lock:orders').exec();
      assert.equal(replies[0], 1);
      assert.ok(replies[2] > 0 && replies[2] <= 30000);
      assert.equal(await client.ping(), 'PONG');
    });

    it('a client without its certificate is refused', async () => {
      const client = new Redis({ ...server.options, port: tlsPort, tls: { ca: certs.tls.ca }, lazyConnect: true,
        maxRetriesPerRequest: 0, retryStrategy: () => null, enableOfflineQueue: false });
      client.on('error', () => {});
      await assert.rejects(client.connect().then(() => client.ping()));
      client.disconnect();
    });
  });
}
