import { expect } from 'chai';
import { bodyShape, containerCap, maxItemContainers, maxItemValues } from '../src/ingest/item-size.js';
import { maxNestingDepth } from '../src/ingest/nesting.js';

/** The shape of `json` as the ingest routes count it: a single item, or a bulk request's elements. */
const single = (json: string) => bodyShape(Buffer.from(json), 0, maxNestingDepth);
const bulk = (json: string) => bodyShape(Buffer.from(json), 1, maxNestingDepth + 1);

const values = (n: number): string => Array(n).fill('0').join(',');
const arrays = (n: number): string => Array(n).fill('[]').join(',');

describe('the values and the objects and arrays an item may hold (unit)', () => {
  it('counts the objects and arrays of the whole body, the array of a bulk request included', () => {
    expect(single('{"a":[{},[],{"b":[1,2]}],"s":"x"}')).to.deep.equal({ containers: 6, problem: null, tooDeep: false });
    expect(bulk('[{"a":1},{"b":[]}]')).to.deep.equal({ containers: 4, problem: null, tooDeep: false });
  });

  it(`accepts an item of ${maxItemValues} values, keys counted, and names the item past it`, () => {
    // {"a":[...]}: the object, the key and the array are 3 values.
    expect(single(`{"a":[${values(maxItemValues - 3)}]}`).problem).to.equal(null);
    expect(single(`{"a":[${values(maxItemValues - 2)}]}`).problem).to.equal(
      'the item holds more than 10,000 values: an item may hold at most 10,000 (each object key, string, number, boolean, null, object and array counts one)',
    );
    expect(single(`{"k":[${Array(maxItemValues).fill('"s"').join(',')}]}`).problem).to.match(/^the item holds more than 10,000 values/);
    expect(single(`{${Array.from({ length: maxItemValues / 2 }, (_, i) => `"k${i}":null`).join(',')}}`).problem).to.match(/^the item holds more than 10,000 values/);
  });

  it(`accepts an item of ${maxItemContainers} objects and arrays and names the item past it`, () => {
    expect(single(`{"a":[${arrays(maxItemContainers - 2)}]}`).problem).to.equal(null);
    expect(single(`{"a":[${arrays(maxItemContainers - 1)}]}`).problem).to.equal('the item holds more than 1,000 objects and arrays: an item may hold at most 1,000');
    expect(single(`{"a":[${Array(maxItemContainers).fill('{}').join(',')}]}`).problem).to.match(/^the item holds more than 1,000 objects/);
  });

  it('counts each element of a bulk request apart and names the first one past a limit', () => {
    const atLimit = `{"a":[${arrays(maxItemContainers - 2)}]}`;
    const past = `{"a":[${arrays(maxItemContainers - 1)}]}`;
    expect(bulk(`[${atLimit},${atLimit},${atLimit}]`).problem).to.equal(null);
    expect(bulk(`[${atLimit},${past},${past}]`).problem).to.match(/^\[1\] holds more than 1,000 objects and arrays/);
    expect(bulk(`[{"a":1},{"b":[${values(maxItemValues)}]}]`).problem).to.match(/^\[1\] holds more than 10,000 values/);
  });

  it('reads brackets, quotes and commas inside strings as text, escaped quotes and backslashes too', () => {
    const text = JSON.stringify('[[[{{{,,,"\\"' + '[]'.repeat(5_000));
    expect(single(`{"t":${text},"u":"\\\\","v":"a\\"[]"}`)).to.deep.equal({ containers: 1, problem: null, tooDeep: false });
  });

  it('counts numbers, literals and strings once each, whatever the blanks around them', () => {
    const mixed = (n: number) => Array.from({ length: n }, (_, i) => [' true ', '\n-1.5e3\t', 'null', '"x"'][i % 4]).join(',');
    // The array and its 9,999 elements.
    expect(single(`[ ${mixed(maxItemValues - 1)} ]`).problem).to.equal(null);
    expect(single(`[ ${mixed(maxItemValues)} ]`).problem).to.match(/^the item holds more than 10,000 values/);
    expect(single(`[ ${Array(maxItemValues).fill(' -1.5e3 ').join(',')} ]`).problem).to.match(/^the item holds more than 10,000 values/);
  });

  it('leaves a body nested too deep to the check of nesting, which names the place, unless it holds more than the cap of objects and arrays', () => {
    const deep = '['.repeat(maxNestingDepth + 1) + ']'.repeat(maxNestingDepth + 1);
    expect(single(deep)).to.deep.equal({ containers: maxNestingDepth + 1, problem: null, tooDeep: true });
    const deeper = '['.repeat(2 * maxItemContainers) + ']'.repeat(2 * maxItemContainers);
    expect(single(deeper)).to.include({ tooDeep: true }).and.have.property('problem').that.matches(/^the item holds more than 1,000 objects/);
    const capped = single('['.repeat(containerCap + 1));
    expect(capped).to.include({ tooDeep: false, containers: containerCap + 1 });
    expect(capped.problem).to.match(/^the item holds more than 1,000 objects/);
  });

  it('skips a leading byte order mark, which the parser drops, so that the items behind it are counted', () => {
    const bom = Buffer.from([0xef, 0xbb, 0xbf]);
    const body = Buffer.concat([bom, Buffer.from(`[{"eventData":[${values(maxItemValues)}]}]`)]);
    expect(bodyShape(body, 1, maxNestingDepth + 1).problem).to.match(/^\[0\] holds more than 10,000 values/);
  });

  it('counts a bulk body that is not an array as one item, whatever its keys', () => {
    const keys = Array.from({ length: maxItemValues }, (_, i) => `"k${i}":0`).join(',');
    expect(bulk(` \n{${keys}}`).problem).to.match(/^the item holds more than 10,000 values/);
    expect(bulk('{"a":1}')).to.deep.equal({ containers: 1, problem: null, tooDeep: false });
  });
});
