import { expect } from 'chai';
import { maxNestingDepth, nestingProblem } from '../src/ingest/nesting.js';
import { InexactInteger } from '../src/ingest/exact-integers.js';
import { unstorableValue } from '../src/ingest/storable.js';

/** `levels` arrays nested in one another, innermost holding `inner`. */
function arrays(levels: number, inner: unknown = 1): unknown {
  let value: unknown = [inner];
  for (let level = 1; level < levels; level += 1) value = [value];
  return value;
}

describe('walks over request bodies (unit)', () => {
  describe('nestingProblem', () => {
    it('names the first container past the limit, with array indexes and keys', () => {
      const body = { list: [0, { deep: arrays(maxNestingDepth) }] };
      const problem = nestingProblem(body, maxNestingDepth);
      expect(problem).to.equal(`list[1].deep${'[0]'.repeat(maxNestingDepth - 3)} is nested too deep: an item may nest objects and arrays at most ${maxNestingDepth} levels`);
      expect(nestingProblem({ list: [0, { deep: arrays(maxNestingDepth - 3) }] }, maxNestingDepth)).to.equal(null);
    });

    it('checks 100,000 levels without recursion', () => {
      expect(nestingProblem(arrays(100_000), maxNestingDepth)).to.match(/^\[0\]\[0\]/);
    });

    it('finds a container past the limit whatever nulls sit beside it, in arrays and objects', () => {
      const suffix = `is nested too deep: an item may nest objects and arrays at most ${maxNestingDepth} levels`;
      expect(nestingProblem({ list: [arrays(maxNestingDepth), null] }, maxNestingDepth)).to.equal(`list[0]${'[0]'.repeat(maxNestingDepth - 2)} ${suffix}`);
      expect(nestingProblem({ deep: arrays(maxNestingDepth), none: null }, maxNestingDepth)).to.equal(`deep${'[0]'.repeat(maxNestingDepth - 1)} ${suffix}`);
    });

    it('has nothing to say about scalars', () => {
      expect(nestingProblem('text', 1)).to.equal(null);
      expect(nestingProblem(null, 1)).to.equal(null);
    });
  });

  describe('unstorableValue', () => {
    it('walks 100,000 levels without recursion', () => {
      expect(unstorableValue({ deep: arrays(100_000, Infinity) })).to.match(/^deep(\[0\])+ must be a finite number$/);
    });

    it('reports the first problem in document order, keys before their values', () => {
      expect(unstorableValue({ a: [1, new InexactInteger('1152921504606846977')], b: Infinity })).to.match(/^a\[1\] is an integer beyond/);
      expect(unstorableValue({ 'bad\u0000key': Infinity })).to.equal('bad\u0000key contains a NUL character or an unpaired surrogate, which cannot be stored');
    });

    it('names a field called body by its full path', () => {
      expect(unstorableValue({ body: { x: Infinity } })).to.equal('body.x must be a finite number');
    });

    it('names a place under an array as the nesting check does, and only the item itself `body`', () => {
      expect(unstorableValue([0, { x: Infinity }])).to.equal('[1].x must be a finite number');
      expect(nestingProblem([0, { x: arrays(maxNestingDepth) }], maxNestingDepth)).to.match(/^\[1\]\.x\[0\]/);
      expect(unstorableValue(Infinity)).to.equal('body must be a finite number');
    });
  });
});
