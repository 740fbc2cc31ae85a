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
  /** Units `stream:n`, keyed by their stream; flushes wait for the test to finish them one by one. */
  function keyed(maxConcurrentFlushes: number) {
    const batches: string[][] = [];
    const finishers: (() => void)[] = [];
    const committer = new GroupCommitter<string, string>({
      maxBatchSize: 100,
      maxConcurrentFlushes,
      sizeOf: () => 1,
      keysOf: (unit) => [unit.split(':')[0] as string],
      flush: async (units) => {
        batches.push(units);
        await new Promise<void>((resolve) => finishers.push(resolve));
        return units.map((u) => ({ status: 'fulfilled' as const, value: u }));
      },
    });
    const settle = () => new Promise((resolve) => setImmediate(resolve));
    return { committer, batches, finishers, settle };
  }

  it('never flushes two batches of one key at once, and flushes a key\'s units in the order submitted', async () => {
    const { committer, batches, finishers, settle } = keyed(2);
    const results = ['s:1', 's:2', 's:3'].map((u) => committer.submit(u));
    await settle();
    // A second flush is free, but every unit left is of the stream the first one holds.
    expect(batches).to.deep.equal([['s:1']]);
    finishers.shift()?.();
    await settle();
    expect(batches).to.deep.equal([['s:1'], ['s:2', 's:3']]);
    finishers.shift()?.();
    expect(await Promise.all(results)).to.deep.equal(['s:1', 's:2', 's:3']);
  });

  it('lets units of other keys go ahead of a unit waiting for its key, but not after one of theirs that waits', async () => {
    const { committer, batches, finishers, settle } = keyed(2);
    const results = ['a:1', 'a:2', 'b:1', 'c:1'].map((u) => committer.submit(u));
    await settle();
    // a:2 waits for a:1; the second flush takes b:1 at once.
    expect(batches).to.deep.equal([['a:1'], ['b:1']]);
    const later = [committer.submit('b:2'), committer.submit('a:3'), committer.submit('d:1')];
    await settle();
    // Both flushes run: nothing starts until one ends.
    expect(batches).to.have.length(2);
    finishers.shift()?.();
    await settle();
    // a:1 done: a's units go in order, with c:1 and d:1; b:2 still waits for b:1.
    expect(batches[2]).to.deep.equal(['a:2', 'c:1', 'a:3', 'd:1']);
    for (const finish of finishers.splice(0)) finish();
    await settle();
    expect(batches[3]).to.deep.equal(['b:2']);
    for (const finish of finishers.splice(0)) finish();
    expect(await Promise.all([...results, ...later])).to.deep.equal(['a:1', 'a:2', 'b:1', 'c:1', 'b:2', 'a:3', 'd:1']);
    await committer.drain();
  });
});
