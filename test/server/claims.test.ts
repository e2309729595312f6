// Frame-level conformance of ghostwatch's claims extension (protocols.md §2): methods, events,
// authorization, and claims released when their holder goes.
import { afterEach, describe, it } from 'vitest';
import { cleanup, connectPastInit, expectFrame, FakeClock, node, registerText, roundTrip, serve, stored, T0, type RawClient } from './helpers.js';

afterEach(cleanup);

const CLAIMED = { status: 'claimed' };

async function setup() {
  const clock = new FakeClock();
  const server = await serve({ now: clock.now });
  const agent = await connectPastInit(server.url);
  const admin = await connectPastInit(server.url);
  await roundTrip(agent, registerText('r', node('n1', { port: 1 })), { id: 'r', result: { status: 'registered' } });
  await agent.next('event'); // node_joined n1
  await admin.next('event');
  return { clock, server, agent, admin };
}

function claimText(reqId: string, params: Record<string, unknown>): string {
  return JSON.stringify({ id: reqId, method: 'claim', params });
}

async function registerOther(url: string, watcher: RawClient): Promise<RawClient> {
  const other = await connectPastInit(url);
  await roundTrip(other, registerText('o', node('n2', { port: 2 })), { id: 'o', result: { status: 'registered' } });
  await watcher.next('event'); // node_joined n2
  return other;
}

describe('claim', () => {
  it('claims a resource for a registered node, announces it and lists it', async () => {
    const { agent, admin } = await setup();
    agent.send(claimText('c', { resource: 'repo:/work', holder: 'n1', pid: 4242 }));
    expectFrame(await agent.next(), { id: 'c', result: CLAIMED });
    const claim = { resource: 'repo:/work', holder: 'n1', pid: 4242, acquired_at: T0 };
    expectFrame(await agent.next(), { event: 'claim_acquired', claim });
    expectFrame(await admin.next('event'), { event: 'claim_acquired', claim });
    await roundTrip(admin, '{"id":"l","method":"list_claims"}', { id: 'l', result: [claim] });
  });

  it('omits pid when none is given, and refreshes the claim when the same holder claims again', async () => {
    const { agent, admin, clock } = await setup();
    await roundTrip(agent, claimText('1', { resource: 'r', holder: 'n1' }), { id: '1', result: CLAIMED });
    expectFrame(await admin.next('event'), { event: 'claim_acquired', claim: { resource: 'r', holder: 'n1', acquired_at: T0 } });
    clock.advance(7000);
    await roundTrip(agent, claimText('2', { resource: 'r', holder: 'n1', pid: 9 }), { id: '2', result: CLAIMED });
    const refreshed = { resource: 'r', holder: 'n1', pid: 9, acquired_at: T0 + 7 };
    expectFrame(await admin.next('event'), { event: 'claim_acquired', claim: refreshed });
    await roundTrip(admin, '{"id":"l","method":"list_claims"}', { id: 'l', result: [refreshed] });
  });

  it.each([
    ['no params', undefined, 'Missing params.resource'],
    ['a numeric resource', { resource: 5, holder: 'n1' }, 'Missing params.resource'],
    ['an empty resource', { resource: '', holder: 'n1' }, 'Missing params.resource'],
    ['no holder', { resource: 'r' }, 'Missing params.holder'],
    ['an unknown holder', { resource: 'r', holder: 'nobody' }, 'Unknown holder: nobody'],
  ])('answers an error for %s', async (_why, params, error) => {
    const { admin } = await setup();
    await roundTrip(admin, JSON.stringify({ id: 'e', method: 'claim', params }), { id: 'e', error });
    await roundTrip(admin, '{"id":"l","method":"list_claims"}', { id: 'l', result: [] });
  });

  it('refuses a resource held by another holder', async () => {
    const { server, agent, admin } = await setup();
    const other = await registerOther(server.url, admin);
    await roundTrip(agent, claimText('1', { resource: 'r', holder: 'n1' }), { id: '1', result: CLAIMED });
    await roundTrip(other, claimText('2', { resource: 'r', holder: 'n2' }), { id: '2', error: 'Resource already claimed by n1' });
    await roundTrip(admin, claimText('3', { resource: 'r', holder: 'n2' }), { id: '3', error: 'Resource already claimed by n1' });
  });

  it('lets a registered connection claim only for its own node; an unregistered one for anyone', async () => {
    const { server, agent, admin } = await setup();
    await registerOther(server.url, admin);
    await roundTrip(agent, claimText('1', { resource: 'r', holder: 'n2' }), { id: '1', error: 'Unauthorized: cannot claim for another node' });
    await roundTrip(agent, claimText('2', { resource: 'r', holder: 'ghost' }), { id: '2', error: 'Unauthorized: cannot claim for another node' });
    await roundTrip(admin, claimText('3', { resource: 'r', holder: 'n2' }), { id: '3', result: CLAIMED });
  });
});

