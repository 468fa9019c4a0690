import { describe, expect, it } from '@jest/globals';
import { GroupCommit } from './group-commit.js';

const settle = <T>(value: T): PromiseSettledResult<T> => ({ status: 'fulfilled', value });

describe('Group commit', () => {
  it('writes a lone write at once, alone, and the writes that wait meanwhile together, within the caps', async () => {
    const calls: string[][] = [];
    let release: () => void = () => undefined;
    const held = new Promise<void>((resolve) => (release = resolve));
    const commit = new GroupCommit<string, string>({
      maxInFlight: 1,
      maxItems: 3,
      writeOne: async (item) => {
        calls.push([item]);
        await held;
        return item.toUpperCase();
      },
      writeMany: async (items) => {
        calls.push([...items]);
        return items.map((item) => settle(item.toUpperCase()));
      },
    });
    const answers = ['a', 'b', 'c', 'd', 'e', 'f'].map((item) => commit.write(item));
    release();
    expect(await Promise.all(answers)).toEqual(['A', 'B', 'C', 'D', 'E', 'F']);
    expect(calls).toEqual([['a'], ['b', 'c', 'd'], ['e', 'f']]);
  });

  it('keeps a batch within its weight, taking its first write whatever it weighs', async () => {
    const batches: number[][] = [];
    let release: () => void = () => undefined;
    const held = new Promise<void>((resolve) => (release = resolve));
    const commit = new GroupCommit<number, number>({
      maxInFlight: 1,
      maxItems: 10,
      maxWeight: 5,
      weight: (item) => item,
      writeOne: async (item) => {
        batches.push([item]);
        await held;
        return item;
      },
      writeMany: async (items) => {
        batches.push([...items]);
        return items.map(settle);
      },
    });
    const answers = [1, 9, 2, 3, 1].map((item) => commit.write(item));
    release();
    await Promise.all(answers);
    expect(batches).toEqual([[1], [9], [2, 3], [1]]);
  });

  it('tries each write of a failed batch alone, so only the one at fault fails; a fatal error fails them all', async () => {
    const make = (fatal: boolean) =>
      new GroupCommit<string, string>({
        maxInFlight: 1,
        maxItems: 10,
        writeOne: async (item) => {
          await new Promise((wake) => setTimeout(wake, 5));
          if (item === 'bad') throw new Error(`refused ${item}`);
          return item;
        },
        writeMany: async () => {
          throw new Error(fatal ? 'connection lost' : 'one of them is bad');
        },
        fatal: (error) => ((error as Error).message === 'connection lost' ? new Error('unreachable') : undefined),
      });
    const forgiving = make(false);
    const outcomes = await Promise.allSettled(['first', 'good', 'bad', 'fine'].map((item) => forgiving.write(item)));
    expect(outcomes.map((outcome) => outcome.status)).toEqual(['fulfilled', 'fulfilled', 'rejected', 'fulfilled']);
    const fatal = make(true);
    const lost = await Promise.allSettled(['first', 'good', 'fine'].map((item) => fatal.write(item)));
    expect(lost.map((outcome) => (outcome.status === 'rejected' ? (outcome.reason as Error).message : 'ok'))).toEqual(['ok', 'unreachable', 'unreachable']);
  });
});
