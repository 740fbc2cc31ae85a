import { expect } from 'chai';
import { GroupCommitter } from '../src/eventstore/group-commit.js';

describe('group commit (unit)', () => {
  function recorder(options: { maxBatchSize?: number; maxConcurrentFlushes?: number; failUnit?: number } = {}) {
    const batches: number[][] = [];
    let release: () => void = () => undefined;
    let gate = new Promise<void>((resolve) => (release = resolve));
    const committer = new GroupCommitter<number, string>({
      maxBatchSize: options.maxBatchSize ?? 100,
      maxConcurrentFlushes: options.maxConcurrentFlushes ?? 1,
      sizeOf: () => 1,
      flush: async (units) => {
        batches.push(units);
        await gate;
        return units.map((u) =>
          u === options.failUnit ? { status: 'rejected' as const, reason: new Error(`unit ${u} failed`) } : { status: 'fulfilled' as const, value: `done ${u}` },
        );
      },
    });
    return {
      committer,
      batches,
      open: () => {
        release();
        gate = Promise.resolve();
      },
    };
  }

  it('collects units submitted while a flush runs into the next batch', async () => {
    const { committer, batches, open } = recorder();
    const results = [1, 2, 3, 4].map((u) => committer.submit(u));
    await new Promise((resolve) => setImmediate(resolve));
    expect(batches).to.deep.equal([[1]]);
    open();
    expect(await Promise.all(results)).to.deep.equal(['done 1', 'done 2', 'done 3', 'done 4']);
    expect(batches).to.deep.equal([[1], [2, 3, 4]]);
  });

  it('does not settle a caller before its flush has finished', async () => {
    const { committer, open } = recorder();
    let settled = false;
    const result = committer.submit(1).then(() => (settled = true));
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(settled).to.equal(false);
    open();
    await result;
    expect(settled).to.equal(true);
  });

  it('caps batches at maxBatchSize and runs up to maxConcurrentFlushes at once', async () => {
    const { committer, batches, open } = recorder({ maxBatchSize: 2, maxConcurrentFlushes: 2 });
    const results = [1, 2, 3, 4, 5, 6].map((u) => committer.submit(u));
    await new Promise((resolve) => setImmediate(resolve));
    expect(batches).to.deep.equal([[1], [2]]);
    open();
    await Promise.all(results);
    expect(batches.slice(2)).to.deep.equal([
      [3, 4],
      [5, 6],
    ]);
  });

  it('fails only the unit whose outcome is rejected, and drains', async () => {
    const { committer, open } = recorder({ failUnit: 2 });
    open();
    const outcomes = await Promise.allSettled([1, 2, 3].map((u) => committer.submit(u)));
    expect(outcomes.map((o) => o.status)).to.deep.equal(['fulfilled', 'rejected', 'fulfilled']);
    await committer.drain();
  });

  it('bounds a batch in bytes as well as in units, and always takes a first unit however large', async () => {
    const batches: string[][] = [];
    let release: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const committer = new GroupCommitter<string, number>({
      maxBatchSize: 100,
      maxConcurrentFlushes: 1,
      sizeOf: () => 1,
      bytesOf: (unit) => unit.length,
      maxBatchBytes: 10,
      flush: async (units) => {
        batches.push(units);
        await gate;
        return units.map((u) => ({ status: 'fulfilled' as const, value: u.length }));
      },
    });
    const units = ['a', 'bbbbbbbbbbbbbbbbbbbb', 'cccc', 'dddd', 'eeee', 'f'];
    const results = units.map((u) => committer.submit(u));
    release();
    expect(await Promise.all(results)).to.deep.equal([1, 20, 4, 4, 4, 1]);
    expect(batches).to.deep.equal([['a'], ['bbbbbbbbbbbbbbbbbbbb'], ['cccc', 'dddd'], ['eeee', 'f']]);
  });
});
