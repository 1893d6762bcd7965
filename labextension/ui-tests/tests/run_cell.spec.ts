/**
 * RunCell as JupyterLab's own execution (issue 33, points 6 and 8), in a notebook typed as a user
 * types it: the target cell shows [*] and its printed lines stream in while it runs, the goat
 * row's timer keeps moving, Stop ends it, and the prompt numbers stay consecutive.
 */
import { expect, IJupyterLabPageFixture, test } from '@jupyterlab/galata';
import { Locator } from '@playwright/test';

import { expectButton, expectText, GOAT_RUN_MS, KERNEL_READY_MS, putCassette, setupSource, Turn } from './goat-helpers';

test.describe.configure({ timeout: 240_000 });

declare const process: { env: Record<string, string | undefined> };
const SHOTS = process.env.GOAT_SCREENSHOTS_DIR;

const runCell = (cell: number, match: string): Turn => ({
  tool_calls: [{ name: 'RunCell', arguments: { cell_id: `cell-${cell}` } }],
  match
});

const TURNS: Turn[] = [
  runCell(1, '[three]'),
  runCell(2, '[three]'),
  runCell(3, '[three]'),
  { text: 'Ran the three cells.', match: '[three]' },
  runCell(1, '[slow]'),
  { text: 'The slow cell is done.', match: '[slow]' },
  runCell(1, '[asked]'),
  runCell(2, '[asked]'),
  { text: 'Ran both after asking.', match: '[asked]' },
  runCell(1, '[queued]'),
  runCell(2, '[queued]'),
  { text: 'Ran both, queued.', match: '[queued]' },
  runCell(1, '[stop]'),
  { text: 'Not reached: Stop ends the run.', match: '[stop]' }
];

// One line, as a user would type it (the editor's auto-indent would double typed indentation).
const SLOW_CELL = 'import time\nfor i in range(5): print(f"line {i}", flush=True); time.sleep(1)';

/** A new notebook whose cells are typed in; the kernel plays `TURNS` as its model. */
async function typedNotebook(page: IJupyterLabPageFixture, tmpPath: string, sources: string[]) {
  await putCassette(page, `${tmpPath}/runcell.json`, TURNS);
  await page.notebook.createNew('runcell.ipynb');
  await page.notebook.setCell(0, 'code', setupSource('runcell.json'));
  for (const source of sources) {
    await page.notebook.addCell('code', source);
  }
  await page.notebook.runCell(0, { inplace: true });
  await expectText(outputArea(page, 0), 'GOAT READY', KERNEL_READY_MS);
}

function cell(page: IJupyterLabPageFixture, index: number): Locator {
  return page.locator('.jp-NotebookPanel:visible .jp-Notebook .jp-Cell').nth(index);
}

function outputArea(page: IJupyterLabPageFixture, index: number): Locator {
  return cell(page, index).locator('.jp-OutputArea');
}

function prompt(page: IJupyterLabPageFixture, index: number): Locator {
  return cell(page, index).locator('.jp-InputArea-prompt');
}

/** Runs cell `index` without waiting for it (a %%goat cell runs for a while). */
async function startCell(page: IJupyterLabPageFixture, index: number): Promise<void> {
  await page.evaluate(i => {
    const app = (window as any).jupyterapp;
    const notebook = app.shell.currentWidget.content;
    notebook.deselectAll();
    notebook.activeCellIndex = i;
    void app.commands.execute('notebook:run-cell');
  }, index);
}

/** Every code cell's prompt as shown: "[3]:", "[*]:", "[ ]:". */
async function prompts(page: IJupyterLabPageFixture): Promise<string[]> {
  return page
    .locator('.jp-NotebookPanel:visible .jp-Notebook .jp-CodeCell .jp-InputArea-prompt')
    .allInnerTexts()
    .then(texts => texts.map(text => text.replace(/\s/g, '')));
}

/** The seconds the goat row of the RunCell call shows (its live timer): "⠼ RunCell cell 2 · 1.23s". */
async function rowSeconds(goat: Locator): Promise<number> {
  const match = /RunCell[^\n]*· ([\d.]+)s/.exec(await goat.innerText());
  return Number(match?.[1] ?? NaN);
}

/** The running cell and the goat row under it, light then dark, in a narrow window. */
async function runningShots(page: IJupyterLabPageFixture): Promise<void> {
  const panel = page.locator('.jp-NotebookPanel:visible');
  await cell(page, 2).scrollIntoViewIfNeeded();
  await panel.screenshot({ path: `${SHOTS}/runcell-running-light.png` });
  await page.theme.setDarkTheme();
  await panel.screenshot({ path: `${SHOTS}/runcell-running-dark.png` });
}

