import { expect } from 'chai';
import { partOf } from '../projections/runner/parts.js';
import { FairScheduler, sharedWindowMs, type Job } from '../projections/runner/scheduler.js';

/**
 * The fair scheduler of a projection worker: which (projection, account) a free lane applies next.
 * What an operator relies on: one account's events are applied in order (never two batches of one
 * projection and account at once), an account with new events gets a lane within one batch however
 * large another account's backlog, and no account is forgotten while it has events to apply.
 */

const key = (job: Job | null): string | null => (job ? `${job.projection}/${job.accountId}` : null);

/** Takes jobs until none is left for a free lane. */
function takeAll(scheduler: FairScheduler): Job[] {
  const jobs: Job[] = [];
  for (let job = scheduler.take(); job; job = scheduler.take()) jobs.push(job);
  return jobs;
}

/** Two account ids in the same part (the scheduler must not treat them as one). */
function twoAccountsOfOnePart(): [string, string] {
  const firstOfPart = new Map<number, string>();
  for (let i = 0; ; i += 1) {
    const id = `account-${i}`;
    const other = firstOfPart.get(partOf(id));
    if (other !== undefined) return [other, id];
    firstOfPart.set(partOf(id), id);
  }
}

describe('fair scheduler (unit)', () => {
  it('never has one (projection, account) in flight twice, however often the account is marked', () => {
    const scheduler = new FairScheduler(['products', 'leads'], 4);
    scheduler.mark('a');
    expect(takeAll(scheduler).map(key)).to.deep.equal(['products/a', 'leads/a']);
    // Marked again while both jobs run: nothing more for a free lane.
    for (let i = 0; i < 10; i += 1) scheduler.mark('a');
    expect(scheduler.take(), 'a job while the same one is in flight').to.equal(null);
    expect(scheduler.inFlight).to.equal(2);
    // Once the products job ends, the products job of the account can be taken again: once.
    scheduler.finish({ projection: 'products', accountId: 'a' }, 'more');
    expect(takeAll(scheduler).map(key)).to.deep.equal(['products/a']);
  });

  it("keeps a (projection, account) pending when it is marked during a job that ends 'caught-up'", () => {
    const scheduler = new FairScheduler(['products'], 2);
    scheduler.mark('a');
    const job = scheduler.take() as Job;
    scheduler.mark('a'); // new events arrive while the batch reads
    scheduler.finish(job, 'caught-up');
    expect(key(scheduler.take()), 'the job after a mark during the caught-up one').to.equal('products/a');

    // Without a mark during the job, a caught-up job leaves nothing behind.
    scheduler.finish({ projection: 'products', accountId: 'a' }, 'caught-up');
    expect(scheduler.take()).to.equal(null);
    expect(scheduler.behind()).to.deep.equal([]);
    expect(scheduler.waiting).to.equal(0);
  });

  it('with 4 lanes, an account with 1,000 marks never holds all 4, and an account marked later gets the next free lane', () => {
    let now = 0;
    const scheduler = new FairScheduler(['p1', 'p2', 'p3', 'p4', 'p5', 'p6'], 4, () => now);
    /** What each of the 4 lanes is applying (null: free), as a worker's lanes take and finish jobs. */
    const lanes: (Job | null)[] = [null, null, null, null];
    const fill = (): void => {
      for (let i = 0; i < lanes.length; i += 1) lanes[i] ??= scheduler.take();
    };
    const held = (accountId: string): number => lanes.filter((job) => job?.accountId === accountId).length;

    for (let i = 0; i < 1_000; i += 1) scheduler.mark('big');
    fill();
    expect(held('big'), 'the big account alone: all lanes but one').to.equal(3);
    expect(lanes[3], 'the lane kept free').to.equal(null);

    // A small account marked now takes the free lane at once.
    scheduler.mark('small');
    fill();
    expect(key(lanes[3] ?? null)).to.equal('p1/small');

    // Lanes end their batches in turn, each with more to apply: beside the small account, the big
    // one keeps to one lane once its batches in flight end, and the small one is never without one.
    for (let round = 0; round < 200; round += 1) {
      now += 10;
      const lane = round % 4;
      if (lanes[lane]) scheduler.finish(lanes[lane], 'more');
      lanes[lane] = null;
      fill();
      expect(held('big'), `lanes of the big account, round ${round}`).to.be.within(1, round < 4 ? 3 : 1);
      expect(held('small'), `lanes of the small account, round ${round}`).to.equal(1);
    }

    // The small account has new events once more, then catches up; once it has had no work for
    // sharedWindowMs, the big one takes all lanes but one again.
    scheduler.mark('small');
    for (let i = 0; i < lanes.length; i += 1) {
      if (lanes[i]?.accountId === 'small') {
        scheduler.finish(lanes[i] as Job, 'caught-up');
        lanes[i] = null;
      }
    }
    for (let left = scheduler.take((id) => id === 'small'); left; left = scheduler.take((id) => id === 'small')) scheduler.finish(left, 'caught-up');
    fill();
    expect(held('big'), 'within the window').to.equal(1);
    now += sharedWindowMs + 1;
    fill();
    expect(held('big'), 'after the window').to.equal(3);
  });

  it('shares the lanes but one among the accounts with work: 8 lanes, 3 accounts with backlogs hold 2 each', () => {
    const scheduler = new FairScheduler(['p1', 'p2', 'p3', 'p4'], 8);
    for (const id of ['a', 'b', 'c']) scheduler.mark(id);
    const jobs = takeAll(scheduler);
    for (const id of ['a', 'b', 'c']) expect(jobs.filter((j) => j.accountId === id), id).to.have.length(2);
    scheduler.mark('d');
    expect(key(scheduler.take()), 'a fourth account still finds the lanes left').to.equal('p1/d');
  });

  it('gives a freed lane to the account with the fewest jobs in flight', () => {
    const scheduler = new FairScheduler(['p1', 'p2', 'p3', 'p4'], 4);
    scheduler.mark('big');
    const big = takeAll(scheduler);
    expect(big).to.have.length(3);
    scheduler.mark('other');
    expect(key(scheduler.take())).to.equal('p1/other');
    // Every lane is busy when a third account is marked; the next lane freed (by the big account) is its.
    scheduler.mark('late');
    scheduler.finish(big[0] as Job, 'more');
    expect(key(scheduler.take()), 'the lane freed by the big account').to.equal('p1/late');
  });

  it('serves accounts with as many jobs in flight in turn: the one served longest ago first', () => {
    const scheduler = new FairScheduler(['products'], 1);
    for (const id of ['c', 'a', 'b']) scheduler.mark(id);
    const order: string[] = [];
    for (let i = 0; i < 9; i += 1) {
      const job = scheduler.take() as Job;
      order.push(job.accountId);
      scheduler.finish(job, 'more');
    }
    expect(order).to.deep.equal(['c', 'a', 'b', 'c', 'a', 'b', 'c', 'a', 'b']);

    // An account marked later waits for no one served before it.
    scheduler.mark('d');
    expect(scheduler.take()?.accountId).to.equal('d');
  });

  it('alternates two accounts of the same part', () => {
    const [one, two] = twoAccountsOfOnePart();
    expect(partOf(one)).to.equal(partOf(two));
    const scheduler = new FairScheduler(['products'], 2);
    scheduler.mark(one);
    scheduler.mark(two);
    const held = new Set([partOf(one)]);
    const eligible = (accountId: string): boolean => held.has(partOf(accountId));
    const order: string[] = [];
    for (let i = 0; i < 6; i += 1) {
      // Two lanes: both accounts run at once, then each ends with more to apply.
      const jobs = [scheduler.take(eligible), scheduler.take(eligible)];
      expect(scheduler.take(eligible)).to.equal(null);
      for (const job of jobs) {
        order.push((job as Job).accountId);
        scheduler.finish(job as Job, 'more');
      }
    }
    expect(order.filter((id) => id === one)).to.have.length(6);
    expect(order.filter((id) => id === two)).to.have.length(6);
    // With one lane's worth at a time, they take turns.
    const oneLane: string[] = [];
    for (let i = 0; i < 6; i += 1) {
      const job = scheduler.take(eligible) as Job;
      oneLane.push(job.accountId);
      scheduler.finish(job, 'more');
    }
    expect(new Set(oneLane.filter((_, i) => i % 2 === 0)).size, 'every other job is one account').to.equal(1);
    expect(new Set(oneLane.filter((_, i) => i % 2 === 1)).size).to.equal(1);
    expect(oneLane[0]).to.not.equal(oneLane[1]);
  });

  it('takes no job of an account that is not eligible (its part not held), and keeps it for later', () => {
    const scheduler = new FairScheduler(['products'], 2);
    scheduler.mark('a');
    expect(scheduler.take(() => false)).to.equal(null);
    expect(key(scheduler.take(() => true))).to.equal('products/a');
  });

  it('drop() forgets the waiting jobs of an account; its jobs in flight end and leave nothing behind', () => {
    let now = 1_000;
    const scheduler = new FairScheduler(['products', 'leads'], 4, () => now);
    scheduler.mark('a');
    scheduler.mark('b');
    const running = scheduler.take() as Job; // products/a
    expect(key(running)).to.equal('products/a');
    scheduler.drop('a'); // its part was lost
    const bJobs = takeAll(scheduler);
    expect(bJobs.map(key), 'only the other account is left').to.deep.equal(['products/b', 'leads/b']);
    expect(scheduler.waiting).to.equal(0);
    expect(scheduler.inFlightFor(['a'])).to.equal(1);

    // The batch in flight ends (fenced, or with more to apply): the account is not taken up again.
    scheduler.finish(running, 'more');
    expect(scheduler.inFlightFor(['a'])).to.equal(0);
    expect(scheduler.take(), 'a job of a dropped account').to.equal(null);
    expect(scheduler.behind().map((b) => b.accountId), 'accounts behind after the drop').to.deep.equal(['b']);

    // The part comes back an hour later, the other account caught up meanwhile: the account is
    // behind since it is marked again, not since before the drop.
    for (const job of bJobs) scheduler.finish(job, 'caught-up');
    now += 3_600_000;
    scheduler.mark('a');
    expect(scheduler.behind().find((b) => b.accountId === 'a')?.since).to.equal(now);
    expect(takeAll(scheduler).map(key)).to.deep.equal(['products/a', 'leads/a']);

    // Dropping an account with nothing in flight forgets it at once.
    scheduler.mark('c');
    scheduler.drop('c');
    expect(scheduler.behind().map((b) => b.accountId)).to.not.include('c');
  });

  it('drop() during a job, then a mark before the job ends: the account stays pending', () => {
    const scheduler = new FairScheduler(['products'], 2);
    scheduler.mark('a');
    const job = scheduler.take() as Job;
    scheduler.drop('a');
    scheduler.mark('a'); // the part was claimed again while the old batch was still running
    scheduler.finish(job, 'caught-up');
    expect(key(scheduler.take())).to.equal('products/a');
  });

  it('behind(): since when each account has been behind, by the injected clock, and for which projections', () => {
    let now = 5_000;
    const scheduler = new FairScheduler(['products', 'leads'], 4, () => now);
    scheduler.mark('a', ['products']);
    now = 6_000;
    scheduler.mark('a', ['leads']); // a later mark does not move `since`
    scheduler.mark('b', ['leads']);
    expect(scheduler.behind()).to.deep.equal([
      { accountId: 'a', since: 5_000, projections: ['leads', 'products'] },
      { accountId: 'b', since: 6_000, projections: ['leads'] },
    ]);
    // In flight still counts as behind.
    let jobs = takeAll(scheduler);
    expect(scheduler.behind().map((b) => b.accountId)).to.deep.equal(['a', 'b']);
    // Caught up: no longer behind; marked again later: behind since then.
    while (jobs.length) {
      for (const job of jobs) scheduler.finish(job, 'caught-up');
      jobs = takeAll(scheduler);
    }
    expect(scheduler.behind()).to.deep.equal([]);
    now = 9_000;
    scheduler.mark('a');
    expect(scheduler.behind()).to.deep.equal([{ accountId: 'a', since: 9_000, projections: ['leads', 'products'] }]);
  });

  it('found() during jobs leaves them to end as they find: no job again for events a running batch may have read', () => {
    const scheduler = new FairScheduler(['leads', 'products', 'track-index'], 3);
    scheduler.mark('a');
    // Two lanes of three for one account alone: leads and products run, track-index waits.
    expect(takeAll(scheduler).map(key)).to.deep.equal(['leads/a', 'products/a']);
    // Discovery finds the events the running jobs are reading.
    scheduler.found('a', ['leads', 'products', 'track-index']);
    scheduler.finish({ projection: 'leads', accountId: 'a' }, 'caught-up');
    scheduler.finish({ projection: 'products', accountId: 'a' }, 'caught-up');
    expect(takeAll(scheduler).map(key), 'after the running jobs caught up').to.deep.equal(['track-index/a']);
    scheduler.finish({ projection: 'track-index', accountId: 'a' }, 'caught-up');
    expect(scheduler.behind()).to.deep.equal([]);

    // Found for an account with nothing running: pending, as a mark would make it.
    scheduler.found('b', ['products']);
    expect(takeAll(scheduler).map(key)).to.deep.equal(['products/b']);
    // A job that ends with events left ('more') is taken again whatever found() said.
    scheduler.found('b', ['products']);
    scheduler.finish({ projection: 'products', accountId: 'b' }, 'more');
    expect(takeAll(scheduler).map(key)).to.deep.equal(['products/b']);
  });
});
