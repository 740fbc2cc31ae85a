import { createInterface } from 'node:readline';
import pg from 'pg';

/**
 * A process for test/netns.int.spec.ts: it connects once to DATABASE_URL and prints
 * `connected <its pid> <backend pid>`; then, for each number it reads on stdin, it runs one query on
 * that same connection and prints `answered <number> <backend pid>`, or `failed <number> <message>`.
 * The spec sends the numbers, so it knows which queries were sent after it cut the link.
 */
const client = new pg.Client({ connectionString: process.env.DATABASE_URL });
// A connection that breaks between queries is reported, not thrown (which would end the process).
client.on('error', (error) => console.log(`lost ${error.message}`));
await client.connect();
const { rows: [session] } = await client.query<{ backend: number }>('SELECT pg_backend_pid() AS backend');
console.log(`connected ${process.pid} ${session?.backend}`);

for await (const line of createInterface({ input: process.stdin })) {
  const number = Number(line);
  client.query<{ number: number; backend: number }>('SELECT $1::int AS number, pg_backend_pid() AS backend', [number]).then(
    ({ rows: [row] }) => console.log(`answered ${row?.number} ${row?.backend}`),
    (error: Error) => console.log(`failed ${number} ${error.message}`),
  );
}
await client.end();
