// Clients that measure how fast serve answers while something else loads it, in a process of their
// own (node dist/bench/pingers.js '{"url":…,"count":N}'), so that the load the bench process
// generates does not delay them: each asks `ping` every 20 ms, and on "stop" over IPC the process
// answers with every round trip in ms.
import { pinger } from './serve-process.js';

const { url, count } = JSON.parse(process.argv[2] ?? '{}') as { url: string; count: number };
let stop!: () => void;
const stopped = new Promise<void>((r) => (stop = r));
const all = Promise.all(Array.from({ length: count }, () => pinger(url, stopped).catch(() => [] as number[])));
process.on('message', (m) => {
  if (m !== 'stop') return;
  stop();
  void all.then((times) => {
    process.send!(times.flat(), () => process.exit(0));
  });
});
process.send!('ready');
