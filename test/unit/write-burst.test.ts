// Responses held back for a burst all leave, in order, at the end of the turn or once a burst is
// full; one that fails to send holds back no other.
import { describe, expect, it } from 'vitest';
import { sendInBurst } from '../../src/http/write-burst.js';

const quiet = { log: { error: () => {} } };
const turnEnd = () => new Promise<void>((resolve) => setImmediate(resolve));

describe('sendInBurst', () => {
  it('releases every response of a turn at its end, in the order they came', async () => {
    const sent: unknown[] = [];
    for (let i = 0; i < 5; i++) sendInBurst(quiet, (_err, payload) => sent.push(payload), `r${i}`);
    expect(sent).toEqual([]);
    await turnEnd();
    expect(sent).toEqual(['r0', 'r1', 'r2', 'r3', 'r4']);
  });

  it('releases a full burst at once, without waiting for the turn to end', async () => {
    const sent: number[] = [];
    for (let i = 0; i < 40; i++) sendInBurst(quiet, (err, payload) => sent.push(err === null ? (payload as number) : -1), i);
    expect(sent).toEqual([...Array(32).keys()]);
    await turnEnd();
    expect(sent).toEqual([...Array(40).keys()]);
  });

  it('logs a response that fails to send and still releases the rest', async () => {
    const sent: string[] = [];
    const logged: string[] = [];
    const failing = { log: { error: (obj: object, msg: string) => logged.push(`${msg}: ${(obj as { err: Error }).err.message}`) } };
    sendInBurst(quiet, (_e, p) => sent.push(p as string), 'a');
    sendInBurst(failing, () => {
      throw new Error('socket gone');
    }, 'b');
    sendInBurst(quiet, (_e, p) => sent.push(p as string), 'c');
    await turnEnd();
    expect(sent).toEqual(['a', 'c']);
    expect(logged).toEqual(['sending the response failed: socket gone']);
  });
});