describe('release_claim', () => {
  it('releases a claim (claim_released) or says not_found', async () => {
    const { agent, admin } = await setup();
    await roundTrip(agent, claimText('1', { resource: 'r', holder: 'n1' }), { id: '1', result: CLAIMED });
    await admin.next('event'); // claim_acquired
    await roundTrip(agent, '{"id":"2","method":"release_claim","params":{"resource":"r"}}', { id: '2', result: { status: 'released' } });
    expectFrame(await admin.next('event'), { event: 'claim_released', resource: 'r' });
    await roundTrip(agent, '{"id":"3","method":"release_claim","params":{"resource":"r"}}', { id: '3', result: { status: 'not_found' } });
    await roundTrip(agent, '{"id":"4","method":"release_claim","params":{}}', { id: '4', error: 'Missing params.resource' });
    await roundTrip(admin, '{"id":"5","method":"list_claims"}', { id: '5', result: [] });
  });

  it("lets a registered connection release only its own node's claims; an unregistered one any", async () => {
    const { server, agent, admin } = await setup();
    const other = await registerOther(server.url, admin);
    await roundTrip(agent, claimText('1', { resource: 'r', holder: 'n1' }), { id: '1', result: CLAIMED });
    await roundTrip(other, '{"id":"2","method":"release_claim","params":{"resource":"r"}}', {
      id: '2',
      error: "Unauthorized: cannot release another node's claim",
    });
    await roundTrip(admin, '{"id":"3","method":"release_claim","params":{"resource":"r"}}', { id: '3', result: { status: 'released' } });
  });
});

describe('claims follow their holder', () => {
  it('releases them before node_removed on deregister', async () => {
    const { agent, admin } = await setup();
    await roundTrip(agent, claimText('1', { resource: 'a', holder: 'n1' }), { id: '1', result: CLAIMED });
    await roundTrip(agent, claimText('2', { resource: 'b', holder: 'n1' }), { id: '2', result: CLAIMED });
    await admin.next('event');
    await admin.next('event');
    await roundTrip(admin, '{"id":"d","method":"deregister","params":{"id":"n1"}}', { id: 'd', result: { status: 'deregistered' } });
    expectFrame(await admin.next('event'), { event: 'claim_released', resource: 'a' });
    expectFrame(await admin.next('event'), { event: 'claim_released', resource: 'b' });
    expectFrame(await admin.next('event'), { event: 'node_removed', id: 'n1' });
    await roundTrip(admin, '{"id":"l","method":"list_claims"}', { id: 'l', result: [] });
  });

  it('releases them when machine:port eviction removes the holder', async () => {
    const { server, agent, admin } = await setup();
    await roundTrip(agent, claimText('1', { resource: 'a', holder: 'n1' }), { id: '1', result: CLAIMED });
    await admin.next('event');
    const successor = await connectPastInit(server.url);
    await roundTrip(successor, registerText('s', node('n9', { port: 1 })), { id: 's', result: { status: 'registered' } });
    expectFrame(await admin.next('event'), { event: 'claim_released', resource: 'a' });
    expectFrame(await admin.next('event'), { event: 'node_removed', id: 'n1' });
    expectFrame(await admin.next('event'), { event: 'node_joined', node: stored(node('n9', { port: 1 })) });
  });

  it('keeps them while the holder is only offline', async () => {
    const { agent, admin } = await setup();
    await roundTrip(agent, claimText('1', { resource: 'a', holder: 'n1' }), { id: '1', result: CLAIMED });
    await agent.close();
    await admin.next('event'); // claim_acquired
    expectFrame(await admin.next('event'), { event: 'node_offline', id: 'n1' });
    await roundTrip(admin, '{"id":"l","method":"list_claims"}', { id: 'l', result: [{ resource: 'a', holder: 'n1', acquired_at: T0 }] });
  });
});
