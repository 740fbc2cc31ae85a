/**
 * Loaded first by `.mocharc.esdb.json`: the end-to-end specs of ingestion and projections run again
 * with the EventStoreDB adapter selected (support/app.ts starts an EventStoreDB test double per app).
 */
process.env.TEST_EVENT_STORE = 'esdb';
