import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DEFAULT_REGISTRY, isLoopback, resolveRegistry } from '../../src/cli/registry-options.js';

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
    expect(() => resolveRegistry({ registry: 'ws://localhost/ws?token=x' }, {})).toThrow(/argv is public/);
  });
  it('moves a token found in $HYPIVISOR_WS out of the URL', () => {
    const r = resolveRegistry({}, { HYPIVISOR_WS: 'ws://localhost:9/ws?a=1&token=a%20b+c&z=2' });
    expect(r).toMatchObject({ url: 'ws://localhost:9/ws?a=1&z=2', token: 'a b+c' });
  });
  it('refuses to send a token over ws:// to another host, unless --insecure', () => {
    expect(() => resolveRegistry({ registry: 'ws://registry.example.com/ws' }, { HYPI_TOKEN: 't' })).toThrow(
      /refusing to send the token over plain ws:\/\/ to registry\.example\.com: use wss:\/\/ or an SSH tunnel/,
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
    ['app.localhost', true],
    ['10.0.0.1', false],
    ['registry.example.com', false],
    ['127.0.0.1.evil.com', false],
  ])('isLoopback(%s) = %s', (host, expected) => expect(isLoopback(host)).toBe(expected));
});
