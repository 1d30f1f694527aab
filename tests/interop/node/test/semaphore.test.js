// redis-semaphore (on ioredis 5) scenarios: Mutex, Semaphore, MultiSemaphore
// and RedlockMutex, against redis-server and latchd.
'use strict';

const { describe, it, before, after, beforeEach } = require('node:test');
const assert = require('node:assert/strict');
const { Mutex, Semaphore, MultiSemaphore, RedlockMutex, RedlockSemaphore, TimeoutError } = require('redis-semaphore');
const { KINDS, startServers, stopServers } = require('../lib/servers');
const { sleep, whenReady, Closer } = require('../lib/util');

// Fail fast on a lost lock instead of redis-semaphore's default (throw from a timer).
const lost = [];
const OPTIONS = { lockTimeout: 2000, acquireTimeout: 3000, retryInterval: 20, onLockLost: (err) => lost.push(err) };
// tryAcquire() retries until acquireTimeout; these try exactly once.
const ONCE = { ...OPTIONS, acquireAttemptsLimit: 1 };

for (const kind of KINDS) {
  describe(`redis-semaphore [${kind}]`, () => {
    let servers;
    let clients;
    let client;
    const closer = new Closer();

    before(async () => {
      servers = await startServers(kind, 3);
      clients = servers.map((s) => closer.ioredis(s));
      await Promise.all(clients.map(whenReady));
      client = clients[0];
    });
    after(async () => {
      await closer.closeAll();
      await stopServers(servers);
    });
    beforeEach(async () => {
      lost.length = 0;
      await Promise.all(clients.map((c) => c.flushall()));
    });

    it('Mutex: acquire and release', async () => {
      const mutex = new Mutex(client, 'm-basic', OPTIONS);
      await mutex.acquire();
      assert.equal(mutex.isAcquired, true);
      assert.equal(await client.get('mutex:m-basic'), mutex.identifier);
      await mutex.release();
      assert.equal(mutex.isAcquired, false);
      assert.equal(await client.exists('mutex:m-basic'), 0);
    });

    it('Mutex: refresh keeps the lock past its timeout', async () => {
      const mutex = new Mutex(client, 'm-refresh', { ...OPTIONS, lockTimeout: 600, refreshInterval: 150 });
      await mutex.acquire();
      await sleep(1500); // longer than two lock timeouts
      const pttl = await client.pttl('mutex:m-refresh');
      assert.ok(pttl > 0 && pttl <= 600, `pttl ${pttl}`);
      assert.equal(await client.get('mutex:m-refresh'), mutex.identifier);
      assert.deepEqual(lost, []);
      await mutex.release();
      assert.equal(await client.exists('mutex:m-refresh'), 0);
    });

    it('Mutex: a refresh that finds the lock gone reports it lost', async () => {
      const mutex = new Mutex(client, 'm-lost', { ...OPTIONS, lockTimeout: 400, refreshInterval: 50 });
      await mutex.acquire();
      await client.set('mutex:m-lost', 'someone-else');
      await sleep(200);
      assert.equal(lost.length >= 1, true, 'onLockLost not called');
      assert.equal(mutex.isAcquired, false);
      await mutex.release();
      assert.equal(await client.get('mutex:m-lost'), 'someone-else', 'release deleted a foreign lock');
    });

    it('Mutex: contention', async () => {
      const first = new Mutex(client, 'm-contend', OPTIONS);
      const second = new Mutex(client, 'm-contend', OPTIONS);
      await first.acquire();
      assert.equal(await new Mutex(client, 'm-contend', ONCE).tryAcquire(), false);
      await assert.rejects(new Mutex(client, 'm-contend', { ...OPTIONS, acquireTimeout: 100 }).acquire(),
        TimeoutError);
      const waiting = second.acquire();
      await sleep(100);
      assert.equal(second.isAcquired, false);
      await first.release();
      await waiting;
      assert.equal(await client.get('mutex:m-contend'), second.identifier);
      await second.release();
    });

    it('Semaphore: limit 2, the third waits for a release', async () => {
      const [a, b, c] = [0, 1, 2].map(() => new Semaphore(client, 's-two', 2, OPTIONS));
      await a.acquire();
      await b.acquire();
      assert.equal(await client.zcard('semaphore:s-two'), 2);
      assert.equal(await new Semaphore(client, 's-two', 2, ONCE).tryAcquire(), false);
      const waiting = c.acquire();
      await sleep(100);
      assert.equal(c.isAcquired, false);
      await a.release();
      await waiting;
      const holders = await client.zrange('semaphore:s-two', 0, -1);
      assert.deepEqual(holders.sort(), [b.identifier, c.identifier].sort());
      await b.release();
      await c.release();
      assert.equal(await client.zcard('semaphore:s-two'), 0);
    });

    it('MultiSemaphore: 3 of 5 permits', async () => {
      const three = new MultiSemaphore(client, 'ms', 5, 3, OPTIONS);
      const otherThree = new MultiSemaphore(client, 'ms', 5, 3, OPTIONS);
      const two = new MultiSemaphore(client, 'ms', 5, 2, OPTIONS);
      await three.acquire();
      assert.equal(await client.zcard('semaphore:ms'), 3);
      assert.equal(await new MultiSemaphore(client, 'ms', 5, 3, ONCE).tryAcquire(), false);
      assert.equal(await two.tryAcquire(), true);
      assert.equal(await client.zcard('semaphore:ms'), 5);
      const waiting = otherThree.acquire();
      await sleep(100);
      assert.equal(otherThree.isAcquired, false);
      await three.release();
      await waiting;
      assert.equal(await client.zcard('semaphore:ms'), 5);
      await two.release();
      await otherThree.release();
      assert.equal(await client.zcard('semaphore:ms'), 0);
    });

    it('RedlockMutex across three instances', async () => {
      const first = new RedlockMutex(clients, 'rm', OPTIONS);
      const second = new RedlockMutex(clients, 'rm', OPTIONS);
      await first.acquire();
      assert.deepEqual(await Promise.all(clients.map((c) => c.get('mutex:rm'))),
        [first.identifier, first.identifier, first.identifier]);
      assert.equal(await new RedlockMutex(clients, 'rm', ONCE).tryAcquire(), false);
      const waiting = second.acquire();
      await sleep(100);
      assert.equal(second.isAcquired, false);
      await first.release();
      await waiting;
      assert.deepEqual(await Promise.all(clients.map((c) => c.get('mutex:rm'))),
        [second.identifier, second.identifier, second.identifier]);
      await second.release();
      assert.deepEqual(await Promise.all(clients.map((c) => c.exists('mutex:rm'))), [0, 0, 0]);
    });

    it('RedlockSemaphore limit 2 across three instances', async () => {
      const [a, b, c] = [0, 1, 2].map(() => new RedlockSemaphore(clients, 'rs', 2, OPTIONS));
      await a.acquire();
      await b.acquire();
      assert.deepEqual(await Promise.all(clients.map((x) => x.zcard('semaphore:rs'))), [2, 2, 2]);
      assert.equal(await new RedlockSemaphore(clients, 'rs', 2, ONCE).tryAcquire(), false);
      const waiting = c.acquire();
      await sleep(100);
      assert.equal(c.isAcquired, false);
      await a.release();
      await waiting;
      for (const x of clients) {
        assert.deepEqual((await x.zrange('semaphore:rs', 0, -1)).sort(), [b.identifier, c.identifier].sort());
      }
      await b.release();
      await c.release();
      assert.deepEqual(await Promise.all(clients.map((x) => x.zcard('semaphore:rs'))), [0, 0, 0]);
    });
  });
}
