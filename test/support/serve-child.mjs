// `ghostwatch serve`'s registry alone in a process of its own, with the short timers an endurance
// test needs (the CLI keeps hypivisor's 15 s sweep): what the test measures (file descriptors,
// RSS, the JS heap without compiled code after a full GC) is then the registry's, not the test's
// with its thousand client sockets. Options as JSON in argv; run with --expose-gc from dist/.
import { readdirSync } from 'node:fs';
import { getHeapSpaceStatistics } from 'node:v8';

const { startRegistryServer } = await import(new URL('../../dist/src/server/index.js', import.meta.url).href);
const server = await startRegistryServer({ port: 0, quiet: true, log: () => {}, ...JSON.parse(process.argv[2] ?? '{}') });
const dataHeap = () => getHeapSpaceStatistics().reduce((n, s) => (s.space_name.startsWith('code') ? n : n + s.space_used_size), 0);

process.on('message', (message) => {
  if (message === 'stop') {
    void server.close().then(() => process.exit(0));
    return;
  }
  globalThis.gc?.();
  process.send({
    nodes: server.registry.listNodes().length,
    memory: { fds: readdirSync('/proc/self/fd').length, rss: process.memoryUsage().rss, heap: dataHeap(), heapTotal: process.memoryUsage().heapTotal, external: process.memoryUsage().external },
  });
});
process.send({ port: server.port, url: server.url });