test('a cell run by RunCell shows [*] and streams its lines while it runs', async ({ page, tmpPath }) => {
  if (SHOTS) {
    await page.setViewportSize({ width: 760, height: 640 });
    await page.sidebar.close('left');
  }
  await typedNotebook(page, tmpPath, [SLOW_CELL, '%%goat --mode bypassPermissions\n[slow] run the slow cell']);
  await startCell(page, 2);
  const target = outputArea(page, 1);
  // While the cell runs: [*], the first line is there and the last one is not yet.
  await expect(target).toContainText('line 0', { timeout: GOAT_RUN_MS });
  await expect(prompt(page, 1)).toHaveText('[*]:');
  expect(await target.innerText()).not.toContain('line 4');
  const goat = outputArea(page, 2);
  const early = await rowSeconds(goat);
  if (SHOTS) {
    await runningShots(page);
  }
  await expect(target).toContainText('line 2', { timeout: 10_000 });
  expect(await target.innerText()).not.toContain('line 4');
  const later = await rowSeconds(goat);
  expect(later, `the goat row's timer went from ${early} s to ${later} s`).toBeGreaterThan(early + 0.5);

  await expectText(goat, 'The slow cell is done.');
  await expect(prompt(page, 1)).toHaveText('[3]:');
  const lines = (await target.innerText()).trim().split('\n');
  expect(lines).toEqual(['line 0', 'line 1', 'line 2', 'line 3', 'line 4']);

  // The saved notebook holds what the cell showed.
  await page.notebook.save();
  const saved = await (await page.request.get(`/api/contents/${tmpPath}/runcell.ipynb?content=1`)).json();
  const slow = saved.content.cells[1];
  expect(slow.execution_count).toBe(3);
  expect(slow.outputs.map((o: any) => o.text).join('')).toBe(
    'line 0\nline 1\nline 2\nline 3\nline 4\n'
  );
});

test('prompt numbers after a goat cell that ran three cells are consecutive', async ({ page, tmpPath }) => {
  await typedNotebook(page, tmpPath, [
    'a = 1\nprint("one")',
    'b = 2\nprint("two")',
    'c = 3\nprint("three")',
    '%%goat --mode bypassPermissions\n[three] run the three cells',
    'print(a + b + c)'
  ]);
  await startCell(page, 4);
  await expectText(outputArea(page, 4), 'Ran the three cells.');
  await page.notebook.runCell(5, { inplace: true });
  await expectText(outputArea(page, 5), '6');
  expect(await prompts(page)).toEqual(['[1]:', '[3]:', '[4]:', '[5]:', '[2]:', '[6]:']);
  // A cell the user runs next goes on from there.
  await page.notebook.runCell(1, { inplace: true });
  await expect(prompt(page, 1)).toHaveText('[7]:');
});

test('Stop during a RunCell ends the cell and the run at once', async ({ page, tmpPath }) => {
  await typedNotebook(page, tmpPath, [
    SLOW_CELL,
    '%%goat --mode bypassPermissions\n[stop] run it',
    'print("after")'
  ]);
  await startCell(page, 2);
  const target = outputArea(page, 1);
  await expect(target).toContainText('line 0', { timeout: GOAT_RUN_MS });
  const id = await page.evaluate(
    () => (window as any).jupyterapp.shell.currentWidget.sessionContext.session.kernel.id
  );
  const stopped = Date.now();
  expect((await page.request.post(`/api/kernels/${id}/interrupt`)).ok()).toBe(true);
  await expect(target).toContainText('KeyboardInterrupt', { timeout: 10_000 });
  await expect(outputArea(page, 2)).toContainText('Interrupted', { timeout: 10_000 });
  const seconds = (Date.now() - stopped) / 1000;
  console.log(`Stop during RunCell: the cell and the run ended ${seconds.toFixed(2)} s after the interrupt`);
  expect(await target.innerText()).not.toContain('line 4');
  await expect(prompt(page, 1)).not.toHaveText('[*]:');
  await expect(prompt(page, 2)).not.toHaveText('[*]:');
  // The traceback is the cell's, not goat's Stop handler's.
  expect(await target.innerText()).not.toContain('goat_jupyter');
  // The kernel takes the next cell, with the next number.
  await page.notebook.runCell(3, { inplace: true });
  await expectText(outputArea(page, 3), 'after');
  expect(await prompts(page)).toEqual(['[1]:', '[3]:', '[2]:', '[4]:']);
});

test('prompt numbers stay consecutive when each RunCell is approved by a click', async ({ page, tmpPath }) => {
  await typedNotebook(page, tmpPath, [
    'a = 1\nprint("one")',
    'b = 2\nprint("two")',
    '%%goat\n[asked] run both cells',
    'print(a + b)'
  ]);
  await startCell(page, 3);
  const goat = outputArea(page, 3);
  await (await expectButton(goat, 'Allow once')).click();
  await expect(outputArea(page, 1)).toContainText('one', { timeout: GOAT_RUN_MS });
  await (await expectButton(goat, 'Allow once')).click();
  await expectText(goat, 'Ran both after asking.');
  await page.notebook.runCell(4, { inplace: true });
  await expectText(outputArea(page, 4), '3');
  expect(await prompts(page)).toEqual(['[1]:', '[3]:', '[4]:', '[2]:', '[5]:']);
});

test('prompt numbers stay consecutive when cells are queued behind the goat cell', async ({ page, tmpPath }) => {
  await typedNotebook(page, tmpPath, [
    'a = 1\nprint("one")',
    'b = 2\nprint("two")',
    '%%goat --mode bypassPermissions\n[queued] run both cells',
    'print(a + b)',
    'print(a * b)'
  ]);
  await page.evaluate(() => {
    const app = (window as any).jupyterapp;
    const notebook = app.shell.currentWidget.content;
    notebook.deselectAll();
    notebook.activeCellIndex = 3;
    void app.commands.execute('notebook:run-all-below');
  });
  await expectText(outputArea(page, 3), 'Ran both, queued.');
  await expectText(outputArea(page, 5), '2');
  expect(await prompts(page)).toEqual(['[1]:', '[3]:', '[4]:', '[2]:', '[5]:', '[6]:']);
});
