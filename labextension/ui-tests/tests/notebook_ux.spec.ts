/**
 * The notebook as users meet it (issue 33, points 2, 3, 7, 11, 14), on the shipped examples opened
 * the way a fresh JupyterLab opens them: untrusted (written as plain files, never signed here).
 * - A reload during an approval brings the buttons back, with everything the run showed before.
 * - Ask goat about this cell leaves the caret at the end: typed words land after the prompt, which
 *   names the cell as "cell 3".
 * - Stale markers only on cells that read a variable a later run changed; never on %%goat cells nor
 *   on cells goat ran above its own cell.
 * - No Fix with goat / Explain under a user's Stop or goat's "Interrupted" line.
 * - The command palette lists goat's commands with their keys; the Edit menu has them too.
 */
import { expect, IJupyterLabPageFixture, test } from '@jupyterlab/galata';

import {
  cellById,
  expectButton,
  expectText,
  getContents,
  KERNEL_READY_MS,
  liveCells,
  openNotebook,
  outputOf,
  putCassette,
  putNotebook,
  putText,
  setupSource,
  startCell,
  tagCells,
  Turn
} from './goat-helpers';

test.describe.configure({ timeout: 300_000 });

// Node's fs, path and environment at run time (ui-tests has no @types/node).
declare const require: (name: string) => any;
declare const __dirname: string;
declare const process: { env: Record<string, string | undefined> };
const fs = require('fs');
const path = require('path');
const EXAMPLES = path.resolve(__dirname, '..', '..', '..', 'examples');
const SHOTS = process.env.GOAT_SCREENSHOTS_DIR;

/** Copies an example, its cassette and data into the server as plain files: it opens untrusted. */
async function putExample(page: IJupyterLabPageFixture, dir: string, name: string): Promise<void> {
  for (const folder of ['cassettes', 'data']) {
    const response = await page.request.put(`/api/contents/${dir}/${folder}`, { data: { type: 'directory' } });
    expect(response.ok()).toBe(true);
  }
  for (const file of [`${name}.ipynb`, `cassettes/${name}.json`, 'data/sales.csv']) {
    await putText(page, `${dir}/${file}`, fs.readFileSync(path.join(EXAMPLES, file), 'utf-8'));
  }
}

/** No provider key (the cassette plays) and a goat home of the test's own, before the setup cell. */
async function prepareKernel(page: IJupyterLabPageFixture): Promise<void> {
  const printed = await page.evaluate(async () => {
    const panel = (window as any).jupyterapp.shell.currentWidget;
    const code = [
      'import os',
      'from goat_jupyter.replay.offline import PROVIDER_KEYS',
      'for key in PROVIDER_KEYS: os.environ.pop(key, None)',
      'os.environ["GOAT_HOME"] = os.path.abspath("goat-home")',
      'print("PREPARED")'
    ].join('\n');
    const future = panel.sessionContext.session.kernel.requestExecute({ code });
    let text = '';
    future.onIOPub = (msg: any) => (text += msg.content?.text ?? '');
    await future.done;
    return text;
  });
  expect(printed).toContain('PREPARED');
}

/** Whether JupyterLab trusts the cell with `cellId` of the open notebook. */
async function trusted(page: IJupyterLabPageFixture, cellId: string): Promise<boolean> {
  return page.evaluate(id => {
    const model = (window as any).jupyterapp.shell.currentWidget.content.model;
    for (let index = 0; index < model.cells.length; index++) {
      if (model.cells.get(index).id === id) {
        return model.cells.get(index).trusted as boolean;
      }
    }
    throw new Error(`no cell ${id}`);
  }, cellId);
}

async function interruptKernel(page: IJupyterLabPageFixture): Promise<void> {
  const kernelId = await page.evaluate(
    () => (window as any).jupyterapp.shell.currentWidget.sessionContext.session.kernel.id
  );
  const response = await page.request.post(`/api/kernels/${kernelId}/interrupt`);
  expect(response.ok()).toBe(true);
}

