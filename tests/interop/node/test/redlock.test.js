// Redlock quorum scenarios for redlock 4 and @sesamecare-oss/redlock (both on
// ioredis 5), each over three redis-servers and over three latchds.
'use strict';

const { describe, it, before, after, beforeEach } = require('node:test');
const assert = require('node:assert/strict');
const Redlock4 = require('redlock');
const { Redlock: SesameRedlock } = require('@sesamecare-oss/redlock');
const { KINDS, startServers, stopServers } = require('../lib/servers');
const { sleep, whenReady, Closer } = require('../lib/util');

const SETTINGS = { driftFactor: 0.01, retryCount: 0, retryDelay: 50, retryJitter: 10 };

// The two libraries' APIs, reduced to what the scenarios do.
const LIBRARIES = [
  {
    name: 'redlock 4',
    create(clients, settings) {
      const rl = new Redlock4(clients, { ...SETTINGS, ...settings });
      rl.on('clientError', () => {}); // one per unreachable server per attempt
      return rl;
    },
    acquire: (rl, resources, ttl) => rl.lock(resources, ttl),
    release: (rl, lock) => lock.unlock(),
    extend: (rl, lock, ttl) => lock.extend(ttl),
    failure: Redlock4.LockError,
  },
  {
    name: '@sesamecare-oss/redlock',
    create(clients, settings) {
      const rl = new SesameRedlock(clients, { ...SETTINGS, ...settings });
      rl.on('error', () => {}); // ResourceLockedError per server per failed attempt
      return rl;
    },
    acquire: (rl, resources, ttl) => rl.acquire(resources, ttl),
    release: (rl, lock) => lock.release(),
    extend: (rl, lock, ttl) => lock.extend(ttl),
    failure: Error, // ExecutionError is not exported from the package root
  },
];

for (const kind of KINDS) {
  for (const lib of LIBRARIES) {
    describe(`${lib.name} [${kind}]`, () => {
      let servers;
      let clients;
      const closer = new Closer();

      const redlock = (settings = {}) => lib.create(clients, settings);
      const valuesOn = (key) => Promise.all(clients.map((c) => c.get(key).catch(() => 'down')));

      before(async () => {
        servers = await startServers(kind, 3);
        // Commands to a stopped server must fail at once, not queue.
        clients = servers.map((s) => closer.ioredis(s, { enableOfflineQueue: false, retryStrategy: () => 100 }));
        await Promise.all(clients.map(whenReady));
      });
      after(async () => {
        await closer.closeAll();
        await stopServers(servers);
      });
      beforeEach(async () => {
        await Promise.all(clients.filter((c) => c.status === 'ready').map((c) => c.flushall()));
      });

      it('acquires and releases a single resource on every instance', async () => {
        const rl = redlock();
        const lock = await lib.acquire(rl, ['rl-one'], 5000);
        assert.deepEqual(await valuesOn('rl-one'), [lock.value, lock.value, lock.value]);
        for (const c of clients) {
          const pttl = await c.pttl('rl-one');
          assert.ok(pttl > 0 && pttl <= 5000, `pttl ${pttl}`);
        }
        await lib.release(rl, lock);
        assert.deepEqual(await valuesOn('rl-one'), [null, null, null]);
      });

      it('acquires several resources at once', async () => {
        const rl = redlock();
        const lock = await lib.acquire(rl, ['rl-a', 'rl-b', 'rl-c'], 5000);
        for (const key of ['rl-a', 'rl-b', 'rl-c']) {
          assert.deepEqual(await valuesOn(key), [lock.value, lock.value, lock.value]);
        }
        // A second lock overlapping on one resource is refused.
        await assert.rejects(lib.acquire(rl, ['rl-c', 'rl-d'], 5000), lib.failure);
        assert.deepEqual(await valuesOn('rl-d'), [null, null, null]);
        await lib.release(rl, lock);
        for (const key of ['rl-a', 'rl-b', 'rl-c']) assert.deepEqual(await valuesOn(key), [null, null, null]);
      });

      it('contention: a retrying acquirer gets the lock once it is released', async () => {
        const rl = redlock();
        const first = await lib.acquire(rl, ['rl-contend'], 10000);
        // Without retries the held lock is refused.
        await assert.rejects(lib.acquire(rl, ['rl-contend'], 10000), lib.failure);
        const retrying = redlock({ retryCount: 40, retryDelay: 50 });
        const second = lib.acquire(retrying, ['rl-contend'], 5000);
        await sleep(300);
        await lib.release(rl, first);
        const lock = await second;
        assert.notEqual(lock.value, first.value);
        assert.deepEqual(await valuesOn('rl-contend'), [lock.value, lock.value, lock.value]);
        await lib.release(retrying, lock);
      });

      it('contention: retries run out while the lock is held', async () => {
        const rl = redlock();
        const first = await lib.acquire(rl, ['rl-held'], 10000);
        const started = Date.now();
        await assert.rejects(lib.acquire(redlock({ retryCount: 3, retryDelay: 50 }), ['rl-held'], 1000), lib.failure);
        assert.ok(Date.now() - started >= 100, 'gave up without retrying');
        assert.deepEqual(await valuesOn('rl-held'), [first.value, first.value, first.value]);
        await lib.release(rl, first);
      });

      it('extends a held lock', async () => {
        const rl = redlock();
        const lock = await lib.acquire(rl, ['rl-extend'], 1000);
        const extended = await lib.extend(rl, lock, 8000);
        for (const c of clients) {
          const pttl = await c.pttl('rl-extend');
          assert.ok(pttl > 5000 && pttl <= 8000, `pttl ${pttl}`);
        }
        assert.equal(extended.value, lock.value);
        await lib.release(rl, extended);
        assert.deepEqual(await valuesOn('rl-extend'), [null, null, null]);
      });

      it('an expired lock cannot be extended', async () => {
        const rl = redlock();
        const lock = await lib.acquire(rl, ['rl-expired'], 100);
        await sleep(200);
        const other = await lib.acquire(rl, ['rl-expired'], 5000);
        await assert.rejects(lib.extend(rl, lock, 5000), lib.failure);
        assert.deepEqual(await valuesOn('rl-expired'), [other.value, other.value, other.value]);
        await lib.release(rl, other);
      });

      // The last two scenarios stop servers: they run after the others.
      it('one instance down: the quorum of two still locks', async () => {
        await servers[2].stop();
        const rl = redlock();
        const lock = await lib.acquire(rl, ['rl-quorum'], 5000);
        assert.deepEqual(await valuesOn('rl-quorum'), [lock.value, lock.value, 'down']);
        await assert.rejects(lib.acquire(rl, ['rl-quorum'], 5000), lib.failure);
        await lib.release(rl, lock); // two of three instances release: a quorum
        assert.deepEqual(await valuesOn('rl-quorum'), [null, null, 'down']);
      });

      it('two instances down: acquire fails cleanly', async () => {
        await servers[1].stop();
        const rl = redlock({ retryCount: 2, retryDelay: 50 });
        await assert.rejects(lib.acquire(rl, ['rl-noquorum'], 5000), lib.failure);
        // The vote the live instance gave was taken back.
        assert.deepEqual(await valuesOn('rl-noquorum'), [null, 'down', 'down']);
      });
    });
  }
}
