// A wss:// registry through the built CLI: the bundle inlines ws and loads TLS and HTTPS only when
// a registry needs them (scripts/bundle.mjs), so this is the one path that proves they still load.
// A stock hypivisor stand-in over TLS with a certificate of our own, on 127.0.0.1.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.js';
import { node } from '../support/scripted-registry.js';
import { startStockHypivisor, type StockHypivisor } from '../support/stock-hypivisor.js';

const dir = mkdtempSync(join(tmpdir(), 'gw-wss-cli-'));
const cert = join(dir, 'cert.pem');
const key = join(dir, 'key.pem');
const env = { ...process.env, XDG_CONFIG_HOME: join(dir, 'config'), XDG_STATE_HOME: join(dir, 'state'), HYPI_TOKEN: '' };
let hv: StockHypivisor;

describe('check against a wss:// registry, built CLI', () => {
  beforeAll(async () => {
    execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', key, '-out', cert, '-days', '1', '-subj', '/CN=localhost', '-addext', 'subjectAltName=DNS:localhost,IP:127.0.0.1'], { stdio: 'ignore' });
    hv = await startStockHypivisor({ tls: { key: readFileSync(key, 'utf8'), cert: readFileSync(cert, 'utf8') } });
    hv.nodes.set('over-tls', node('over-tls', { machine: 'build-far.example' }));
  });
  afterAll(async () => {
    await hv?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('reads the registry over TLS with the CA it is given', async () => {
    expect(hv.url).toMatch(/^wss:\/\/127\.0\.0\.1:\d+\/ws$/);
    const run = await runCli(['check', '--json', '--registry', hv.url, '--ca-file', cert], env);
    expect(run.stderr).toBe('');
    const report = JSON.parse(run.stdout) as { findings: { id: string; verdict: string }[] };
    expect(report.findings.map((f) => [f.id, f.verdict])).toEqual([['over-tls', 'remote']]);
    expect(run.code).toBe(0);
  });

  it('refuses a certificate it cannot verify', async () => {
    const run = await runCli(['check', '--registry', hv.url], env);
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/self[- ]signed certificate/);
  });
});