async function selectCell(page: IJupyterLabPageFixture, cellId: string): Promise<void> {
  await page.evaluate(id => {
    const notebook = (window as any).jupyterapp.shell.currentWidget.content;
    notebook.deselectAll();
    notebook.activeCellIndex = notebook.widgets.findIndex((cell: any) => cell.model.id === id);
    notebook.mode = 'command';
    notebook.node.focus();
  }, cellId);
}

test('a reload during an approval in an untrusted example keeps the buttons and the run so far', async ({
  page,
  tmpPath
}) => {
  await putExample(page, tmpPath, 'teaching_demo');
  await openNotebook(page, `${tmpPath}/teaching_demo.ipynb`);
  expect(await trusted(page, 'plan')).toBe(false); // as a fresh JupyterLab opens the shipped example
  await prepareKernel(page);
  await startCell(page, 'setup');
  await expectText(await outputOf(page, 'setup'), 'replaying the recorded session', KERNEL_READY_MS);
  await startCell(page, 'plan');
  let plan = await outputOf(page, 'plan');
  await expectButton(plan, 'Approve');
  const before = await plan.innerText();
  expect(before).toContain('goat · model');

  await page.reload({ waitForIsReady: false });
  await expect(page.locator('.jp-NotebookPanel')).toHaveCount(1, { timeout: 60_000 });
  await page.notebook.activate('teaching_demo.ipynb');
  await page.evaluate(async () => {
    await (window as any).jupyterapp.shell.currentWidget.sessionContext.ready;
  });
  plan = await outputOf(page, 'plan');
  const approve = await expectButton(plan, 'Approve');
  // Everything the run showed before the reload is there again, above the prompt.
  await expect(plan).toContainText('goat · model');
  const shown = await plan.innerText();
  expect(shown.indexOf('goat · model')).toBeLessThan(shown.indexOf('Approve'));
  expect(await trusted(page, 'intro')).toBe(false); // the rest of the notebook stays untrusted
  if (SHOTS) {
    await plan.screenshot({ path: `${SHOTS}/approval-after-reload-untrusted.png` });
  }
  await approve.click();
  await expect(plan).toContainText('Plan approved by the user');
  await (await expectButton(plan, 'Allow for session')).click();
  await expectText(plan, 'East is ahead by about 50k');

  // The saved cell keeps the whole audit trail: header, the plan's prompt record, the rest.
  await page.evaluate(() => (window as any).jupyterapp.commands.execute('docmanager:save'));
  const saved = await getContents(page, `${tmpPath}/teaching_demo.ipynb`);
  const cell = saved.cells.find((c: any) => c.id === 'plan');
  const text = JSON.stringify(cell.outputs);
  expect(text).toContain('goat · model');
  expect(text).toContain('Plan approved by the user');
  expect(text.indexOf('goat · model')).toBeLessThan(text.indexOf('Plan approved by the user'));
});

test('Ask goat about this cell: the typed question lands after the prompt, which says "cell 3"', async ({
  page,
  tmpPath
}) => {
  await putExample(page, tmpPath, 'dataframe_agent');
  await openNotebook(page, `${tmpPath}/dataframe_agent.ipynb`);
  await selectCell(page, 'load');
  await page.keyboard.press('g');
  await page.keyboard.press('a');
  await expect.poll(async () => (await liveCells(page)).length, { timeout: 30_000 }).toBe(6);
  await page.keyboard.type('why parse_dates?');
  const cells = await liveCells(page);
  const asked = cells[cells.findIndex(cell => cell.id === 'load') + 1];
  expect(asked.source).toBe('%%goat\nAbout cell 3, the cell just above this one: why parse_dates?');
  if (SHOTS) {
    await tagCells(page);
    await cellById(page, asked.id).screenshot({ path: `${SHOTS}/ask-about-cell.png` });
  }
});

const STALE_TURNS: Turn[] = [
  { match: '[rerun]', text: '', tool_calls: [{ name: 'RunCell', arguments: { cell_id: 'cell-2' } }] },
  { match: '[rerun]', text: 'Ran cell 3 again.' }
];

