// The setters of agentctl's manual locks that session.list does not return, looked up one by one
// with session.status (kept a while: it asks every agent adapter), so a lock is judged by what
// its setter is.
import { isManualLock } from './wire.js';

/** At most this many manual-lock setters looked up per read (session.status asks every adapter). */
const MAX_HOLDER_LOOKUPS = 50;

type Request = (method: string, params: Record<string, unknown>) => Promise<unknown>;

export class LockHolders {
  /** session.status answers by setter name (null: nothing answers to that name). */
  private readonly holderLookups = new Map<string, { readonly record: unknown; readonly at: number }>();

  /** `lookupMs`: how long an answer is kept before it is asked again. */
  constructor(private readonly lookupMs: number) {}

  /**
   * The sessions manual locks name that session.list did not return: it never lists a record
   * agentctl marked stopped or error again, but session.status still answers for it, and
   * state.json (files-only mode) still holds it. Each is looked up so the lock is judged by what
   * its setter is, as files-only mode judges it. A name nothing answers to (agentctl's "Session
   * not found", or a record of another id: it also matches by prefix) names no holder. Answers
   * are kept a while: session.status asks every agent adapter.
   */
  async lookUp(records: readonly unknown[], locks: readonly unknown[], now: number, request: Request): Promise<unknown[]> {
    const listed = new Set(records.map((r) => (typeof r === 'object' && r !== null ? (r as { id?: unknown }).id : undefined)));
    const names = new Set<string>();
    for (const l of locks) {
      const by = isManualLock(l) ? (l as { lockedBy?: unknown }).lockedBy : undefined;
      if (typeof by === 'string' && by !== '' && !listed.has(by) && names.size < MAX_HOLDER_LOOKUPS) names.add(by);
    }
    const found: unknown[] = [];
    for (const name of names) {
      let known = this.holderLookups.get(name);
      if (!known || now - known.at >= this.lookupMs) {
        try {
          const record = await request('session.status', { id: name });
          known = { record: typeof record === 'object' && record !== null && (record as { id?: unknown }).id === name ? record : null, at: now };
        } catch (error) {
          // Not answered (a timeout, the connection): unknown this time, asked again next poll.
          if ((error as { daemon?: boolean }).daemon !== true) continue;
          known = { record: null, at: now };
        }
        this.holderLookups.set(name, known);
      }
      if (known.record !== null) found.push(known.record);
    }
    for (const name of this.holderLookups.keys()) if (!names.has(name)) this.holderLookups.delete(name);
    return found;
  }
}
