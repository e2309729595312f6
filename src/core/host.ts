// Is a registry's `machine` this host? Case-insensitive; a short name matches an FQDN
// with that first label (but two FQDNs must match exactly: a.x.com is not a.y.com);
// IP literals only match exactly; configured aliases count as this host.

export type HostMatch = 'exact' | 'short-name' | 'alias';

function normalize(name: string): string {
  return name.trim().toLowerCase().replace(/\.+$/, '');
}

function isIpLiteral(name: string): boolean {
  return name.includes(':') || /^[0-9.]+$/.test(name);
}

function sameHost(a: string, b: string): 'exact' | 'short-name' | undefined {
  if (a === '' || b === '') return undefined;
  if (a === b) return 'exact';
  if (isIpLiteral(a) || isIpLiteral(b)) return undefined;
  const aDot = a.includes('.');
  const bDot = b.includes('.');
  if (aDot === bDot) return undefined;
  const [short, fqdn] = aDot ? [b, a] : [a, b];
  return fqdn.slice(0, fqdn.indexOf('.')) === short ? 'short-name' : undefined;
}

export function matchHost(
  machine: string | undefined,
  hostName: string,
  aliases: readonly string[],
): HostMatch | undefined {
  if (machine === undefined) return undefined;
  const m = normalize(machine);
  const own = sameHost(m, normalize(hostName));
  if (own) return own;
  for (const alias of aliases) {
    if (sameHost(m, normalize(alias))) return 'alias';
  }
  return undefined;
}

/** A name's first label as matchHost compares it: two names it matches (aliases aside) always share it. */
export function hostLabel(name: string): string {
  const n = normalize(name);
  const dot = n.indexOf('.');
  return dot < 0 ? n : n.slice(0, dot);
}

/**
 * The first of `items` (in their order) whose name matchHost matches a machine's, aliases aside.
 * Indexed by first label once: only the items sharing the machine's are matched, so a registry
 * naming thousands of machines against dozens of hosts costs one lookup per name, not one
 * matchHost per name and host.
 */
export function firstHostMatching<T>(items: readonly T[], nameOf: (item: T) => string): (machine: string) => T | undefined {
  const byLabel = new Map<string, T[]>();
  for (const item of items) {
    const label = hostLabel(nameOf(item));
    const list = byLabel.get(label);
    if (list) list.push(item);
    else byLabel.set(label, [item]);
  }
  return (machine) => byLabel.get(hostLabel(machine))?.find((item) => matchHost(machine, nameOf(item), []) !== undefined);
}
