// The header's remote hosts: each named with its state (and rtt when up) while few, counted by
// state when many; sanitized whatever the engine gave.
import { describe, expect, it } from 'vitest';
import { headerSegments, hostSegments } from '../../src/ui/components/header.js';
import { fleetEngine } from '../support/ui-fixtures.js';
import type { HostStatus } from '../../src/engine/types.js';

const host = (machine: string, state: HostStatus['state'], more: Partial<HostStatus> = {}): HostStatus => ({ machine, dest: machine, transport: 'ssh', state, connections: 1, ...more });
const text = (hosts: HostStatus[] | undefined): string => hostSegments(hosts).map((s) => s.text).join('');

describe('hostSegments', () => {
  it('nothing without hosts', () => {
    expect(text(undefined)).toBe('');
    expect(text([])).toBe('');
  });

  it('names each of a few hosts with its state, and the rtt of those up', () => {
    expect(text([host('build-42', 'up', { rttMs: 12 }), host('build-43', 'down', { reason: 'connection refused' }), host('gpu-7', 'connecting')])).toBe('  ssh: build-42 up 12ms · build-43 down · gpu-7 connecting');
  });

  it('counts many hosts by state, trouble first', () => {
    const many = [...Array.from({ length: 8 }, (_, i) => host(`b${i}`, 'up', { rttMs: 3 })), host('x', 'down'), host('y', 'down')];
    expect(text(many)).toBe('  ssh: 2 down · 8 up');
  });

  it('a hostile machine name cannot reach the terminal', () => {
    expect(text([host('evil\u001b[2J\nname', 'up')])).not.toMatch(/[\u001b\n]/);
  });

  it('a header too narrow to name each host with its state counts them by state, trouble first, rather than cut a state off', () => {
    const snap = fleetEngine().getSnapshot();
    const at = (width: number) => headerSegments(snap, true, snap.computedAt, width).map((s) => s.text).join('');
    expect(at(200)).toContain('ssh: build-42 up 12ms · gpu-7 down · build-99 down');
    // 90 cells: "build-99" would have been shown without its state.
    expect(at(90)).toContain('ssh: 2 down · 1 up');
    expect(at(90)).not.toContain('…');
    // 60 cells: cut, but what is down comes first.
    expect(at(60)).toMatch(/ssh: 2 down/);
  });
});
