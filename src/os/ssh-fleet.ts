// The configured remote hosts together: one SshHost each, and a cap on how many handshakes run
// at once.
import { matchHost } from '../core/host.js';
import type { SshHostConfig, SshHostStatus } from './ssh-command.js';
import { SshHost, type SshOptions } from './ssh-provider.js';

/**
 * The configured hosts, each with its own connection; at most `maxConnecting` handshakes run at
 * once (the others wait as `connecting`), so many hosts coming back together cannot swamp this one.
 */
export class SshFleet {
  private readonly list: SshHost[];
  private active = 0;
  private readonly waiting: (() => void)[] = [];
  private started = false;

  constructor(configs: readonly SshHostConfig[], private readonly options: SshOptions = {}, readonly maxConnecting = 8) {
    this.list = configs.map((c) => new SshHost(c, options, () => this.acquire()));
  }

  get hosts(): readonly SshHost[] {
    return this.list;
  }

  /** One more host (--ssh-all: a machine the registry names); started at once when the fleet runs. */
  add(config: SshHostConfig): SshHost {
    const host = new SshHost(config, this.options, () => this.acquire());
    this.list.push(host);
    if (this.started) host.start();
    return host;
  }

  private acquire(): Promise<() => void> {
    return new Promise((resolve) => {
      const grant = (): void => {
        this.active++;
        let done = false;
        resolve(() => {
          if (done) return;
          done = true;
          this.active--;
          this.waiting.shift()?.();
        });
      };
      if (this.active < this.maxConnecting) grant();
      else this.waiting.push(grant);
    });
  }

  /** Hosts holding a connecting slot now. */
  get connecting(): number {
    return this.active;
  }

  start(): void {
    this.started = true;
    for (const h of this.list) h.start();
  }

  async stop(): Promise<void> {
    this.started = false;
    await Promise.all(this.list.map((h) => h.stop()));
  }

  /** The host whose machine this registry name is (the same matching as for this host), if configured. */
  hostFor(machine: string | undefined, aliases: readonly string[] = []): SshHost | undefined {
    if (machine === undefined) return undefined;
    return this.hosts.find((h) => matchHost(machine, h.config.machine, aliases) !== undefined);
  }

  statuses(): SshHostStatus[] {
    return this.hosts.map((h) => h.state);
  }
}
