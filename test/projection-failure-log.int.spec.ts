import { expect } from 'chai';
import { createPool } from '../src/db/pool.js';
import { freePort } from '../src/net.js';
import { PostgresEventStore } from '../src/eventstore/postgres.js';
import { projections } from '../projections/index.js';
import { ProjectionWorker } from '../projections/runner/worker.js';
import { capturedLog, levels } from './support/log-lines.js';

describe('projection worker: a database that stays away (int)', () => {
  it('warns once with the cause, retries with backoff at debug level, and does not log a stack per attempt', async () => {
    // Nothing listens on this port: every connection attempt is refused at once.
    const pool = createPool(`postgres://nobody@127.0.0.1:${await freePort()}/none`, 2, 1_000);
    const { log, lines } = capturedLog('debug');
    const worker = new ProjectionWorker({ pool, store: new PostgresEventStore(pool), log, projections }).start();
    await new Promise((resolve) => setTimeout(resolve, 2_500));
    await worker.stop();
    await pool.end();

    const attempts = lines.filter((line) => /interrupted/.test(line.msg));
    const warnings = attempts.filter((line) => line.level >= levels.warn);
    expect(warnings.map((line) => line.msg)).to.deep.equal(['projection worker interrupted; starting again']);
    expect(warnings[0]?.err, 'the first warning carries its cause').to.have.property('message').that.matches(/ECONNREFUSED|connect/);
    // Backoff from 100 ms doubling: 100 + 200 + 400 + 800 ms fit in 2.5 s, 1,600 more do not.
    expect(attempts.length).to.be.within(3, 6);
    expect(attempts.map((line) => line.retryInMs).slice(0, 3)).to.deep.equal([100, 200, 400]);
  });
});
