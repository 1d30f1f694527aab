// node-redisson (on ioredis 5, RESP2) RLock scenarios, run unmodified
// against redis-server and latchd.
'use strict';

const { describe, it, before, after, beforeEach } = require('node:test');
const assert = require('node:assert/strict');
const { Redisson, TimeUnit } = require('node-redisson');
const { KINDS, startServers, stopServers } = require('../lib/servers');
const { sleep, waitFor, Closer } = require('../lib/util');

const WATCHDOG_MS = 900; // renewals every WATCHDOG_MS / 3

for (const kind of KINDS) {
  describe(`node-redisson [${kind}]`, () => {
    let server;
    let admin;
    const closer = new Closer();

    const redisson = (extra = {}) => {
      const r = new Redisson({ redis: { options: server.options }, ...extra });
      r.redis.on('error', () => {});
      return closer.add(r, (x) => x.quit());
    };

    before(async () => {
      [server] = await startServers(kind);
      admin = closer.ioredis(server);
    });
    after(async () => {
      await closer.closeAll();
      await stopServers([server]);
    });
    beforeEach(async () => { await admin.flushall(); });

    it('connects (INFO ready check) and speaks RESP2, as ioredis 5 does', async () => {
      const r = redisson();
      const info = await r.redis.call('client', 'info');
      assert.match(String(info), /resp=2/);
    });

    it('lock, isLocked, unlock', async () => {
      const lock = redisson().getLock('res-basic');
      assert.equal(await lock.isLocked(), false);
      await lock.lock(5000, TimeUnit.MILLISECONDS);
      assert.equal(await lock.isLocked(), true);
      const pttl = await admin.pttl('res-basic');
      assert.ok(pttl > 0 && pttl <= 5000, `pttl ${pttl}`);
      await lock.unlock();
      assert.equal(await lock.isLocked(), false);
    });

    it('is reentrant: two locks need two unlocks', async () => {
      const lock = redisson().getLock('res-reentrant');
      await lock.lock(5000, TimeUnit.MILLISECONDS);
      await lock.lock(5000, TimeUnit.MILLISECONDS);
      const holders = await admin.hgetall('res-reentrant');
      assert.deepEqual(Object.values(holders), ['2']);
      await lock.unlock();
      assert.equal(await lock.isLocked(), true);
      assert.deepEqual(Object.values(await admin.hgetall('res-reentrant')), ['1']);
      await lock.unlock();
      assert.equal(await lock.isLocked(), false);
    });

    it('tryLock(wait, lease) acquires a free lock with that lease', async () => {
      const lock = redisson().getLock('res-try');
      assert.equal(await lock.tryLock(1000, 3000, TimeUnit.MILLISECONDS), true);
      const pttl = await admin.pttl('res-try');
      assert.ok(pttl > 2000 && pttl <= 3000, `pttl ${pttl}`);
      await lock.unlock();
    });

    it('tryLock(wait, lease) times out on a held lock', async () => {
      const holder = redisson().getLock('res-busy');
      await holder.lock(10000, TimeUnit.MILLISECONDS);
      const waiter = redisson().getLock('res-busy');
      const started = Date.now();
      assert.equal(await waiter.tryLock(300, 1000, TimeUnit.MILLISECONDS), false);
      assert.ok(Date.now() - started >= 250, 'tryLock gave up before its wait time');
      assert.equal(await holder.isLocked(), true);
      await holder.unlock();
    });

    it('watchdog keeps a lease-less lock alive past its timeout', async () => {
      const r = redisson({ lockWatchdogTimeout: BigInt(WATCHDOG_MS) });
      const lock = r.getLock('res-watchdog');
      await lock.lock();
      const first = await admin.pttl('res-watchdog');
      assert.ok(first > 0 && first <= WATCHDOG_MS, `pttl ${first}`);
      // Three renew periods and then more than the whole timeout.
      await sleep(3 * (WATCHDOG_MS / 3) + WATCHDOG_MS / 2);
      assert.equal(await lock.isLocked(), true, 'lock expired: watchdog did not renew');
      const pttl = await admin.pttl('res-watchdog');
      assert.ok(pttl > 0 && pttl <= WATCHDOG_MS, `pttl ${pttl}`);
      await lock.unlock();
      await sleep(WATCHDOG_MS / 2);
      assert.equal(await lock.isLocked(), false, 'watchdog recreated an unlocked lock');
    });

    it('a waiter wakes on the unlock message, not at lease expiry', async () => {
      const LEASE_MS = 2000;
      const holder = redisson().getLock('res-contend');
      const waiterClient = redisson();
      const waiter = waiterClient.getLock('res-contend');
      await holder.lock(LEASE_MS, TimeUnit.MILLISECONDS);
      let acquiredAt = 0;
      const waiting = waiter.lock(LEASE_MS, TimeUnit.MILLISECONDS).then(() => { acquiredAt = Date.now(); });
      // The waiter is parked once it has subscribed to the lock's channel.
      await waitFor('waiter subscription', async () =>
        (await admin.pubsub('NUMSUB', 'redisson_lock__channel:{res-contend}'))[1] >= 1);
      await sleep(50);
      assert.equal(acquiredAt, 0, 'waiter got a held lock');
      const unlockedAt = Date.now();
      await holder.unlock();
      await waiting;
      const latency = acquiredAt - unlockedAt;
      console.log(`# node-redisson [${kind}] wake-up latency after unlock: ${latency} ms`);
      assert.ok(latency < 100, `waiter woke ${latency} ms after unlock (lease ${LEASE_MS} ms)`);
      const holders = await admin.hgetall('res-contend');
      assert.deepEqual(Object.keys(holders), [`${waiterClient.commandExecutor.id}:${waiter.clientId}`]);
      await waiter.unlock();
      // node-redisson 1.0.4 leaves its wait timer (the holder's pttl) armed after
      // the message came; when it fires it UNSUBSCRIBEs, so keep the client open.
      await sleep(Math.max(0, unlockedAt + LEASE_MS + 100 - Date.now()));
    });

    it('forceUnlock frees a lock held by another client', async () => {
      const holder = redisson().getLock('res-force');
      await holder.lock(10000, TimeUnit.MILLISECONDS);
      const other = redisson().getLock('res-force');
      assert.equal(await other.forceUnlock(), true);
      assert.equal(await holder.isLocked(), false);
      assert.equal(await other.forceUnlock(), false, 'forceUnlock of a free lock');
      assert.equal(await other.tryLock(0, 1000, TimeUnit.MILLISECONDS), true);
      await other.unlock();
    });

    it('forceUnlock wakes a waiter through its unlock message', async () => {
      const LEASE_MS = 2000;
      const holder = redisson().getLock('res-force-wake');
      const waiter = redisson().getLock('res-force-wake');
      await holder.lock(LEASE_MS, TimeUnit.MILLISECONDS);
      let acquiredAt = 0;
      const waiting = waiter.tryLock(LEASE_MS * 2, LEASE_MS, TimeUnit.MILLISECONDS)
        .then((ok) => { acquiredAt = Date.now(); return ok; });
      await waitFor('waiter subscription', async () =>
        (await admin.pubsub('NUMSUB', 'redisson_lock__channel:{res-force-wake}'))[1] >= 1);
      const forcedAt = Date.now();
      assert.equal(await redisson().getLock('res-force-wake').forceUnlock(), true);
      assert.equal(await waiting, true);
      assert.ok(acquiredAt - forcedAt < LEASE_MS / 2, `waiter woke ${acquiredAt - forcedAt} ms after forceUnlock`);
      await waiter.unlock();
      // The stale wait timer of node-redisson 1.0.4 (see above) must fire on an open client.
      await sleep(Math.max(0, forcedAt + LEASE_MS + 100 - Date.now()));
    });

    it('unlocking a lock you do not hold fails', async () => {
      const holder = redisson().getLock('res-notmine');
      const other = redisson().getLock('res-notmine');
      await assert.rejects(other.unlock(), /not locked by current client/);
      await holder.lock(5000, TimeUnit.MILLISECONDS);
      await assert.rejects(other.unlock(), /not locked by current client/);
      assert.equal(await holder.isLocked(), true);
      await holder.unlock();
    });
  });
}
