// Vitest `globalSetup` (Jest: the same file as `globalSetup`, and call
// globalThis.__latchdTeardown from a `globalTeardown` file).
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';

export default async function setup({ provide } = {}) {
  const latchd = spawn(process.env.LATCHD_BIN ?? 'latchd',
    ['--port', '0', '--enable-clock-control', 'yes', '--logfile', '/dev/null'],
    { stdio: ['ignore', 'pipe', 'inherit'] });
  const port = await new Promise((resolve, reject) => {
    createInterface({ input: latchd.stdout }).on('line', (line) => {
      const m = /^LATCHD_PORT=(\d+)$/.exec(line);
      if (m) resolve(Number(m[1]));
    });
    latchd.once('error', reject);
    latchd.once('exit', (code) => reject(new Error(`latchd exited (${code})`)));
  });
  process.env.REDIS_URL = `redis://127.0.0.1:${port}`;   // workers inherit it
  provide?.('redisUrl', process.env.REDIS_URL);          // Vitest: inject('redisUrl')
  const teardown = async () => {
    latchd.kill('SIGTERM');
    if (latchd.exitCode === null) await once(latchd, 'exit');
  };
  globalThis.__latchdTeardown = teardown;
  return teardown;
}
