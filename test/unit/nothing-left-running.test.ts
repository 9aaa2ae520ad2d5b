import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import * as v from 'valibot';
import { describe, expect, it } from 'vitest';
import { runProcess } from '../../local/process.ts';
import { parseJson } from '../support/json.ts';

const ROOT = join(import.meta.dirname, '..', '..');

// What of vitest's JSON report this test reads.
const ReportSchema = v.object({
  testResults: v.array(v.object({ name: v.string(), status: v.string(), message: v.string() })),
});

describe('the check that a test file leaves nothing running', () => {
  it('fails each file by what it left open, and passes one that closed what it opened after another leaked', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'onceflow-left-running-'));
    try {
      const report = join(dir, 'report.json');
      const run = await runProcess(
        join(ROOT, 'node_modules', '.bin', 'vitest'),
        [
          'run',
          '--config',
          'test/fixtures/left-running/vitest.config.ts',
          '--reporter=json',
          `--outputFile=${report}`,
        ],
        { cwd: ROOT, env: process.env },
      );
      expect(run.code).toBe(1);
      const { testResults } = parseJson(ReportSchema, readFileSync(report, 'utf8'));
      expect(
        Object.fromEntries(testResults.map((r) => [basename(r.name), [r.status, r.message]])),
      ).toEqual({
        'closed.fixture.ts': ['passed', ''],
        'server.fixture.ts': ['failed', 'left running after the file: 1 × TCPServerWrap'],
        'timer.fixture.ts': ['failed', 'left running after the file: 1 × Timeout'],
      });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
