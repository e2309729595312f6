// A part of the product in a Node process of its own (with --expose-gc), for the endurance tests:
// what they measure is then that process's, not the test harness's. It says one thing when ready,
// then answers each message it is sent with one message; 'stop' ends it.
import { fork, type ChildProcess } from 'node:child_process';

export class MeasuredChild {
  readonly child: ChildProcess;

  constructor(script: string, args: readonly string[]) {
    this.child = fork(new URL(script, import.meta.url).pathname, [...args], { execArgv: ['--expose-gc'], stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
  }

  /** Its first message: it is listening. */
  ready<T>(): Promise<T> {
    return new Promise((resolve) => this.child.once('message', (m) => resolve(m as T)));
  }

  ask<T>(message: string): Promise<T> {
    return new Promise((resolve, reject) => {
      const onExit = (code: number | null): void => reject(new Error(`${this.child.spawnfile} exited (${code})`));
      this.child.once('exit', onExit);
      this.child.once('message', (m) => {
        this.child.off('exit', onExit);
        resolve(m as T);
      });
      this.child.send(message);
    });
  }

  async stop(): Promise<void> {
    if (this.child.exitCode !== null) return;
    const exited = new Promise((r) => this.child.once('exit', r));
    this.child.send('stop');
    await exited;
  }
}
