/**
 * The control of an EventStoreDB test server: what a test switches while the server runs (read
 * lag, acknowledgement, a slow writer, appends made to time out) and what an operator would do to a
 * node out of band (a scavenge). In process it is called directly; a server in a process of its own
 * (serve.ts) takes the same calls as JSON lines on its stdin and answers each on its stdout
 * (`{"id":…,"op":…,"args":…}` in, `{"id":…,"result":…}` or `{"id":…,"error":…}` out).
 */
import type { EventLog } from './event-log.js';
import type { AppendFault, NodeBehaviour, NodeSettings } from './node-behaviour.js';

export type { AppendFault, NodeSettings } from './node-behaviour.js';

export interface EsdbTestServerControl {
  /** Changes how the node behaves from now on; answers the settings in force. */
  configure(settings: Partial<NodeSettings>): Promise<NodeSettings>;
  /** The next matching appends (deletes, tombstones) meet `fault` (node-behaviour.ts). */
  failAppends(fault: AppendFault): Promise<void>;
  /** Drops the faults not met yet; answers how many appends they would still have hit. */
  clearFaults(): Promise<number>;
  /** Runs a scavenge to completion; answers how many records left $all. */
  scavenge(): Promise<number>;
  /** Resolves once everything written so far is readable (the index has caught up). */
  whenIndexed(): Promise<void>;
}

export function localControl(log: EventLog, node: NodeBehaviour): EsdbTestServerControl {
  return {
    configure: async (settings) => node.configure(settings),
    failAppends: async (fault) => node.failAppends(fault),
    clearFaults: async () => node.clearFaults(),
    scavenge: async () => log.scavenge(),
    whenIndexed: async () => log.indexedThrough(log.writtenCount - 1),
  };
}

type Op = keyof EsdbTestServerControl;
const OPS: readonly Op[] = ['configure', 'failAppends', 'clearFaults', 'scavenge', 'whenIndexed'];

interface Request {
  readonly id: number;
  readonly op: Op;
  readonly args?: unknown;
}

/** Serves one request line; answers the response line (without its newline). */
export async function serveControlLine(control: EsdbTestServerControl, line: string): Promise<string> {
  let request: Request;
  try {
    request = JSON.parse(line) as Request;
  } catch {
    return JSON.stringify({ id: null, error: 'not JSON' });
  }
  try {
    if (!OPS.includes(request.op)) throw new Error(`unknown control operation ${String(request.op)}`);
    const call = control[request.op] as (args?: unknown) => Promise<unknown>;
    const result = await call(request.args);
    return JSON.stringify({ id: request.id, result: result ?? null });
  } catch (error) {
    return JSON.stringify({ id: request.id, error: error instanceof Error ? error.message : String(error) });
  }
}

/** A control that sends its calls as lines through `send` and is answered through `receive` (wire it to the child's stdout lines). */
export function remoteControl(send: (line: string) => void): { readonly control: EsdbTestServerControl; receive(line: string): void; fail(error: Error): void } {
  let nextId = 1;
  const waiting = new Map<number, { resolve(value: unknown): void; reject(error: Error): void }>();
  const call = (op: Op, args?: unknown) =>
    new Promise<unknown>((resolve, reject) => {
      const id = nextId++;
      waiting.set(id, { resolve, reject });
      send(JSON.stringify({ id, op, args }));
    });
  return {
    control: {
      configure: (settings) => call('configure', settings) as Promise<NodeSettings>,
      failAppends: async (fault) => void (await call('failAppends', fault)),
      clearFaults: () => call('clearFaults') as Promise<number>,
      scavenge: () => call('scavenge') as Promise<number>,
      whenIndexed: async () => void (await call('whenIndexed')),
    },
    receive: (line) => {
      const answer = JSON.parse(line) as { id: number; result?: unknown; error?: string };
      const caller = waiting.get(answer.id);
      if (caller === undefined) return;
      waiting.delete(answer.id);
      if (answer.error !== undefined) caller.reject(new Error(`EventStoreDB test server control: ${answer.error}`));
      else caller.resolve(answer.result);
    },
    fail: (error) => {
      for (const caller of waiting.values()) caller.reject(error);
      waiting.clear();
    },
  };
}
