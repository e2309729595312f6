// A stand-in agent that starts what real agents leave behind: a dev server listening on a real
// TCP port (on 127.0.0.1, port 0: the kernel picks one) and a CPU burner that ignores SIGTERM.
// Extra children: `--nobody` also starts a `sleep` as uid 65534 (setpriv; needs root). It prints
// one JSON line once every child is up: {"listener": pid, "port": n, "burner": pid, "nobody"?: pid},
// then waits to be killed. Used by test/engine/leftovers.test.ts and test/cli/leftovers.test.ts.
import { spawn } from 'node:child_process';
import { once } from 'node:events';

const LISTENER = `
const server = require('node:net').createServer((s) => s.end());
server.listen(0, '127.0.0.1', () => process.stdout.write(String(server.address().port) + '\\n'));
process.on('SIGTERM', () => process.exit(0));
`;
// Busy a fifth of the time: some CPU to see, without taking a core of a shared test machine.
const BURNER = `
process.on('SIGTERM', () => {});
process.stdout.write('ready\\n');
const burn = () => { const t = Date.now(); while (Date.now() - t < 20) {} setTimeout(burn, 80); };
burn();
`;

const wantNobody = process.argv.includes('--nobody');

async function firstLine(child) {
  let out = '';
  for await (const chunk of child.stdout) {
    out += chunk;
    if (out.includes('\n')) return out.split('\n')[0];
  }
  throw new Error('child exited before it said it was ready');
}

const listener = spawn(process.execPath, ['-e', LISTENER], { stdio: ['ignore', 'pipe', 'inherit'] });
const burner = spawn(process.execPath, ['-e', BURNER], { stdio: ['ignore', 'pipe', 'inherit'] });
const port = Number(await firstLine(listener));
await firstLine(burner);
const report = { listener: listener.pid, port, burner: burner.pid };
if (wantNobody) {
  const nobody = spawn('setpriv', ['--reuid=65534', '--regid=65534', '--clear-groups', 'sleep', '600'], { stdio: 'ignore' });
  await once(nobody, 'spawn');
  report.nobody = nobody.pid;
}
process.stdout.write(`${JSON.stringify(report)}\n`);
// Until killed.
setInterval(() => {}, 60_000);
