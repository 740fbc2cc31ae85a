/** The EventStoreDB test double in a process of its own (for `npm run bench:esdb`): prints its connection string. */
import { EsdbTestServer } from '../testing/esdb-test-server.js';

const server = await EsdbTestServer.start();
process.stdout.write(`${server.connectionString}\n`);
process.on('SIGTERM', () => {
  server.close().then(() => process.exit(0), () => process.exit(1));
});
