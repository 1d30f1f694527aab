// Starts and stops the servers the Node interop scenarios run against:
// latchd (LATCHD_BIN, ephemeral port) and a real redis-server, one kind at a time.
'use strict';

const { spawn } = require('node:child_process');
const fs = require('node:fs');
const net = require('node:net');
const os = require('node:os');
const path = require('node:path');

const REPO = path.resolve(__dirname, '..', '..', '..', '..');
const LATCHD_BIN = process.env.LATCHD_BIN || path.join(REPO, 'build', 'latchd');
const REDIS_BIN = process.env.REDIS_SERVER_BIN || 'redis-server';
const START_TIMEOUT_MS = 10000 * Number(process.env.LATCHD_TIMEOUT_SCALE || 1);
const KINDS = ['redis', 'latchd'];

// Servers still running when this test process ends (a crash, a timeout, a
// signal) are killed with it rather than left behind.
const live = new Set();
process.on('exit', () => { for (const proc of live) proc.kill('SIGKILL'); });
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.once(signal, () => process.exit(128 + os.constants.signals[signal]));
}

// redis-server cannot pick its own port, so ask the kernel for a free one;
// the start is retried if another process takes it in between.
function freePort() {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

function argvFor(kind, port, extra = []) {
  if (kind === 'latchd') {
    return [LATCHD_BIN, ['--port', String(port), '--bind', '127.0.0.1', ...extra]];
  }
  return [REDIS_BIN, ['--port', String(port), '--bind', '127.0.0.1', '--save', '',
    '--appendonly', 'no', '--daemonize', 'no', ...extra]];
}

class Server {
  // extra: more redis-server style flags (the TLS scenarios' tls-*).
  constructor(kind, extra = []) {
    this.kind = kind;
    this.extra = extra;
    this.host = '127.0.0.1';
    this.port = null;
    this.proc = null;
    this.log = '';
  }

  get options() {
    return { host: this.host, port: this.port };
  }

  async start() {
    if (this.kind === 'latchd' && !fs.existsSync(LATCHD_BIN)) {
      throw new Error(`latchd binary not found at ${LATCHD_BIN}: build it or set LATCHD_BIN`);
    }
    let lastError;
    for (let attempt = 0; attempt < 3; attempt++) {
      const port = this.kind === 'latchd' ? 0 : await freePort();
      try {
        await this.spawnOn(port);
        return this;
      } catch (err) {
        lastError = err;
        await this.stop().catch(() => {}); // the start error is the one to report
        if (!/in use/i.test(this.log)) break;
      }
    }
    throw lastError;
  }

  // Resolves once the log says "Ready to accept connections", taking the
  // port from that line (latchd announces the port it bound for --port 0).
  spawnOn(port) {
    const [bin, args] = argvFor(this.kind, port, this.extra);
    this.log = '';
    this.proc = spawn(bin, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    const proc = this.proc;
    live.add(proc);
    proc.once('exit', () => live.delete(proc));
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => fail(new Error('no "Ready to accept connections" in time')),
        START_TIMEOUT_MS);
      const fail = (err) => {
        clearTimeout(timer);
        reject(new Error(`${this.kind} did not start (${bin} ${args.join(' ')}): ${err.message}\n${this.log}`));
      };
      const onData = (chunk) => {
        this.log += chunk.toString();
        const m = /Ready to accept connections[^\n]*?tcp port (\d+)/.exec(this.log);
        const ready = /Ready to accept connections/.test(this.log);
        if (!ready) return;
        this.port = m ? Number(m[1]) : port;
        clearTimeout(timer);
        resolve();
      };
      this.proc.stdout.on('data', onData);
      this.proc.stderr.on('data', onData);
      this.proc.once('error', fail);
      this.proc.once('exit', (code, signal) => fail(new Error(`exited (${code ?? signal})`)));
    });
  }

  // SIGTERM and wait for the process and its output to end; an unclean exit
  // (non-zero status, a sanitizer report) fails the scenario that stops it.
  async stop() {
    const proc = this.proc;
    this.proc = null;
    if (!proc) return;
    const died = proc.exitCode ?? proc.signalCode;
    if (died !== null) {
      throw new Error(`${this.kind} on port ${this.port} exited by itself (${died}) before it was stopped:\n` +
        this.log.slice(-6000));
    }
    const closed = new Promise((resolve) => proc.once('close', (code, signal) => resolve(code ?? signal)));
    proc.kill('SIGTERM');
    const killer = setTimeout(() => proc.kill('SIGKILL'), 5000);
    const status = await closed;
    clearTimeout(killer);
    const sanitizer = /ERROR: (Address|Leak)Sanitizer|runtime error:/.exec(this.log);
    if (status !== 0 || sanitizer) {
      const why = sanitizer ? sanitizer[0] : `exit status ${status}`;
      throw new Error(`${this.kind} did not exit cleanly (${why}):\n${this.log.slice(-6000)}`);
    }
  }
}

async function startServers(kind, count = 1) {
  const servers = [];
  try {
    for (let i = 0; i < count; i++) servers.push(await new Server(kind).start());
  } catch (err) {
    await stopServers(servers);
    throw err;
  }
  return servers;
}

async function stopServers(servers) {
  const errors = [];
  for (const s of servers) {
    try { await s.stop(); } catch (err) { errors.push(err); }
  }
  if (errors.length) throw errors[0];
}

module.exports = { KINDS, Server, freePort, startServers, stopServers };