/** Types `source` into a new code cell at the end, as a user does, and runs it. */
async function typeCell(page: IJupyterLabPageFixture, source: string): Promise<void> {
  await page.evaluate(() => {
    const notebook = (window as any).jupyterapp.shell.currentWidget.content;
    notebook.activeCellIndex = notebook.widgets.length - 1;
    notebook.mode = 'command';
  });
  await page.keyboard.press('b');
  await page.keyboard.press('Enter');
  await page.keyboard.type(source);
  await page.keyboard.press('Escape');
}

function marker(page: IJupyterLabPageFixture, index: number) {
  return page.locator('.jp-NotebookPanel:visible .jp-Notebook .jp-Cell').nth(index).locator(':scope > .goat-stale');
}

async function runAt(page: IJupyterLabPageFixture, index: number): Promise<void> {
  await page.notebook.runCell(index, { inplace: true });
}

test('stale markers: only cells that read a variable a later run changed', async ({ page, tmpPath }) => {
  await putCassette(page, `${tmpPath}/stale.json`, STALE_TURNS);
  const setup = setupSource('stale.json').replace('"default"', '"bypassPermissions"');
  await putNotebook(page, `${tmpPath}/stale.ipynb`, [{ id: 'setup', cell_type: 'code', source: setup }]);
  await openNotebook(page, `${tmpPath}/stale.ipynb`);
  await typeCell(page, 'import pandas as pd\nsales = pd.DataFrame({"revenue": [1.0, 2.0]})');
  await typeCell(page, 'total = sales["revenue"].sum()\nprint(f"{total:.2f}")');
  await typeCell(page, 'label = "unrelated"');
  await typeCell(page, '%%goat\n[rerun] Run cell 3 again.');
  for (const index of [0, 1, 2, 3]) {
    await runAt(page, index);
  }
  await expect(page.locator('.jp-NotebookPanel:visible .jp-Cell').nth(0)).toContainText('GOAT READY');
  await page.notebook.runCell(4, { inplace: true });
  await expect(page.locator('.jp-NotebookPanel:visible .jp-Cell').nth(4)).toContainText('Ran cell 3 again.', {
    timeout: 120_000
  });
  // goat ran cell 3 after its own %%goat cell: neither is marked, nor is anything else.
  await expect(page.locator('.jp-NotebookPanel:visible .goat-stale')).toHaveCount(0);

  // Changing `sales` in place (a subscript write) after cell 3 read it: cell 3 is stale, cell 4 is not.
  await typeCell(page, 'sales["revenue"] = sales["revenue"] * 2');
  await runAt(page, 5);
  await expect(marker(page, 2)).toHaveText('stale');
  await expect(marker(page, 2)).toHaveAttribute('title', /uses sales, which cell 6 changed after this cell ran/);
  await expect(marker(page, 3)).toHaveCount(0);
  await expect(marker(page, 4)).toHaveCount(0);
  await expect(marker(page, 1)).toHaveCount(0);
  if (SHOTS) {
    await page.screenshot({ path: `${SHOTS}/stale-marker.png` });
    await page.theme.setDarkTheme();
    await page.setViewportSize({ width: 560, height: 700 });
    await marker(page, 2).scrollIntoViewIfNeeded();
    await page.screenshot({ path: `${SHOTS}/stale-marker-dark-narrow.png` });
    await page.setViewportSize({ width: 1024, height: 768 });
    await page.theme.setLightTheme();
  }
  // The marker sits in the gutter: clear of the active cell's toolbar buttons.
  await page.evaluate(() => {
    const notebook = (window as any).jupyterapp.shell.currentWidget.content;
    notebook.activeCellIndex = 2;
  });
  const toolbar = page.locator('.jp-NotebookPanel:visible .jp-Cell').nth(2).locator('.jp-cell-toolbar');
  await expect(toolbar).toBeVisible();
  const [mark, bar] = [await marker(page, 2).boundingBox(), await toolbar.boundingBox()];
  expect(mark!.x + mark!.width).toBeLessThan(bar!.x);

  await runAt(page, 2); // re-run it: in line again
  await expect(marker(page, 2)).toHaveCount(0);
});

