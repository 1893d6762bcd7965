/**
 * The replay rule as a user meets it (issue 33 points 1 and 12), in the shipped quick start opened
 * the way a fresh JupyterLab opens it (untrusted), cells run with Shift+Enter:
 * - a %%goat cell run again in the kernel that ran it asks the model again (the replay server's log
 *   grows), even after the notebook was saved with its recording;
 * - opened again from disk in a new kernel, the same cell replays its recording, shows "Run fresh",
 *   and Run fresh asks the model;
 * - a replay that departs ends with one readable line (contrast of at least 4.5:1, light and dark)
 *   that says what changed, and Run fresh goes on from there.
 */
import { expect, IJupyterLabPageFixture, test } from '@jupyterlab/galata';
import { Locator } from '@playwright/test';

import {
  cellById,
  expectText,
  GOAT_RUN_MS,
  isDirty,
  KERNEL_READY_MS,
  openNotebook,
  outputOf,
  putCassette,
  putText,
  setupSource,
  tagCells
} from './goat-helpers';

// Node's fs and path at run time (ui-tests has no @types/node).
declare const require: (name: string) => any;
declare const __dirname: string;
declare const process: { env: Record<string, string | undefined> };
const fs = require('fs');
const path = require('path');

const EXAMPLES = path.resolve(__dirname, '..', '..', '..', 'examples');
const SHOTS = process.env.GOAT_SCREENSHOTS_DIR;
const SETUP = '009997ea'; // quickstart.ipynb's cells
const HELLO = 'c9978001';

test.describe.configure({ timeout: 480_000 });

// Before the setup cell (again in the new kernel): no provider key, so the cassette plays, and a log.
const PREPARE = [
  'import os',
  'from goat_jupyter.replay.offline import PROVIDER_KEYS',
  'for key in PROVIDER_KEYS: os.environ.pop(key, None)',
  'os.environ["GOAT_HOME"] = os.path.abspath("goat-home")',
  'os.environ["GOAT_REPLAY_REQUEST_LOG"] = os.path.abspath("requests.jsonl")',
  'print("PREPARED")'
].join('\n');

/** Runs `code` in the open notebook's kernel (not in a cell) and returns what it printed. */
async function kernelRun(page: IJupyterLabPageFixture, code: string): Promise<string> {
  return page.evaluate(async source => {
    const panel = (window as any).jupyterapp.shell.currentWidget;
    const future = panel.sessionContext.session.kernel.requestExecute({ code: source });
    let printed = '';
    future.onIOPub = (msg: any) => {
      if (msg.header.msg_type === 'stream') {
        printed += msg.content.text;
      }
    };
    await future.done;
    return printed;
  }, code);
}

/** How many requests the replay server answered so far (its log, one line each). */
async function requests(page: IJupyterLabPageFixture): Promise<number> {
  const code = 'import os\nprint(sum(1 for _ in open("requests.jsonl")) if os.path.exists("requests.jsonl") else 0)';
  return Number((await kernelRun(page, code)).trim());
}

/** Clicks into the cell's editor and presses Shift+Enter, as a user runs a cell. */
async function shiftEnter(page: IJupyterLabPageFixture, cellId: string): Promise<void> {
  await tagCells(page);
  await cellById(page, cellId).locator('.jp-InputArea-editor').click();
  await page.keyboard.press('Shift+Enter');
}

/** Waits until the cell's run ended (its execution count is set again). */
async function finished(page: IJupyterLabPageFixture, cellId: string): Promise<void> {
  await expect
    .poll(
      () =>
        page.evaluate(id => {
          const notebook = (window as any).jupyterapp.shell.currentWidget.content;
          const cell = notebook.widgets.find((c: any) => c.model.id === id);
          return cell.model.executionState === 'idle' && cell.model.executionCount !== null;
        }, cellId),
      { timeout: GOAT_RUN_MS }
    )
    .toBe(true);
}

