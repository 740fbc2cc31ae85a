import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import { createAccount } from '../src/accounts/accounts.js';
import { createPool, type Pool } from '../src/db/pool.js';
import { AttributeTypeRegistry } from '../src/ingest/attribute-registry.js';
import { admitByTypes } from '../src/ingest/users.js';
import { freshDatabase, type TestDatabase } from './support/database.js';

describe('attribute type registry (int)', () => {
  let database: TestDatabase;
  const pools: Pool[] = [];
  let accountId: string;

  beforeEach(async () => {
    database = await freshDatabase();
    for (let i = 0; i < 4; i += 1) pools.push(createPool(database.url, 4));
    accountId = (await createAccount(pools[0] as Pool, 'registry')).id;
  });
  afterEach(async () => {
    await Promise.all(pools.splice(0).map((p) => p.end()));
    await database.drop();
  });

  it('concurrent first uses from separate processes agree on exactly one type', async () => {
    for (let round = 0; round < 5; round += 1) {
      const key = `k_${randomUUID().replaceAll('-', '_')}`;
      // Four registries with their own caches and pools stand for four processes.
      const registries = pools.map((pool) => new AttributeTypeRegistry(pool));
      const checks = await Promise.all(
        registries.flatMap((registry, i) =>
          [0, 1, 2].map((j) => admitByTypes(registry, accountId, [{ [key]: (i + j) % 2 === 0 ? 'number' : 'string' }])),
        ),
      );
      const accepted = checks.filter(([admission]) => admission?.accepted).length;
      const { rows } = await pools[0]!.query<{ type: string }>('SELECT type FROM attribute_types WHERE account_id = $1 AND key = $2', [accountId, key]);
      expect(rows).to.have.length(1);
      const winner = rows[0]?.type;
      // Six of the twelve uses sent the winning type; exactly those were accepted.
      expect(accepted).to.equal(6);
      for (const [admission] of checks) {
        if (admission && !admission.accepted) {
          expect(admission.conflict).to.equal(`attribute '${key}' is registered as ${winner} and cannot be sent as ${winner === 'number' ? 'string' : 'number'}`);
        }
      }
    }
  });

  it('within one batch the first accepted element registers the type; a rejected element registers nothing', async () => {
    const registry = new AttributeTypeRegistry(pools[0] as Pool);
    const results = await admitByTypes(
      registry,
      accountId,
      [{ c: 'boolean' }, { a: 'number' }, { a: 'string', b: 'boolean' }, { b: 'datetime' }, { c: 'string' }],
      // The first element fails its other checks: its type of c must not count.
      (index) => Promise.resolve(index !== 0),
    );
    expect(results).to.deep.equal([
      { accepted: false },
      { accepted: true },
      { accepted: false, conflict: "attribute 'a' is registered as number and cannot be sent as string" },
      { accepted: true },
      { accepted: true },
    ]);
    const { rows } = await pools[0]!.query('SELECT key, type FROM attribute_types ORDER BY key');
    expect(rows).to.deep.equal([
      { key: 'a', type: 'number' },
      { key: 'b', type: 'datetime' },
      { key: 'c', type: 'string' },
    ]);
  });
});
