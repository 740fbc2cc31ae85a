import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { expect } from 'chai';
import { parseRetryAfter, RetryPolicy, sdkVersion } from '@tracking-ingestion/sdk';
import { projectRoot } from '../../src/paths.js';

const now = Date.parse('2025-03-01T12:00:00Z');
const timing = { initialDelayMs: 500, maxDelayMs: 5_000, retryForMs: 120_000 };

describe('SDK retry policy (unit)', () => {
  describe('Retry-After', () => {
    it('reads delay-seconds', () => {
      expect(parseRetryAfter('0', now)).to.equal(0);
      expect(parseRetryAfter('7', now)).to.equal(7_000);
      expect(parseRetryAfter(' 120 ', now)).to.equal(120_000);
    });

    it('reads an HTTP-date in each of its three forms, as the time left until it', () => {
      expect(parseRetryAfter('Sat, 01 Mar 2025 12:00:30 GMT', now)).to.equal(30_000);
      expect(parseRetryAfter('Saturday, 01-Mar-25 12:00:30 GMT', now)).to.equal(30_000);
      expect(parseRetryAfter('Sat Mar  1 12:00:30 2025', now)).to.equal(30_000);
    });

    it('gives 0 for a date already past', () => {
      expect(parseRetryAfter('Sat, 01 Mar 2025 11:59:00 GMT', now)).to.equal(0);
    });

    it('ignores an absent or unreadable value (backoff alone decides)', () => {
      expect(parseRetryAfter(null, now)).to.equal(null);
      for (const value of ['', '-5', '1.5', 'soon', '12 s', 'Xyz, 99 Foo 2025 99:99:99 GMT']) expect(parseRetryAfter(value, now), value).to.equal(null);
    });
  });

  describe('backoff with full jitter', () => {
    it('waits between 0 and initialDelay × 2^retry, capped at maxDelay', () => {
      const lowest = new RetryPolicy(timing, () => 0);
      const highest = new RetryPolicy(timing, () => 0.999_999);
      const ceilings = [500, 1_000, 2_000, 4_000, 5_000, 5_000, 5_000];
      for (const [retry, ceiling] of ceilings.entries()) {
        expect(lowest.backoffMs(retry), `retry ${retry}`).to.equal(0);
        expect(highest.backoffMs(retry), `retry ${retry}`).to.equal(ceiling - 1);
      }
      expect(new RetryPolicy(timing, () => 0.5).backoffMs(2)).to.equal(1_000);
      expect(highest.backoffMs(1_000), 'no overflow far out').to.equal(4_999);
    });

    it('draws a fresh wait for each retry', () => {
      const draws = [0.1, 0.9];
      const policy = new RetryPolicy(timing, () => draws.shift() as number);
      expect([policy.backoffMs(3), policy.backoffMs(3)]).to.deep.equal([400, 3_600]);
    });
  });

  describe('time budget and Retry-After', () => {
    const policy = new RetryPolicy({ ...timing, retryForMs: 10_000 }, () => 0.5);

    it('waits at least what Retry-After asks, more when the backoff is longer', () => {
      expect(policy.delayMs(0, 0, 3_000)).to.equal(3_000);
      expect(policy.delayMs(4, 0, 1_000)).to.equal(2_500);
      expect(policy.delayMs(0, 0, 0)).to.equal(250);
    });

    it('makes the last attempt at the end of the budget, and none after it', () => {
      expect(policy.delayMs(4, 9_000, null)).to.equal(1_000);
      expect(policy.delayMs(0, 10_000, null)).to.equal(null);
      expect(policy.delayMs(0, 12_000, null)).to.equal(null);
    });

    it('gives up at once when Retry-After is past the budget', () => {
      expect(policy.delayMs(0, 5_000, 6_000)).to.equal(null);
      expect(policy.delayMs(0, 5_000, 5_000)).to.equal(5_000);
    });

    it('never retries with retryForMs 0', () => {
      expect(new RetryPolicy({ ...timing, retryForMs: 0 }).delayMs(0, 0, null)).to.equal(null);
    });
  });

  it('sends the version of its package.json', async () => {
    const manifest = JSON.parse(await readFile(join(projectRoot, 'sdk', 'package.json'), 'utf8')) as { version: string };
    expect(sdkVersion).to.equal(manifest.version);
  });
});
