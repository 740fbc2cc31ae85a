/**
 * Loaded first by `.mocharc.esdb.json`: the specs in test/any-store/ (what must hold on either event
 * store) run again with the EventStoreDB adapter selected (support/app.ts starts an EventStoreDB test
 * double per app).
 */
process.env.TEST_EVENT_STORE = 'esdb';
