import { expect } from 'chai';
import { firstRetryMs, maxRetryMs, retryDelayMs } from '@tracking-ingestion/sdk/browser/internals';

describe('browser SDK backoff (unit)', () => {
  it('doubles from 1 s to 5 minutes', () => {
    const middle = (): number => 0.5; // no jitter: the step itself
    const steps = [0, 1, 2, 3, 8, 9, 10, 50, 10_000].map((retry) => retryDelayMs(retry, null, middle));
    expect(steps).to.deep.equal([1_000, 2_000, 4_000, 8_000, 256_000, maxRetryMs, maxRetryMs, maxRetryMs, maxRetryMs]);
    expect(firstRetryMs).to.equal(1_000);
    expect(maxRetryMs).to.equal(300_000);
  });

  it('jitters each wait by ±50% of its step', () => {
    expect(retryDelayMs(0, null, () => 0)).to.equal(500);
    expect(retryDelayMs(0, null, () => 0.999_999)).to.equal(1_500);
    expect(retryDelayMs(3, null, () => 0.25)).to.equal(6_000);
    expect(retryDelayMs(20, null, () => 0)).to.equal(150_000);
    expect(retryDelayMs(20, null, () => 0.999_999)).to.equal(450_000);
    const draws = [0.1, 0.9];
    expect([retryDelayMs(2, null, () => draws.shift() as number), retryDelayMs(2, null, () => draws.shift() as number)]).to.deep.equal([2_400, 5_600]);
  });

  it('waits at least what Retry-After asks, the backoff when it is longer', () => {
    expect(retryDelayMs(0, 30_000, () => 0.5)).to.equal(30_000);
    expect(retryDelayMs(0, 0, () => 0.5)).to.equal(1_000);
    expect(retryDelayMs(5, 10_000, () => 0.5)).to.equal(32_000);
    expect(retryDelayMs(10, 3_600_000, () => 0.999_999), 'a Retry-After past the ceiling still wins').to.equal(3_600_000);
  });
});
