// The monitor's engine alone in a process of its own, for the endurance tests (see
// measured-child.ts). It reads one hypivisor registry at the default cadence; on "view" it answers
// with its sessions, on "measure" also with its figures. Run from the built dist/.
import { hostname } from 'node:os';
import { processFigures } from './process-figures.mjs';

const [url, auditLogPath] = process.argv.slice(2);
const root = new URL('../../dist/src/', import.meta.url);
const { createEngine } = await import(new URL('engine/index.js', root).href);
const { HypivisorSource } = await import(new URL('sources/hypivisor/index.js', root).href);

const engine = createEngine({ sources: [new HypivisorSource({ url })], hostName: hostname(), readOnly: true, auditLogPath });
engine.start();

const key = (e) => `${e.id} pid ${String(e.pid)} ${e.status}`;
process.on('message', (message) => {
  if (message === 'stop') {
    void engine.stop().then(() => process.exit(0));
    return;
  }
  const snap = engine.getSnapshot();
  const view = snap.findings.flatMap((f) => (f.kind === 'session' ? [key(f.entry)] : [])).sort();
  process.send({ status: snap.sources[0]?.status, view, memory: message === 'measure' ? processFigures() : undefined });
});
process.send({ ready: true });
