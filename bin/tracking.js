#!/usr/bin/env node
// The `tracking` command: operator tasks (projections, audit, accounts) and imports. Built by `npm install`
// (prepare) or `npm run build`.
import('../dist/src/cli/main.js').catch((error) => {
  if (error && error.code === 'ERR_MODULE_NOT_FOUND') {
    console.error('tracking: the project is not built; run `npm run build` first');
    process.exit(1);
  }
  throw error;
});
