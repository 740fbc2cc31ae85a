import { expect } from 'chai';
import { StoreOutage } from '../src/http/store-outage.js';
import { Metrics } from '../src/metrics.js';
import { until } from './support/eventually.js';
import { capturedLog, levels, type LogLine } from './support/log-lines.js';

/** The messages logged, for a failure message. */
const messages = (lines: LogLine[]): string => lines.map((line) => line.msg).join(' / ');

describe('store outage log (unit)', () => {
  it('logs an outage once when it starts, a count per period while it lasts, and its end after a quiet period', async () => {
    const { log, lines } = capturedLog();
    const metrics = new Metrics(false);
    const outage = new StoreOutage(log, metrics, 30);
    const error = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), { code: 'ECONNREFUSED' });
    for (let i = 0; i < 500; i += 1) outage.refusedRequest(error, '/events');
    expect(lines.map((l) => [l.level, l.msg])).to.deep.equal([[levels.warn, 'store unavailable: requests are answered 503 until it is back']]);

    await until(() => lines.length >= 3, 5_000, () => `only ${lines.length} lines logged: ${messages(lines)}`);
    expect(lines[1]).to.include({ level: levels.warn, msg: 'store still unavailable', refused: 500, lastPeriod: 500 });
    expect(lines[2]).to.include({ level: levels.info, msg: 'store outage over: no request refused since', refused: 500 });
    expect((await metrics.storeUnavailable.get()).values[0]?.value).to.equal(500);

    // A later outage is a new one.
    outage.refusedRequest(error, '/events');
    expect(lines).to.have.length(4);
    expect(lines[3]).to.include({ level: levels.warn, msg: 'store unavailable: requests are answered 503 until it is back' });
    await until(() => lines.length >= 6, 5_000, () => `only ${lines.length} lines logged: ${messages(lines)}`);
  });
});
