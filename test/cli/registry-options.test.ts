import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DEFAULT_REGISTRY, lookupAllSync, resolveRegistry, type LookupAll } from '../../src/cli/registry-options.js';
import { isLoopbackAddress, isLoopbackHost } from '../../src/os/loopback.js';

const dir = mkdtempSync(join(tmpdir(), 'gw-regopt-'));
const tokenFile = join(dir, 'token');
writeFileSync(tokenFile, '  s3cret&=?/ \n');

describe('resolveRegistry', () => {
  it('takes --registry, then HYPIVISOR_WS, then the default', () => {
    expect(resolveRegistry({ registry: 'ws://a:1/ws' }, { HYPIVISOR_WS: 'ws://b:2/ws' }).url).toBe('ws://a:1/ws');
    expect(resolveRegistry({}, { HYPIVISOR_WS: 'ws://b:2/ws' }).url).toBe('ws://b:2/ws');
    expect(resolveRegistry({}, {}).url).toBe(DEFAULT_REGISTRY);
  });
  it('takes the token from --token-file (trimmed) before HYPI_TOKEN', () => {
    expect(resolveRegistry({ tokenFile }, { HYPI_TOKEN: 'env' }).token).toBe('s3cret&=?/');
    expect(resolveRegistry({}, { HYPI_TOKEN: 'env' }).token).toBe('env');
    expect(resolveRegistry({}, {}).token).toBeUndefined();
  });
  it('refuses a token in --registry, where ps would show it', () => {
    expect(() => resolveRegistry({ registry: 'ws://localhost/ws?token=x' }, {})).toThrow(/do not put the token in --registry \(argv and config files are read by others\)/);
  });
  it('moves a token found in $HYPIVISOR_WS out of the URL', () => {
    const r = resolveRegistry({}, { HYPIVISOR_WS: 'ws://localhost:9/ws?a=1&token=a%20b+c&z=2' });
    expect(r).toMatchObject({ url: 'ws://localhost:9/ws?a=1&z=2', token: 'a b+c' });
  });
  it('refuses to send a token over ws:// to another host, unless --insecure', () => {
    expect(() => resolveRegistry({ registry: 'ws://registry.example.com/ws' }, { HYPI_TOKEN: 't' })).toThrow(
      /^refusing to send the token over plain ws:\/\/ to registry\.example\.com: use wss:\/\/registry\.example\.com\/ws \(TLS.*or an SSH tunnel/,
    );
    expect(resolveRegistry({ registry: 'ws://registry.example.com/ws', insecure: true }, { HYPI_TOKEN: 't' }).token).toBe('t');
    expect(resolveRegistry({ registry: 'wss://registry.example.com/ws' }, { HYPI_TOKEN: 't' }).token).toBe('t');
    expect(resolveRegistry({ registry: 'ws://127.0.0.1:5/ws' }, { HYPI_TOKEN: 't' }).token).toBe('t');
    expect(resolveRegistry({ registry: 'ws://registry.example.com/ws' }, {}).token).toBeUndefined();
  });
  it('says clearly what is wrong with a bad URL, scheme or file', () => {
    expect(() => resolveRegistry({ registry: 'nope' }, {})).toThrow('--registry is not a URL: "nope"');
    expect(() => resolveRegistry({}, { HYPIVISOR_WS: 'http://x/ws' })).toThrow(/must start with ws:\/\/ or wss:\/\//);
    expect(() => resolveRegistry({ tokenFile: join(dir, 'missing') }, {})).toThrow(/--token-file .*missing: cannot read it \(ENOENT\)/);
    expect(() => resolveRegistry({ caFile: join(dir, 'nope.pem') }, {})).toThrow(/--ca-file .*: cannot read it/);
    expect(() => resolveRegistry({ maxPayload: 10 }, {})).toThrow(/--max-payload/);
  });
  it.each([
    ['localhost', true],
    ['127.0.0.1', true],
    ['127.8.9.10', true],
    ['[::1]', true],
    ['[::ffff:7f00:1]', true],
    ['app.localhost', false], // a name: loopback only if it resolves so (see below)
    ['localhost.', false],
    ['10.0.0.1', false],
    ['registry.example.com', false],
    ['127.0.0.1.evil.com', false],
  ])('isLoopbackHost(%s) = %s', (host, expected) => expect(isLoopbackHost(host)).toBe(expected));
});

describe('a *.localhost name is loopback only if it resolves to loopback addresses', () => {
  const answers =
    (table: Record<string, ReturnType<LookupAll>>): LookupAll =>
    (name) =>
      table[name] ?? { error: 'ENOTFOUND' };
  const lookup = answers({
    'app.localhost': { addresses: ['127.0.0.1', '::1'] },
    'evil.localhost': { addresses: ['203.0.113.7'] },
    'mixed.localhost': { addresses: ['127.0.0.1', '2001:db8::1'] },
    'mapped.localhost': { addresses: ['::ffff:127.0.0.2'] },
    'none.localhost': { addresses: [] },
  });
  const send = (host: string) => resolveRegistry({ registry: `ws://${host}:31415/ws` }, { HYPI_TOKEN: 't' }, lookup);

  it('sends the token in clear to a name that resolves only to loopback', () => {
    expect(send('app.localhost').token).toBe('t');
    expect(send('mapped.localhost').token).toBe('t');
  });
  it.each([
    ['evil.localhost', /it resolves to 203\.0\.113\.7, not only to loopback/],
    ['mixed.localhost', /it resolves to 2001:db8::1, not only to loopback/],
    ['none.localhost', /it resolves to no address/],
    ['gone.localhost', /it does not resolve: ENOTFOUND/],
  ])('refuses plain ws:// with the token to %s and says how to use wss://', (host, why) => {
    expect(() => send(host)).toThrow(why);
    expect(() => send(host)).toThrow(`use wss://${host}:31415/ws (TLS; --ca-file PATH for a private CA)`);
    // wss://, --insecure, or no token: nothing to refuse, nothing looked up.
    expect(resolveRegistry({ registry: `wss://${host}/ws` }, { HYPI_TOKEN: 't' }, lookup).token).toBe('t');
    expect(resolveRegistry({ registry: `ws://${host}/ws`, insecure: true }, { HYPI_TOKEN: 't' }, lookup).token).toBe('t');
    expect(resolveRegistry({ registry: `ws://${host}/ws` }, {}, lookup).token).toBeUndefined();
  });
  it('looks a name up only when a secret would go to it over ws://', () => {
    const asked: string[] = [];
    const spy: LookupAll = (name) => (asked.push(name), { addresses: ['127.0.0.1'] });
    resolveRegistry({ registry: 'ws://a.localhost/ws' }, {}, spy);
    resolveRegistry({ registry: 'wss://b.localhost/ws' }, { HYPI_TOKEN: 't' }, spy);
    resolveRegistry({ registry: 'ws://localhost/ws' }, { HYPI_TOKEN: 't' }, spy);
    resolveRegistry({ registry: 'ws://127.0.0.1/ws' }, { HYPI_TOKEN: 't' }, spy);
    expect(asked).toEqual([]);
    resolveRegistry({ registry: 'ws://C.LocalHost/ws' }, { HYPI_TOKEN: 't' }, spy);
    expect(asked).toEqual(['c.localhost']);
  });
  it('asks the real resolver (dns.lookup, every address) in a child that gets no token', () => {
    const local = lookupAllSync('localhost');
    expect('addresses' in local && local.addresses.length > 0 && local.addresses.every(isLoopbackAddress)).toBe(true);
    const odd = lookupAllSync('ghostwatch-test-nowhere.localhost');
    // This machine's resolver decides; either answer is handled, and only loopback would pass.
    if ('addresses' in odd) expect(odd.addresses.length).toBeGreaterThan(0);
    else expect(odd.error).toMatch(/\S/);
    const viaDefault = () => resolveRegistry({ registry: 'ws://ghostwatch-test-nowhere.localhost/ws' }, { HYPI_TOKEN: 't' });
    if ('addresses' in odd && odd.addresses.every(isLoopbackAddress)) expect(viaDefault().token).toBe('t');
    else expect(viaDefault).toThrow(/refusing to send the token/);
  });
  it.each([
    ['127.0.0.1', true],
    ['127.255.0.9', true],
    ['::1', true],
    ['0:0:0:0:0:0:0:1', true],
    ['::ffff:127.0.0.1', true],
    ['::ffff:10.0.0.1', false],
    ['10.0.0.1', false],
    ['::2', false],
    ['localhost', false],
  ])('isLoopbackAddress(%s) = %s', (address, expected) => expect(isLoopbackAddress(address)).toBe(expected));
});

describe('URLs that cannot be used, and passwords', () => {
  it('a #fragment is one clear usage error, from --registry or HYPIVISOR_WS', () => {
    expect(() => resolveRegistry({ registry: 'ws://127.0.0.1:9/ws#top' }, {})).toThrow(
      '--registry has a #fragment, which a WebSocket URL cannot have: remove "#top" from "ws://127.0.0.1:9/ws#top"',
    );
    expect(() => resolveRegistry({}, { HYPIVISOR_WS: 'ws://127.0.0.1:9/ws#' })).toThrow(/^HYPIVISOR_WS has a #fragment/);
  });
  it('never shows the password of a URL in an error', () => {
    const errors = [
      () => resolveRegistry({ registry: 'ws://ana:hunter2@127.0.0.1:9/ws#x' }, {}),
      () => resolveRegistry({ registry: 'ws://ana:hunter2@127.0.0.1:99999/ws' }, {}),
      () => resolveRegistry({}, { HYPIVISOR_WS: 'ws://ana:hunter2@registry.example.com/ws', HYPI_TOKEN: 't' }),
      () => resolveRegistry({}, { HYPIVISOR_WS: 'ws://ana:hunter2@registry.example.com/ws' }),
    ].map((f) => {
      try {
        f();
      } catch (error) {
        return (error as Error).message;
      }
      return 'no error';
    });
    expect(errors[0]).toContain('ws://ana:***@127.0.0.1:9/ws#x');
    expect(errors[1]).toBe('--registry is not a URL: "ws://ana:***@127.0.0.1:99999/ws"');
    expect(errors[2]).toMatch(/^refusing to send the token over plain ws:\/\/ to registry\.example\.com: use wss:\/\/registry\.example\.com\/ws /);
    // A password is a secret too: not in clear to another host either.
    expect(errors[3]).toMatch(/^refusing to send the password of the URL over plain ws:\/\//);
    for (const e of errors) expect(e).not.toContain('hunter2');
  });
  it('keeps the password in the URL it connects with (the connection needs it), to loopback or over wss://', () => {
    expect(resolveRegistry({}, { HYPIVISOR_WS: 'ws://ana:hunter2@127.0.0.1:9/ws' }).url).toBe('ws://ana:hunter2@127.0.0.1:9/ws');
    expect(resolveRegistry({}, { HYPIVISOR_WS: 'wss://ana:hunter2@registry.example.com/ws' }).url).toBe('wss://ana:hunter2@registry.example.com/ws');
  });
});
