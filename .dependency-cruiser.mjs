/**
 * The arrows of the code (`npm run lint` checks them; README.md, Layout): no import
 * circles, and each layer imports only the layers below it.
 *   1. entry points: src/main.ts, src/worker-main.ts, src/server.ts, src/ops-server.ts, src/cli/,
 *      and src/service-parts.ts, where a service process is put together
 *   2. src/http/, src/openapi/
 *   3. src/ingest/, src/accounts/, src/activity/, src/erasure/, src/export/, projections/
 *   4. src/eventstore/
 *   5. src/db/, src/spec/ and the single files of src/ (config, logger, metrics, errors, ...)
 * Type-only imports count: a type tie is a tie.
 */
const entry = '^src/(main|worker-main|server|ops-server|service-parts)\\.ts$|^src/cli/';
const http = '^src/(http|openapi)/';
const domain = '^src/(ingest|accounts|activity|erasure|export)/|^projections/';
const eventstore = '^src/eventstore/';
const ground = '^src/(db|spec)/|^src/[^/]+\\.ts$';

/** A rule that `from` never imports `to`. */
const never = (name, comment, from, to) => ({ name, comment, severity: 'error', from: { path: from, pathNot: entry }, to: { path: to } });

export default {
  forbidden: [
    { name: 'no-circular', comment: 'An import circle ties its modules into one.', severity: 'error', from: {}, to: { circular: true } },
    never('http-not-up', 'src/http and src/openapi are reached from the entry points, never the reverse.', http, entry),
    never('domain-not-up', 'The ingest rules, accounts, activity and projections know nothing of HTTP or the CLI.', domain, `${entry}|${http}`),
    never('eventstore-not-up', 'The event store is below everything that uses it.', eventstore, `${entry}|${http}|${domain}`),
    never('ground-not-up', 'The ground floor (db, config, logger, metrics, errors) imports only itself.', ground, `${entry}|${http}|${domain}|${eventstore}`),
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    exclude: { path: '^(dist|node_modules|dashboard/dist)/' },
  },
};