async function save(page: IJupyterLabPageFixture): Promise<void> {
  await page.keyboard.press('Control+s');
  await expect.poll(() => isDirty(page)).toBe(false);
}

async function prepare(page: IJupyterLabPageFixture): Promise<void> {
  expect(await kernelRun(page, PREPARE)).toContain('PREPARED');
  await shiftEnter(page, SETUP);
  await expectText(await outputOf(page, SETUP), 'replaying the recorded session', KERNEL_READY_MS);
}

test('a re-run asks the model; reopened, the cell replays and Run fresh asks it', async ({
  page,
  tmpPath
}) => {
  await page.request.put(`/api/contents/${tmpPath}/cassettes`, { data: { type: 'directory' } });
  for (const file of ['quickstart.ipynb', 'cassettes/quickstart.json']) {
    await putText(page, `${tmpPath}/${file}`, fs.readFileSync(path.join(EXAMPLES, file), 'utf-8'));
  }
  await openNotebook(page, `${tmpPath}/quickstart.ipynb`);
  await prepare(page);

  await shiftEnter(page, HELLO);
  const hello = await outputOf(page, HELLO);
  await expectText(hello, 'Hello from goat!');
  await finished(page, HELLO);
  const first = await requests(page);
  expect(first).toBe(3);
  await save(page); // the recording is in the file now: the old code replayed it from there

  await shiftEnter(page, HELLO);
  await expectText(hello, 'Python files in this folder');
  await finished(page, HELLO);
  expect(await requests(page)).toBe(first + 1);
  await expect(hello).not.toContainText('replayed');
  await expect(cellById(page, HELLO).locator('.goat-run-fresh')).toHaveCount(0);
  await save(page);

  // A fresh kernel on the saved notebook: the cell replays its recording, with no request.
  // The notebook opened again from disk, in a new kernel (its kernel shut down, its tab closed).
  await page.evaluate(async () => {
    const panel = (window as any).jupyterapp.shell.currentWidget;
    await panel.sessionContext.shutdown();
    panel.close();
  });
  await openNotebook(page, `${tmpPath}/quickstart.ipynb`);
  await prepare(page);
  const before = await requests(page);
  await shiftEnter(page, HELLO);
  await expectText(hello, 'replayed');
  await finished(page, HELLO);
  expect(await requests(page)).toBe(before);
  const runFresh = cellById(page, HELLO).getByRole('button', { name: '↻ Run fresh' });
  await expect(runFresh).toBeVisible();
  await runFresh.click();
  await expectText(hello, 'Hello from goat!');
  await finished(page, HELLO);
  expect(await requests(page)).toBe(before + 3);
  await expect(hello).not.toContainText('replayed');
  await expect(runFresh).toHaveCount(0);
});

// A recording whose Glob found two CSV files; the folder now holds three.
const RECORDED_GLOB = {
  version: 1,
  model: 'gpt-4o-mini',
  prompt: 'How many CSV files are there?',
  turns: [
    {
      tool_calls: [
        { name: 'Glob', arguments: { pattern: '*.csv' }, ok: true, digest: '0123456789abcdef', summary: '2 files' }
      ]
    },
    { text: 'There are two CSV files.' }
  ]
};

function departureNotebook(): string {
  const output = {
    output_type: 'display_data',
    data: { 'application/vnd.goat.recording+json': RECORDED_GLOB, 'text/plain': 'goat: recorded session' },
    metadata: { goat: { transcript: '' } }
  };
  const cells = [
    { id: 'setup', cell_type: 'code', source: setupSource('fresh.json'), metadata: {}, outputs: [], execution_count: null },
    {
      id: 'count',
      cell_type: 'code',
      source: `%%goat\n${RECORDED_GLOB.prompt}`,
      metadata: {},
      outputs: [output],
      execution_count: 1
    }
  ];
  const metadata = { kernelspec: { name: 'python3', display_name: 'Python 3 (ipykernel)', language: 'python' } };
  return JSON.stringify({ nbformat: 4, nbformat_minor: 5, metadata, cells });
}

