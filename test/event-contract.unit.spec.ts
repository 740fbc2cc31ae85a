import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { eventDataFields, eventTypes, fromStored, schemaVersion } from '../src/eventstore/events.js';
import { projectRoot } from '../src/paths.js';

/** The text about one event type in docs/events.md: from its "`Type`:" up to the next type or section. */
function documented(docs: string, type: string): string {
  const start = docs.indexOf(`\`${type}\`:`);
  if (start < 0) return '';
  const rest = docs.slice(start + type.length + 3);
  const ends = [...eventTypes.map((other) => rest.indexOf(`\`${other}\`:`)), rest.indexOf('\n## ')].filter((i) => i >= 0);
  return rest.slice(0, Math.min(rest.length, ...ends));
}

describe('event contract (unit)', () => {
  const docs = readFileSync(join(projectRoot, 'docs', 'events.md'), 'utf8');

  for (const type of eventTypes) {
    it(`docs/events.md describes the payload of ${type}, naming each of its fields`, () => {
      const text = documented(docs, type);
      expect(text, `no "\`${type}\`:" paragraph`).to.not.equal('');
      for (const field of eventDataFields[type]) expect(text, `${type}.${field}`).to.contain(`"${field}"`);
    });
  }

  it('docs/events.md gives the schema version written', () => {
    expect(docs).to.contain(`| \`schemaVersion\` | \`${schemaVersion}\` |`);
  });

  it('reads a stored event of the current schema version as it is stored', () => {
    const metadata = { trackId: 't', accountId: 'a', receivedAt: '2024-01-01T00:00:00.000Z', schemaVersion };
    const data = { userId: 'u-1', anonymousId: 'a-1' };
    expect(fromStored({ type: 'ProfilesMerged', data, metadata })).to.deep.equal({ type: 'ProfilesMerged', data, metadata });
  });

  it('refuses a stored event of an unknown type or of a schema version it does not know', () => {
    const metadata = { trackId: 't', accountId: 'a', receivedAt: '2024-01-01T00:00:00.000Z', schemaVersion };
    expect(() => fromStored({ type: 'SomethingElse', data: {}, metadata })).to.throw('not an event type of the service: SomethingElse');
    expect(() => fromStored({ type: 'ProfilesMerged', data: {}, metadata: { ...metadata, schemaVersion: 2 } })).to.throw('schema version 2');
  });
});
