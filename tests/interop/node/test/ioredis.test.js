// Plain ioredis 5 usage (RESP2: ioredis speaks RESP3 only from 6, which
// needs Node.js >= 20): handshake, SET NX PX, defineCommand scripts
// (NOSCRIPT -> EVAL), multi() transactions, pub/sub with patterns.
'use strict';

const { describe, it, before, after, beforeEach } = require('node:test');
const assert = require('node:assert/strict');
const { createHash } = require('node:crypto');
const { KINDS, startServers, stopServers } = require('../lib/servers');
const { whenReady, waitFor, Closer } = require('../lib/util');

const RELEASE_IF_MATCH = `if redis.call('get', KEYS[1]) == ARGV[1] then
  return redis.call('del', KEYS[1])
end
return 0`;
const RELEASE_SHA = createHash('sha1').update(RELEASE_IF_MATCH).digest('hex');

for (const kind of KINDS) {
  for (const protocol of [2]) {
    describe(`ioredis 5 RESP${protocol} [${kind}]`, () => {
      let server;
      let admin;
      let client;
      const closer = new Closer();
      const connect = async (extra = {}) => {
        const c = closer.ioredis(server, { protocol, ...extra });
        await whenReady(c);
        return c;
      };

      before(async () => {
        [server] = await startServers(kind);
        admin = await connect({ protocol: 2 });
        client = await connect({ connectionName: 'interop-ioredis' });
      });
      after(async () => {
        await closer.closeAll();
        await stopServers([server]);
      });
      beforeEach(async () => { await admin.flushall(); });

      it('HELLO / INFO handshake', async () => {
        // ioredis' ready check parses INFO text for "loading:0" (RESP3: a verbatim string).
        const info = await client.info();
        assert.equal(typeof info, 'string');
        assert.match(info, /\r\nloading:0\r\n/);
        assert.match(info, /\r\nredis_version:\d+\.\d+\.\d+\r\n/);
        const hello = await client.hello(String(protocol));
        const fields = Array.isArray(hello) ? Object.fromEntries(pairs(hello)) : hello;
        assert.equal(fields.server, 'redis');
        assert.equal(fields.proto, protocol);
        assert.equal(fields.mode, 'standalone');
        assert.equal(fields.role, 'master');
        const own = String(await client.client('INFO'));
        assert.match(own, new RegExp(`resp=${protocol}`));
        assert.match(own, /name=interop-ioredis/);
        assert.match(await client.info('server'), /^# Server\r\n(.*\r\n)*redis_version:/);
      });

      it('BLPOP / BRPOPLPUSH / BZPOPMIN consumers', async () => {
        // a consumer connection parks in the blocking command until a push
        const consumer = await connect();
        const blocked = (n) => async () => new RegExp(`\r\nblocked_clients:${n}\r\n`).test(await admin.info('clients'));
        const popped = consumer.blpop('q', 0);
        await waitFor('BLPOP to block', blocked(1));
        assert.equal(await client.rpush('q', 'a', 'b'), 2);
        assert.deepEqual(await popped, ['q', 'a']);
        assert.deepEqual(await client.lrange('q', 0, -1), ['b']);
        assert.equal(await consumer.blpop('none', 0.05), null);
        const moved = consumer.brpoplpush('src', 'dst', 0);
        await waitFor('BRPOPLPUSH to block', blocked(1));
        await client.lpush('src', 'job');
        assert.equal(await moved, 'job');
        assert.deepEqual(await client.lrange('dst', 0, -1), ['job']);
        const z = consumer.bzpopmin('z', 5);
        await waitFor('BZPOPMIN to block', blocked(1));
        await client.zadd('z', 2.5, 'm');
        assert.deepEqual(await z, ['z', 'm', '2.5']);
        await waitFor('nobody blocked', blocked(0));
      });

      it('ACL user (username option)', async () => {
        assert.equal(await admin.call('ACL', 'SETUSER', 'io-app', 'on', '>pw', '~app:*', '+@all', '-flushall'), 'OK');
        try {
          const app = await connect({ username: 'io-app', password: 'pw' });
          assert.equal(await app.call('ACL', 'WHOAMI'), 'io-app');
          assert.equal(await app.set('app:1', 'v'), 'OK');
          await assert.rejects(app.get('other'), /NOPERM this user has no permissions to access one of the keys/);
          await assert.rejects(app.flushall(), /NOPERM this user has no permissions to run the 'flushall' command/);
        } finally {
          await admin.call('ACL', 'DELUSER', 'io-app');
        }
      });

      it('SET NX PX', async () => {
        assert.equal(await client.set('k-nx', 'one', 'PX', 2000, 'NX'), 'OK');
        assert.equal(await client.set('k-nx', 'two', 'PX', 2000, 'NX'), null);
        assert.equal(await client.get('k-nx'), 'one');
        const pttl = await client.pttl('k-nx');
        assert.ok(pttl > 0 && pttl <= 2000, `pttl ${pttl}`);
        assert.deepEqual(await client.hgetall('no-such-hash'), {});
        await client.hset('h', 'f', 'v');
        assert.deepEqual(await client.hgetall('h'), { f: 'v' });
      });

      it('defineCommand script: EVAL, EVALSHA, and EVAL again after SCRIPT FLUSH', async () => {
        client.defineCommand('releaseIfMatch', { numberOfKeys: 1, lua: RELEASE_IF_MATCH });
        await client.set('k-script', 'token');
        assert.equal(await client.releaseIfMatch('k-script', 'other'), 0);
        assert.deepEqual(await admin.script('EXISTS', RELEASE_SHA), [1]);
        assert.equal(await client.releaseIfMatch('k-script', 'token'), 1);
        await admin.script('FLUSH');
        assert.deepEqual(await admin.script('EXISTS', RELEASE_SHA), [0]);
        await client.set('k-script', 'token');
        // EVALSHA gets NOSCRIPT; ioredis resends the body with EVAL.
        assert.equal(await client.releaseIfMatch('k-script', 'token'), 1);
        assert.deepEqual(await admin.script('EXISTS', RELEASE_SHA), [1]);
        assert.equal(await client.exists('k-script'), 0);
      });

      it('multi(): MULTI / EXEC, a runtime error in the array, EXECABORT, WATCH conflict', async () => {
        const ran = await client.multi().set('t', '1').incr('t').hset('th', 'f', 'v').get('t').exec();
        assert.deepEqual(ran, [[null, 'OK'], [null, 2], [null, 1], [null, '2']]);
        const mixed = await client.multi().set('s', 'x').incr('s').get('s').exec();
        assert.deepEqual([mixed[0], mixed[2]], [[null, 'OK'], [null, 'x']]);
        assert.equal(mixed[1][0].message, 'ERR value is not an integer or out of range');
        await assert.rejects(client.multi().set('never', '1').call('NOSUCH').exec(),
          /EXECABORT Transaction discarded because of previous errors/);
        assert.equal(await admin.exists('never'), 0);
        assert.equal(await client.watch('t'), 'OK');
        await admin.set('t', '9');
        assert.equal(await client.multi().set('t', '3').exec(), null);
        assert.equal(await admin.get('t'), '9');
      });

      it('pub/sub with channels and patterns', async () => {
        const sub = await connect();
        const got = [];
        sub.on('message', (channel, message) => got.push(['message', channel, message]));
        sub.on('pmessage', (pattern, channel, message) => got.push(['pmessage', pattern, channel, message]));
        assert.equal(await sub.subscribe('plain'), 1);
        assert.equal(await sub.psubscribe('news.*'), 2);
        assert.equal(await client.publish('plain', 'p1'), 1);
        assert.equal(await client.publish('news.tech', 'n1'), 1);
        assert.equal(await client.publish('other', 'x'), 0);
        await waitFor('two messages', () => got.length >= 2);
        assert.deepEqual(got, [['message', 'plain', 'p1'], ['pmessage', 'news.*', 'news.tech', 'n1']]);
        await sub.punsubscribe('news.*');
        assert.equal(await client.publish('news.tech', 'n2'), 0);
        await sub.unsubscribe('plain');
        assert.equal(await client.publish('plain', 'p2'), 0);
        assert.equal(got.length, 2);
      });
    });
  }
}

function pairs(flat) {
  const out = [];
  for (let i = 0; i < flat.length; i += 2) out.push([flat[i], flat[i + 1]]);
  return out;
}
