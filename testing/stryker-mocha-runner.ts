import { globSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import Mocha from 'mocha';
import type { InstrumenterContext } from '@stryker-mutator/api/core';
import { declareClassPlugin, PluginKind, tokens } from '@stryker-mutator/api/plugin';
import {
  determineHitLimitReached,
  DryRunStatus,
  TestStatus,
  toMutantRunResult,
  type DryRunOptions,
  type DryRunResult,
  type MutantRunOptions,
  type MutantRunResult,
  type TestResult,
  type TestRunner,
  type TestRunnerCapabilities,
} from '@stryker-mutator/api/test-runner';

/**
 * The StrykerJS test runner of `npm run mutate` (stryker.config.json: testRunner `mocha-esm`).
 * StrykerJS's own mocha runner loads Mocha's command-line internals by file names that Mocha 12 no
 * longer has (they end in .cjs now), so this one drives Mocha through its public API only: the
 * specs and required modules of `.mocharc.mutate.json` are loaded once (ES modules cannot be
 * loaded again), then run once with coverage per test and again for each mutant, only the tests
 * that reach it.
 */

/** Read from the working directory: the sandbox StrykerJS runs the tests in. */
const configFile = '.mocharc.mutate.json';

interface MutationMochaConfig {
  spec: string[];
  require?: string[];
  timeout?: number;
}

type HookName = 'beforeAll' | 'beforeEach' | 'afterAll' | 'afterEach';
type RootHooks = Partial<Record<HookName, Mocha.Func[]>>;

/** The results of the run under way, filled by the reporter Mocha makes for each run. */
let results: TestResult[] = [];

class CollectingReporter extends Mocha.reporters.Base {
  constructor(runner: Mocha.Runner, options?: Mocha.MochaOptions) {
    super(runner, options);
    results = [];
    // No fileName: the specs run compiled from dist/, outside the files StrykerJS reads, so an
    // incremental run would take every test for removed; without one it matches tests by name.
    const base = (test: Mocha.Runnable) => ({ id: test.fullTitle(), name: test.fullTitle(), timeSpentMs: test.duration ?? 0 });
    runner.on('pass', (test) => results.push({ ...base(test), status: TestStatus.Success }));
    // Also a failed hook: the tests under it did not pass.
    runner.on('fail', (test, error: Error) => results.push({ ...base(test), status: TestStatus.Failed, failureMessage: error.message }));
    runner.on('pending', (test) => results.push({ ...base(test), status: TestStatus.Skipped }));
  }
}

const escapeRegExp = (text: string): string => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

function setBail(suite: Mocha.Suite, bail: boolean): void {
  suite.bail(bail);
  for (const child of suite.suites) setBail(child, bail);
}

declare global {
  // The instrumented code's shared state: the active mutant, coverage, hit counts.
  var __stryker__: InstrumenterContext | undefined;
}

export class MochaEsmTestRunner implements TestRunner {
  static inject = tokens();
  private mocha: Mocha | null = null;
  private loaded = false;
  private recordCoverage = false;
  private readonly context: InstrumenterContext;

  constructor() {
    this.context = globalThis.__stryker__ ??= {};
  }

  capabilities(): TestRunnerCapabilities {
    // Loaded ES modules stay loaded: a mutant of code that runs at load needs a new process.
    return { reloadEnvironment: false };
  }

  async init(): Promise<void> {
    const config = JSON.parse(readFileSync(configFile, 'utf8')) as MutationMochaConfig;
    const rootHooks: RootHooks = {};
    for (const module of config.require ?? []) {
      const loaded = (await import(pathToFileURL(resolve(module)).href)) as { mochaHooks?: Partial<Record<HookName, Mocha.Func>> };
      for (const [name, hook] of Object.entries(loaded.mochaHooks ?? {}) as Array<[HookName, Mocha.Func]>) (rootHooks[name] ??= []).push(hook);
    }
    const mocha = new Mocha({ reporter: CollectingReporter, timeout: config.timeout ?? 30_000, rootHooks });
    mocha.cleanReferencesAfterRun(false);
    for (const pattern of config.spec) for (const file of globSync(pattern).sort()) mocha.addFile(resolve(file));
    const context = this.context;
    const recordingCoverage = (): boolean => this.recordCoverage;
    mocha.suite.beforeEach(function (this: Mocha.Context) {
      if (recordingCoverage()) context.currentTestId = this.currentTest?.fullTitle();
    });
    this.mocha = mocha;
  }

  async dryRun({ coverageAnalysis, disableBail }: DryRunOptions): Promise<DryRunResult> {
    this.recordCoverage = coverageAnalysis === 'perTest';
    const result = await this.run(disableBail);
    this.recordCoverage = false;
    if (result.status === DryRunStatus.Complete && coverageAnalysis !== 'off') result.mutantCoverage = this.context.mutantCoverage;
    return result;
  }

  async mutantRun({ activeMutant, testFilter, disableBail, hitLimit, mutantActivation }: MutantRunOptions): Promise<MutantRunResult> {
    this.context.hitLimit = hitLimit;
    this.context.hitCount = hitLimit ? 0 : undefined;
    const mocha = this.started();
    mocha.grep(testFilter ? new RegExp(testFilter.map((id) => `(^${escapeRegExp(id)}$)`).join('|')) : '');
    // Code that runs at load sees the mutant only when it is loaded with it active (a static mutant).
    if (!this.loaded) this.context.activeMutant = mutantActivation === 'static' ? activeMutant.id : undefined;
    return toMutantRunResult(await this.run(disableBail, activeMutant.id));
  }

  async dispose(): Promise<void> {
    this.mocha?.dispose();
  }

  private started(): Mocha {
    if (!this.mocha) throw new Error('the test runner was not initialised');
    return this.mocha;
  }

  private async run(disableBail: boolean, activeMutant?: string): Promise<DryRunResult> {
    const mocha = this.started();
    try {
      if (!this.loaded) {
        await mocha.loadFilesAsync();
        this.loaded = true;
      }
      this.context.activeMutant = activeMutant;
      setBail(mocha.suite, !disableBail);
      await new Promise<void>((done) => mocha.run(() => done()));
      return determineHitLimitReached(this.context.hitCount, this.context.hitLimit) ?? { status: DryRunStatus.Complete, tests: results };
    } catch (error) {
      return { status: DryRunStatus.Error, errorMessage: error instanceof Error ? (error.stack ?? error.message) : String(error) };
    }
  }
}

export const strykerPlugins = [declareClassPlugin(PluginKind.TestRunner, 'mocha-esm', MochaEsmTestRunner)];
