// Small helpers shared by the Node interop scenarios: waiting, polling and
// closing every client a scenario opened, whatever library it came from.
'use strict';

const Redis = require('ioredis');
const { createClient } = require('redis');

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

// Polls cond() until it returns a truthy value; fails after timeoutMs.
async function waitFor(what, cond, timeoutMs = 5000, everyMs = 10) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await cond();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(everyMs);
  }
}

// Remembers what a scenario opened so after() can close it all, even when a
// test failed half way. close() is quit() for live servers; disconnect() for
// clients whose server was stopped on purpose.
class Closer {
  constructor() { this.items = []; }

  add(item, close) {
    this.items.push({ item, close });
    return item;
  }

  // An ioredis client (RESP2: ioredis 5 has no RESP3), closed by closeAll().
  ioredis(server, extra = {}) {
    const client = new Redis({ ...server.options, ...extra });
    client.on('error', () => {}); // reconnect noise when a server is stopped on purpose
    return this.add(client, (c) => (c.status === 'ready' ? c.quit() : c.disconnect()));
  }

  // A connected node-redis client (no reconnects), closed by closeAll().
  async nodeRedis(server, options = {}) {
    const client = createClient({ socket: { ...server.options, reconnectStrategy: false }, ...options });
    client.on('error', () => {});
    this.add(client, (c) => (c.isOpen ? c.quit() : undefined));
    await client.connect();
    return client;
  }

  async closeAll() {
    const items = this.items.splice(0).reverse();
    await Promise.allSettled(items.map(({ item, close }) => close(item)));
  }
}

// Resolves once an ioredis client finished its handshake and ready check.
function whenReady(client) {
  if (client.status === 'ready') return Promise.resolve();
  return new Promise((resolve) => client.once('ready', resolve));
}

module.exports = { sleep, waitFor, whenReady, Closer };
