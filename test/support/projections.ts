import { expect } from 'chai';
import { adminToken, type TestApp } from './app.js';
import { eventually } from './eventually.js';

/** Rebuilds every read model through the operator's API and waits until each rebuild has finished. */
export async function rebuildAllProjections(app: TestApp): Promise<void> {
  const admin = `Bearer ${adminToken}`;
  for (const name of ['leads', 'user-events', 'products', 'track-index']) {
    const requested = await app.request('POST', `/admin/v1/projections/${name}/rebuild`, undefined, { authorization: admin });
    expect(requested.status, JSON.stringify(requested.body)).to.equal(202);
    await eventually(
      async () => {
        const status = await app.get<{ projections: { projection: string; rebuild: { state: string } | null }[] }>('/admin/v1/projections', admin);
        return status.body.projections.find((p) => p.projection === name)?.rebuild?.state === 'finished' ? true : undefined;
      },
      30_000,
      () => `the rebuild of ${name} never finished`,
    );
  }
}
