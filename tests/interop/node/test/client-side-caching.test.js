// node-redis 5's client-side caching (RESP3 `clientSideCache`, which turns
// CLIENT TRACKING on and drops entries on `invalidate` pushes), its
// `emitInvalidate` events, and ioredis (RESP2) caching through a
// REDIRECT to a subscriber of __redis__:invalidate.
'use strict';

const { describe, it, before, after, beforeEach } = require('node:test');
const assert = require('node:assert/strict');
const { KINDS, startServers, stopServers } = require('../lib/servers');
const { waitFor, Closer } = require('../lib/util');

for (const kind of KINDS) {
  describe(`client-side caching [${kind}]`, () => {
    let server;
    let admin;
    const closer = new Closer();
    const connect = (options) => closer.nodeRedis(server, options);

    before(async () => {
      [server] = await startServers(kind);
      admin = await connect({ RESP: 2 });
    });
    after(async () => {
      await closer.closeAll();
      await stopServers([server]);
    });
    beforeEach(async () => { await admin.flushAll(); });

    it('node-redis clientSideCache: hits, then a write elsewhere invalidates', async () => {
      const client = await connect({ RESP: 3, clientSideCache: { ttl: 0, maxEntries: 0 } });
      const csc = client.clientSideCache;
      await admin.set('csc:k', 'one');
      assert.equal(await client.get('csc:k'), 'one');
      assert.equal(await client.get('csc:k'), 'one');
      assert.equal(csc.stats().hitCount, 1);
      const info = await client.sendCommand(['CLIENT', 'TRACKINGINFO']);
      assert.deepEqual([...info.flags ?? info[1]].map(String), ['on']);
      await admin.set('csc:k', 'two');
      // the push drops the entry; the next GET goes to the server
      await waitFor('the invalidation', async () => (await client.get('csc:k')) === 'two');
      await admin.hSet('csc:h', 'f', 'v');
      assert.deepEqual({ ...(await client.hGetAll('csc:h')) }, { f: 'v' });
      await admin.flushAll();   // the null invalidation empties the cache
      await waitFor('the flush', async () => (await client.get('csc:k')) === null);
    });

    it('node-redis emitInvalidate: the keys of every invalidation, and null for a flush', async () => {
      const client = await connect({ RESP: 3, emitInvalidate: true });
      const seen = [];
      client.on('invalidate', (key) => seen.push(key === null ? null : String(key)));
      await client.mGet(['a', 'b']);
      await admin.mSet([['b', '1'], ['a', '2']]);
      await waitFor('two invalidations', () => seen.length === 2);
      assert.deepEqual(seen, ['b', 'a']);
      await admin.flushDb();
      await waitFor('the null invalidation', () => seen.length === 3);
      assert.equal(seen[2], null);
    });

    it('ioredis RESP2: REDIRECT to a subscriber of __redis__:invalidate, BCAST prefix', async () => {
      const sub = closer.ioredis(server);
      const reader = closer.ioredis(server);
      const messages = [];
      const subId = await sub.client('ID');
      sub.on('message', (channel, msg) => messages.push([channel, msg]));
      sub.on('messageBuffer', () => {});
      await sub.subscribe('__redis__:invalidate');
      assert.equal(await reader.client('TRACKING', 'ON', 'REDIRECT', subId), 'OK');
      assert.equal(await reader.client('GETREDIR'), subId);
      await reader.get('r:k');
      await admin.set('r:k', 'v');
      await waitFor('the redirected invalidation', () => messages.length === 1);
      assert.equal(messages[0][0], '__redis__:invalidate');
      assert.match(String(messages[0][1]), /r:k/);
      await reader.client('TRACKING', 'OFF');
      await reader.client('TRACKING', 'ON', 'BCAST', 'PREFIX', 'p:', 'REDIRECT', subId);
      await admin.mSet([['p:1', 'x'], ['q:1', 'y']]);
      await waitFor(`the broadcast ${JSON.stringify(messages)}`, () => messages.length === 2);
      assert.match(String(messages[1][1]), /p:1/);
      assert.doesNotMatch(String(messages[1][1]), /q:1/);
    });
  });
}
