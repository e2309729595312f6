// `ghostwatch serve`'s registry alone in a process of its own, with the short timers an endurance
// test needs (the CLI keeps hypivisor's 15 s sweep); see measured-child.ts. Options as JSON in
// argv; on "measure" it answers with its node count, its figures, how many inits it encoded and
// how many clients still have bytes it has not written out. Run from the built dist/.
// `frozenAt` (ms) stops serve's clock there: a figure that must not depend on how long a loaded
// machine takes (the init frame is encoded again once 30 s old) is measured on it.
import { processFigures } from './process-figures.mjs';

const { startRegistryServer } = await import(new URL('../../dist/src/server/index.js', import.meta.url).href);
const { frozenAt, ...options } = JSON.parse(process.argv[2] ?? '{}');
const clock = frozenAt === undefined ? {} : { now: () => frozenAt };
const server = await startRegistryServer({ port: 0, quiet: true, log: () => {}, ...clock, ...options });

process.on('message', (message) => {
  if (message === 'stop') {
    void server.close().then(() => process.exit(0));
    return;
  }
  process.send({
    nodes: server.registry.listNodes().length,
    memory: processFigures(),
    initEncodes: server.initEncodes(),
    behind: server.peerStats().filter((p) => p.buffered > 0).length,
  });
});
process.send({ port: server.port, url: server.url });
