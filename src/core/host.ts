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
