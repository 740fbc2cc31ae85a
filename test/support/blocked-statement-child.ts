import { createPool } from '../../src/db/pool.js';

/**
 * A process whose statement waits on a lock (test/killed-client.int.spec.ts): it connects through
 * the service's pool to DATABASE_URL, prints its server process id, then runs an UPDATE of row 1
 * of `held`, which another session keeps locked, and is killed while it waits.
 */
// No statement timeout within the test's reach: only the server noticing the dead client ends the wait.
const pool = createPool(process.env.DATABASE_URL ?? '', 1, 120_000);
const client = await pool.connect();
const { rows } = await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
process.stdout.write(`${rows[0]?.pid}\n`);
await client.query('UPDATE held SET n = n + 1 WHERE id = 1');