test('no Fix with goat or Explain under a Stop, the user\'s or goat\'s', async ({ page, tmpPath }) => {
  await putExample(page, tmpPath, 'teaching_demo');
  await openNotebook(page, `${tmpPath}/teaching_demo.ipynb`);
  await prepareKernel(page);
  await startCell(page, 'setup');
  await expectText(await outputOf(page, 'setup'), 'replaying the recorded session', KERNEL_READY_MS);
  await startCell(page, 'plan');
  const plan = await outputOf(page, 'plan');
  await expectButton(plan, 'Approve');
  await interruptKernel(page);
  await expect(plan).toContainText('Interrupted by the user', { timeout: 60_000 });
  await tagCells(page);

  // The user's own Stop of a cell that sleeps: a KeyboardInterrupt, nothing to fix.
  await page.evaluate(() => {
    const model = (window as any).jupyterapp.shell.currentWidget.content.model;
    model.sharedModel.getCell(model.cells.length - 1).setSource('import time\ntime.sleep(120)');
  });
  await startCell(page, 'show');
  await expect(page.locator('.jp-NotebookPanel:visible .jp-InputPrompt').filter({ hasText: '[*]' })).toHaveCount(1);
  await page.waitForTimeout(500);
  await interruptKernel(page);
  const show = cellById(page, 'show');
  await expect(show.locator('.jp-OutputArea')).toContainText('KeyboardInterrupt', { timeout: 60_000 });
  await page.waitForTimeout(500); // the buttons would be added on the output change
  for (const cell of [cellById(page, 'plan'), show]) {
    await expect(cell.getByRole('button', { name: 'Fix with goat' })).toHaveCount(0);
    await expect(cell.getByRole('button', { name: 'Explain', exact: true })).toHaveCount(0);
  }
  // A real error still gets them.
  await page.evaluate(() => {
    const model = (window as any).jupyterapp.shell.currentWidget.content.model;
    model.sharedModel.getCell(model.cells.length - 1).setSource('1 + "1"');
  });
  await startCell(page, 'show');
  await expect(show.getByRole('button', { name: 'Fix with goat' })).toBeVisible({ timeout: 60_000 });
});

test('the command palette lists goat\'s commands with their keys, and the Edit menu has them', async ({
  page,
  tmpPath
}) => {
  await putExample(page, tmpPath, 'dataframe_agent');
  await openNotebook(page, `${tmpPath}/dataframe_agent.ipynb`);
  await selectCell(page, 'load');
  await page.keyboard.press('Control+Shift+c');
  const palette = page.locator('#command-palette');
  await palette.locator('input').fill('goat');
  const items = palette.locator('.lm-CommandPalette-item');
  const row = (label: string) => items.filter({ has: page.locator('.lm-CommandPalette-itemLabel', { hasText: label }) });
  for (const [label, keys] of [
    ['Fix with goat', 'G, F'],
    ['Explain with goat', 'G, E'],
    ['Ask goat about this cell', 'G, A'],
    ['Lock for goat', 'G, L']
  ]) {
    await expect(row(label)).toHaveCount(1);
    await expect(row(label).locator('.lm-CommandPalette-itemShortcut')).toHaveText(keys);
  }
  await expect(row('List past goat conversations')).toHaveCount(1);
  if (SHOTS) {
    await page.screenshot({ path: `${SHOTS}/command-palette.png` });
  }
  await page.keyboard.press('Escape');

  // The palette's entry lists the saved conversations in a cell below.
  await page.menu.open('Edit');
  await page.locator('.lm-Menu-itemLabel', { hasText: /^goat$/ }).hover();
  await expect(page.locator('.lm-Menu-itemLabel', { hasText: 'Ask goat about this cell' })).toBeVisible();
  await page.locator('.lm-Menu-itemLabel', { hasText: 'List past goat conversations' }).click();
  // Goat is not loaded in this kernel yet: the cell loads it first (resume_command.spec.ts).
  await expect
    .poll(async () => (await liveCells(page)).map(cell => cell.source))
    .toContain('%load_ext goat_jupyter\n%goat resume');
});
