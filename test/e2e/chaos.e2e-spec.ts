import { expect, it } from '@jest/globals';
import { FAULT_KINDS } from '../../chaos/faults.js';
import { DIST, runNode } from '../support/processes.js';
import { describeOnProject } from '../support/store-independent.js';

/** The short run of `npm run chaos` (docs/operations.md#a-chaos-run): 40 s of load under faults, enough for every kind to come up once (the first round's pauses shrink to fit), webhooks delivered to a receiver that is one of the faults' victims. */
const CHAOS_SECONDS = 40;
/** Start-up, the load, the wait past the recovery deadline, the audits and the rebuild, on a busy machine. */
const RUN_TIMEOUT_MS = 540_000;

/** The figure on the summary line that starts with `label` (after its indentation), or undefined. */
function figure(summary: string, label: string): number | undefined {
  const line = summary.split('\n').find((candidate) => candidate.trimStart().startsWith(label));
  const match = line === undefined ? null : /(\d+)\s*(?:\(.*\))?\s*$/.exec(line.slice(line.indexOf(label) + label.length));
  return match === null ? undefined : Number(match[1]);
}

describeOnProject('postgres', 'npm run chaos, a short run', 'the run starts a PostgreSQL cluster of its own, which holds its event log, and stops it as one of its faults', () => {
  it(
    'injects every kind of fault under load, and finds the client, the log, the wallets and the read models in agreement',
    async () => {
      const run = await runNode(DIST.chaos, [], { env: { PATH: process.env.PATH, CHAOS_SECONDS: String(CHAOS_SECONDS) }, timeoutMs: RUN_TIMEOUT_MS });
      const summary = run.stdout;
      // On a failure, the summary lists each discrepancy, and stderr the run's progress and where its logs were kept.
      expect({ code: run.code, output: run.code === 0 ? '' : `${summary}\n${run.stderr.slice(-4_000)}` }).toEqual({ code: 0, output: '' });
      expect(summary).toMatch(/^discrepancies: 0$/m);
      for (const kind of FAULT_KINDS) expect({ kind, injected: figure(summary, kind) }).toEqual({ kind, injected: expect.any(Number) });
      // Each kind at least once, named when one is missing.
      expect(FAULT_KINDS.filter((kind) => (figure(summary, kind) ?? 0) === 0)).toEqual([]);
      // Checks were charged until the wallets, funded for fewer than were tried, ran dry.
      expect(figure(summary, '201')).toBeGreaterThan(0);
      expect(figure(summary, '402 insufficient_balance')).toBeGreaterThan(0);
      // Every completed check and funding reached the receiver, which failed, held and lost (its kill) some of them on the way.
      const webhooks = /webhooks delivered \(.*\): (\d+) of (\d+)$/m.exec(summary);
      expect(webhooks).not.toBeNull();
      expect(Number(webhooks?.[2])).toBeGreaterThan(0);
      expect(webhooks?.[1]).toBe(webhooks?.[2]);
      expect(summary).toMatch(/^ {4}\d+ requests to the receiver \(\d+ answered 500, \d+ held past the timeout\).*all succeeded/m);
    },
    RUN_TIMEOUT_MS + 30_000,
  );
});
