/* global Buffer */
// The size budget of the browser SDK's builds (sdk/build-browser.js): a page downloads the file
// before it tracks anything, so each build stays within 8 KiB gzipped (level 9). A unit test
// (test/sdk/browser-budget.unit.spec.ts) shows the check refusing a bundle grown past it.
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';

export const budgetBytes = 8192;

/**
 * The sizes of a build, and whether it is within the budget:
 * `{ name, bytes, gzipBytes, brotliBytes, ok, message }`; `message` names the sizes, and the
 * budget when it is passed.
 */
export function checkBudget(name, code, budget = budgetBytes) {
  const bytes = Buffer.byteLength(code);
  const gzipBytes = gzipSync(code, { level: 9 }).length;
  const brotliBytes = brotliCompressSync(code, { params: { [constants.BROTLI_PARAM_QUALITY]: 11 } }).length;
  const ok = gzipBytes <= budget;
  const sizes = `${name}: ${bytes} bytes, ${gzipBytes} gzipped, ${brotliBytes} brotli`;
  const message = ok ? `${sizes} (budget ${budget} gzipped)` : `${sizes}: over the budget of ${budget} bytes gzipped by ${gzipBytes - budget}`;
  return { name, bytes, gzipBytes, brotliBytes, ok, message };
}
