// The monitor's engine alone in a process of its own, for the endurance tests: what they measure
// (file descriptors, RSS, the JS heap after a full GC) is then the engine's, not the test
// harness's with its 50 agent connections and children. It reads one hypivisor registry at the
// default cadence; on each IPC message "view" it answers with its sessions and its own figures.
// Run with --expose-gc, from the built dist/.
import { readdirSync } from 'node:fs';
import { hostname } from 'node:os';
import { getHeapSpaceStatistics } from 'node:v8';

/** The JS heap without compiled code: JIT output grows as the engine warms up, and is not data kept. */
const dataHeap = () => getHeapSpaceStatistics().reduce((n, s) => (s.space_name.startsWith('code') ? n : n + s.space_used_size), 0);

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
  let memory;
  if (message === 'measure') {
    globalThis.gc?.();
    memory = { fds: readdirSync('/proc/self/fd').length, rss: process.memoryUsage().rss, heap: dataHeap() };
  }
  process.send({ status: snap.sources[0]?.status, view, memory });
});
process.send({ ready: true });
