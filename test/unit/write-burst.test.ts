// Responses that come quickly are held back for a burst and all leave, in order, at the end of
// the turn or once a burst is full; slow ones leave at once; one that fails to send holds back no
// other.
import { describe, expect, it } from 'vitest';
import { ResponseBurst } from '../../src/http/write-burst.js';

const quiet = { log: { error: () => {} } };
const turnEnd = () => new Promise<void>((resolve) => setImmediate(resolve));

/** A burst on a clock that advances `stepMs` per response, after `warm` quick responses already sent. */
function burstWithClock(stepMs: number, warm = 0): ResponseBurst {
  let t = 0;
  const burst = new ResponseBurst(() => (t += stepMs));
  for (let i = 0; i < warm; i++) burst.send(quiet, () => {}, null);
  return burst;
}

describe('ResponseBurst', () => {
  it('sends a lone response at once', () => {
    const burst = burstWithClock(0.05);
    const sent: unknown[] = [];
    burst.send(quiet, (_err, payload) => sent.push(payload), 'only');
    expect(sent).toEqual(['only']);
  });

  it('holds quick responses until the end of the turn and sends them in the order they came', async () => {
    const burst = burstWithClock(0.05, 40);
    await turnEnd();
    const sent: unknown[] = [];
    for (let i = 0; i < 5; i++) burst.send(quiet, (_err, payload) => sent.push(payload), `r${i}`);
    expect(sent).toEqual([]);
    await turnEnd();
    expect(sent).toEqual(['r0', 'r1', 'r2', 'r3', 'r4']);
  });

  it('sends a full burst at once, without waiting for the turn to end', async () => {
    const burst = burstWithClock(0.05, 40);
    await turnEnd();
    const sent: number[] = [];
    for (let i = 0; i < 40; i++) burst.send(quiet, (err, payload) => sent.push(err === null ? (payload as number) : -1), i);
    expect(sent).toEqual([...Array(32).keys()]);
    await turnEnd();
    expect(sent).toEqual([...Array(40).keys()]);
  });

  it('stops holding when responses slow down', async () => {
    let t = 0;
    let step = 0.05;
    const burst = new ResponseBurst(() => (t += step));
    for (let i = 0; i < 40; i++) burst.send(quiet, () => {}, null);
    await turnEnd();
    step = 2; // a list page every 2 ms
    const sent: number[] = [];
    for (let i = 0; i < 10; i++) burst.send(quiet, (_e, p) => sent.push(p as number), i);
    // After a few slow ones the average passes the threshold; from then on each leaves at once.
    const atOnce = sent.length;
    expect(atOnce).toBeGreaterThan(5);
    expect(sent).toEqual([...Array(10).keys()].slice(0, atOnce));
    await turnEnd();
    expect(sent).toEqual([...Array(10).keys()]);
  });

  it('logs a response that fails to send and still sends the rest', async () => {
    const burst = burstWithClock(0.05, 40);
    await turnEnd();
    const sent: string[] = [];
    const logged: string[] = [];
    const failing = { log: { error: (obj: object, msg: string) => logged.push(`${msg}: ${(obj as { err: Error }).err.message}`) } };
    burst.send(quiet, (_e, p) => sent.push(p as string), 'a');
    burst.send(failing, () => {
      throw new Error('socket gone');
    }, 'b');
    burst.send(quiet, (_e, p) => sent.push(p as string), 'c');
    await turnEnd();
    expect(sent).toEqual(['a', 'c']);
    expect(logged).toEqual(['sending the response failed: socket gone']);
  });
});
