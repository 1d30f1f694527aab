// Plain node-redis 5 usage in RESP3 and RESP2: handshake, SET NX PX,
// `scripts` option (EVALSHA first, NOSCRIPT -> EVAL), multi() transactions,
// pub/sub with patterns.
'use strict';

const { describe, it, before, after, beforeEach } = require('node:test');
const assert = require('node:assert/strict');
const { defineScript } = require('redis');
const { KINDS, startServers, stopServers } = require('../lib/servers');
const { waitFor, Closer } = require('../lib/util');

const releaseIfMatch = defineScript({
  NUMBER_OF_KEYS: 1,
  SCRIPT: `if redis.call('get', KEYS[1]) == ARGV[1] then
  return redis.call('del', KEYS[1])
end
return 0`,
  parseCommand(parser, key, token) {
    parser.pushKey(key);
    parser.push(token);
  },
  transformReply: (reply) => reply,
});

for (const kind of KINDS) {
  for (const RESP of [3, 2]) {
    describe(`node-redis 5 RESP${RESP} [${kind}]`, () => {
      let server;
      let admin;
      let client;
      const closer = new Closer();
      const connect = (extra = {}) => closer.nodeRedis(server, { RESP, ...extra });

      before(async () => {
        [server] = await startServers(kind);
        admin = await connect({ RESP: 2 });
        client = await connect({ name: 'interop-node-redis', scripts: { releaseIfMatch } });
      });
      after(async () => {
        await closer.closeAll();
        await stopServers([server]);
      });
      beforeEach(async () => { await admin.flushAll(); });

      it('HELLO / INFO handshake', async () => {
        const hello = await client.hello(RESP);
        assert.equal(hello.server, 'redis');
        assert.equal(hello.proto, RESP);
        assert.equal(hello.mode, 'standalone');
        assert.equal(hello.role, 'master');
        assert.ok(Array.isArray(hello.modules));
        const own = String(await client.sendCommand(['CLIENT', 'INFO']));
        assert.match(own, new RegExp(`resp=${RESP}`));
        assert.match(own, /name=interop-node-redis/);
        const info = await client.info();
        assert.match(info, /^# Server\r\n/);
        assert.match(info, /\r\nredis_version:\d+\.\d+\.\d+\r\n/);
        assert.match(info, /\r\nloading:0\r\n/);
      });

      it('BLPOP / BLMOVE / BZPOPMIN consumers', async () => {
        // a consumer connection parks in the blocking command until a push
        const consumer = await connect();
        const blocked = (n) => async () => new RegExp(`\r\nblocked_clients:${n}\r\n`).test(await admin.info('clients'));
        const popped = consumer.blPop('q', 0);
        await waitFor('BLPOP to block', blocked(1));
        assert.equal(await client.rPush('q', ['a', 'b']), 2);
        assert.deepEqual({ ...(await popped) }, { key: 'q', element: 'a' });
        assert.equal(await consumer.blPop('none', 0.05), null);
        const moved = consumer.blMove('src', 'dst', 'RIGHT', 'LEFT', 0);
        await waitFor('BLMOVE to block', blocked(1));
        await client.lPush('src', 'job');
        assert.equal(await moved, 'job');
        assert.deepEqual(await client.lRange('dst', 0, -1), ['job']);
        const z = consumer.bzPopMin('z', 5);
        await waitFor('BZPOPMIN to block', blocked(1));
        await client.zAdd('z', { score: 2.5, value: 'm' });
        assert.deepEqual({ ...(await z) }, { key: 'z', value: 'm', score: 2.5 });
        await waitFor('nobody blocked', blocked(0));
      });

      it('ACL user (username option)', async () => {
        const name = `nr-app-${RESP}`;
        assert.equal(await admin.sendCommand(['ACL', 'SETUSER', name, 'on', '>pw', '~app:*', '+@all', '-flushall']), 'OK');
        try {
          const app = await connect({ username: name, password: 'pw' });
          assert.equal(String(await app.sendCommand(['ACL', 'WHOAMI'])), name);
          assert.equal(await app.set('app:1', 'v'), 'OK');
          await assert.rejects(app.get('other'), /NOPERM this user has no permissions to access one of the keys/);
          await assert.rejects(app.flushAll(), /NOPERM this user has no permissions to run the 'flushall' command/);
          await assert.rejects(connect({ username: name, password: 'bad' }), /WRONGPASS/);
        } finally {
          await admin.sendCommand(['ACL', 'DELUSER', name]);
        }
      });

      it('SET NX PX', async () => {
        const nxPx = { condition: 'NX', expiration: { type: 'PX', value: 2000 } };
        assert.equal(await client.set('k-nx', 'one', nxPx), 'OK');
        assert.equal(await client.set('k-nx', 'two', nxPx), null);
        assert.equal(await client.get('k-nx'), 'one');
        const pttl = await client.pTTL('k-nx');
        assert.ok(pttl > 0 && pttl <= 2000, `pttl ${pttl}`);
        assert.deepEqual({ ...(await client.hGetAll('no-such-hash')) }, {});
        await client.hSet('h', 'f', 'v');
        assert.deepEqual({ ...(await client.hGetAll('h')) }, { f: 'v' });
      });

      it('scripts option: EVALSHA, NOSCRIPT -> EVAL, and again after SCRIPT FLUSH', async () => {
        await client.set('k-script', 'token');
        assert.deepEqual(await admin.scriptExists(releaseIfMatch.SHA1), [0]);
        assert.equal(await client.releaseIfMatch('k-script', 'other'), 0);
        assert.deepEqual(await admin.scriptExists(releaseIfMatch.SHA1), [1]);
        assert.equal(await client.releaseIfMatch('k-script', 'token'), 1);
        await admin.scriptFlush();
        assert.deepEqual(await admin.scriptExists(releaseIfMatch.SHA1), [0]);
        await client.set('k-script', 'token');
        assert.equal(await client.releaseIfMatch('k-script', 'token'), 1);
        assert.deepEqual(await admin.scriptExists(releaseIfMatch.SHA1), [1]);
        assert.equal(await client.exists('k-script'), 0);
      });

      it('multi(): MULTI / EXEC, a runtime error in the array, WATCH conflict', async () => {
        assert.deepEqual(await client.multi().set('t', '1').incr('t').get('t').exec(), ['OK', 2, '2']);
        // node-redis rejects with every reply and where the errors are
        await assert.rejects(client.multi().set('s', 'x').incr('s').get('s').exec(), (e) => {
          assert.deepEqual(e.errorIndexes, [1]);
          assert.equal(e.replies[0], 'OK');
          assert.match(String(e.replies[1].message ?? e.replies[1]), /ERR value is not an integer or out of range/);
          assert.equal(e.replies[2], 'x');
          return true;
        });
        const watcher = await connect();
        assert.equal(await watcher.watch('t'), 'OK');
        await admin.set('t', '9');
        await assert.rejects(watcher.multi().set('t', '3').exec(), (e) => e.constructor.name === 'WatchError');
        assert.equal(await admin.get('t'), '9');
      });

      it('pub/sub with channels and patterns', async () => {
        const sub = client.duplicate();
        sub.on('error', () => {});
        closer.add(sub, (x) => (x.isOpen ? x.quit() : undefined));
        await sub.connect();
        const got = [];
        await sub.subscribe('plain', (message, channel) => got.push(['message', channel, message]));
        await sub.pSubscribe('news.*', (message, channel) => got.push(['pmessage', channel, message]));
        assert.equal(await client.publish('plain', 'p1'), 1);
        assert.equal(await client.publish('news.tech', 'n1'), 1);
        assert.equal(await client.publish('other', 'x'), 0);
        await waitFor('two messages', () => got.length >= 2);
        assert.deepEqual(got, [['message', 'plain', 'p1'], ['pmessage', 'news.tech', 'n1']]);
        if (RESP === 3) {
          // RESP3 lets a subscribed connection run ordinary commands.
          assert.equal(await sub.get('no-such-key'), null);
        }
        await sub.pUnsubscribe('news.*');
        assert.equal(await client.publish('news.tech', 'n2'), 0);
        await sub.unsubscribe('plain');
        assert.equal(await client.publish('plain', 'p2'), 0);
        assert.equal(got.length, 2);
      });
    });
  }
}
