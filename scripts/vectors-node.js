// scripts/vectors-node.js <node_modules> <package>... - used by scripts/vectors.
// Loads each installed client package and collects the Lua texts it would
// send, the way it builds them: redis-semaphore's createEval functions are
// called with a stub client that answers EVALSHA with NOSCRIPT and records
// the EVAL text; @sesamecare-oss/redlock's ensureCommands() is given a stub
// whose defineCommand records the lua; redlock is constructed and its
// script properties read; node-redisson's executors build their scripts
// (getRedisScripts over DEFAULT_REDIS_SCRIPTS, as createRedis does).
// Prints one JSON object per line: {client, version, name, text} or
// {client, version, error}. Nothing is sent anywhere.
'use strict';
const fs = require('fs');
const path = require('path');

const [nm, ...clients] = process.argv.slice(2);
const LUA = /redis\.p?call\s*\(/;

function version(pkg) {
  try {
    return JSON.parse(fs.readFileSync(path.join(nm, pkg, 'package.json'), 'utf8')).version;
  } catch (e) {
    return null;
  }
}

function jsFiles(dir) {
  const out = [];
  for (const ent of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, ent.name);
    if (ent.isDirectory()) {
      if (ent.name !== 'node_modules' && ent.name !== 'test' && ent.name !== 'tests') out.push(...jsFiles(p));
    } else if (ent.name.endsWith('.js') && !ent.name.endsWith('.d.js')) {
      out.push(p);
    }
  }
  return out.sort();
}

function print(o) {
  process.stdout.write(JSON.stringify(o) + '\n');
}

// Own string properties (and {value}/{lua} objects) that hold Lua.
function luaProps(obj, prefix, found) {
  for (const k of Object.keys(obj || {})) {
    const v = obj[k];
    if (typeof v === 'string' && LUA.test(v)) found.push([prefix + k, v]);
    else if (v && typeof v === 'object') {
      for (const f of ['lua', 'value']) {
        if (typeof v[f] === 'string' && LUA.test(v[f])) found.push([prefix + k, v[f]]);
      }
    }
  }
}

async function collect(client) {
  const root = path.join(nm, client);
  const found = [];   // [name, text]
  for (const file of jsFiles(root)) {
    const src = fs.readFileSync(file, 'utf8');
    if (!LUA.test(src) && !/createEval|DEFAULT_REDIS_SCRIPTS|getRedisScripts/.test(src)) continue;
    let mod;
    try {
      mod = require(file);
    } catch (e) {
      continue;
    }
    const rel = path.relative(root, file);
    const exportsOf = typeof mod === 'function' ? { [mod.name || 'default']: mod, ...mod } : mod;
    for (const [key, val] of Object.entries(exportsOf || {})) {
      const where = rel + ':' + key;
      if (typeof val === 'function' && val.name === 'optimizedEval') {
        // redis-semaphore: EVALSHA first, EVAL with the text on NOSCRIPT.
        const stub = {
          options: {},
          evalsha: async () => { throw new Error('NOSCRIPT No matching script.'); },
          eval: async (text) => { found.push([where, text]); return 0; },
        };
        try { await val(stub, ['k', 'a', 'b', 'c', 'd', 'e']); } catch (e) { /* argument shapes vary */ }
      } else if (typeof val === 'function' && key === 'ensureCommands') {
        // @sesamecare-oss/redlock: ioredis defineCommand(name, {lua}).
        val({ defineCommand: (name, o) => found.push([rel + ':' + name, o.lua]) });
      } else if (typeof val === 'function' && val.prototype && typeof val.prototype.getRedisScripts === 'function') {
        // node-redisson executors: their overrides over the defaults.
        const defaults = exportsOf.DEFAULT_REDIS_SCRIPTS ||
          Object.values(require.cache).map((m) => m.exports && m.exports.DEFAULT_REDIS_SCRIPTS).find(Boolean) || {};
        const custom = val.prototype.getRedisScripts.call(Object.create(val.prototype));
        for (const name of Object.keys(defaults)) {
          found.push([rel + ':' + key + '.' + name, custom[name] ?? defaults[name].lua]);
        }
      } else if (typeof val === 'function' && val.prototype && typeof val.prototype._executeScript === 'function') {
        // redlock 4: the constructor picks the scripts.
        let r;
        try { r = new val([{}]); } catch (e) { continue; }
        luaProps(r, rel + ':', found);
      }
    }
  }
  return found;
}

(async () => {
  for (const client of clients) {
    const v = version(client);
    if (!v) {
      print({ client, version: null, error: 'not installed under ' + nm });
      continue;
    }
    try {
      const seen = new Set();
      for (const [name, text] of await collect(client)) {
        if (typeof text !== 'string' || seen.has(text)) continue;
        seen.add(text);
        print({ client, version: v, name, text });
      }
    } catch (e) {
      print({ client, version: v, error: String((e && e.stack) || e) });
    }
  }
})();