/** WCAG contrast of the text in `node` against what is painted behind it. */
async function contrast(node: Locator): Promise<number> {
  return node.evaluate(element => {
    const rgba = (text: string) => (text.match(/[\d.]+/g) ?? []).map(Number);
    const over = (top: number[], bottom: number[]) => {
      const alpha = top[3] ?? 1;
      return [0, 1, 2].map(i => top[i] * alpha + bottom[i] * (1 - alpha));
    };
    const layers: number[][] = [];
    for (let at: Element | null = element; at; at = at.parentElement) {
      const background = rgba(getComputedStyle(at).backgroundColor);
      if ((background[3] ?? 1) > 0) {
        layers.push(background);
      }
      if ((background[3] ?? 1) === 1) {
        break;
      }
    }
    const behind = layers.reverse().reduce((bottom, top) => over(top, bottom), [255, 255, 255]);
    const text = over(rgba(getComputedStyle(element).color), behind);
    const luminance = (c: number[]) => {
      const [r, g, b] = c.map(v => {
        const s = v / 255;
        return s <= 0.03928 ? s / 12.92 : ((s + 0.055) / 1.055) ** 2.4;
      });
      return 0.2126 * r + 0.7152 * g + 0.0722 * b;
    };
    const [light, dark] = [luminance(text), luminance(behind)].sort((a, b) => b - a);
    return (light + 0.05) / (dark + 0.05);
  });
}

test('a departed replay ends with one readable line that says what changed; Run fresh goes on', async ({
  page,
  tmpPath
}) => {
  for (const name of ['jan', 'feb', 'mar']) {
    await putText(page, `${tmpPath}/${name}.csv`, 'month,revenue\n');
  }
  await putCassette(page, `${tmpPath}/fresh.json`, [{ text: 'Now there are three CSV files.' }]);
  await putText(page, `${tmpPath}/count.ipynb`, departureNotebook());
  await openNotebook(page, `${tmpPath}/count.ipynb`);
  await shiftEnter(page, 'setup');
  await expectText(await outputOf(page, 'setup'), 'GOAT READY', KERNEL_READY_MS);
  await shiftEnter(page, 'count');
  const count = await outputOf(page, 'count');
  const line = count.locator('.jp-OutputArea-output[data-mime-type="application/vnd.jupyter.stderr"]');
  await expect(line).toContainText(
    'Replay stopped at step 1.1 (Glob *.csv): its result changed since the recording (3 files now, 2 recorded).',
    { timeout: GOAT_RUN_MS }
  );
  await expect(count).not.toContainText('Done');
  await expect(count).toContainText('Replay stopped · ');
  expect(await line.innerText()).not.toContain('digest');
  const runFresh = cellById(page, 'count').getByRole('button', { name: '↻ Run fresh' });
  await expect(runFresh).toBeVisible();
  const text = line.locator('pre');
  for (const theme of ['light', 'dark']) {
    if (theme === 'dark') {
      await page.theme.setDarkTheme();
    }
    const ratio = await contrast(text);
    expect(ratio, `${theme} theme: contrast ${ratio.toFixed(2)}`).toBeGreaterThanOrEqual(4.5);
    if (SHOTS) {
      await cellById(page, 'count').screenshot({ path: `${SHOTS}/replay-stopped-${theme}.png` });
    }
  }
  await page.theme.setLightTheme();
  if (SHOTS) {
    await page.setViewportSize({ width: 520, height: 800 });
    await cellById(page, 'count').screenshot({ path: `${SHOTS}/replay-stopped-narrow.png` });
    await page.setViewportSize({ width: 1280, height: 800 });
  }

  await runFresh.click();
  await expectText(count, 'Now there are three CSV files.');
  await expect(runFresh).toHaveCount(0);
  await expect(count).not.toContainText('Replay stopped at');
});
