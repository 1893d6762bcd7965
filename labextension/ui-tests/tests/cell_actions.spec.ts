/**
 * goat's cell actions in a real JupyterLab (issue 24): "Fix with goat" under an error output
 * inserts a %%goat cell below the failing cell whose first request names that cell ("cell 2"), and runs it;
 * "Lock for goat" in the cell toolbar (and G L on the keyboard) sets the goat:locked tag and
 * shows a marker; the cell-actions setting turns the buttons off.
 */
import { expect, galata, IJupyterLabPageFixture, test } from '@jupyterlab/galata';

import {
  cellById,
  expectText,
  liveCells,
  openNotebook,
  outputOf,
  putCassette,
  putNotebook,
  setupSource,
  startCell,
  startGoat,
  tagCells,
  Turn
} from './goat-helpers';

test.describe.configure({ timeout: 180_000 });

// Node's process (no @types/node in ui-tests). GOAT_SHOTS=DIR saves screenshots to look at.
declare const process: { env: Record<string, string | undefined> };
const SHOTS = process.env.GOAT_SHOTS;

const FAILING = 'total = 0\nvalues = [1, 2, "3"]\nfor value in values:\n    total += value';

/** Only a prompt that names the failing cell as goat's transcript does (cell 2) gets this answer. */
const TURNS: Turn[] = [
  { match: 'Fix the error in cell 2, the cell just above this one (TypeError', text: 'Reading cell 2 and its traceback first.' },
  { match: 'Explain the error in cell 2, the cell just above this one', text: 'It adds a string to a number.' }
];

async function liveTags(page: IJupyterLabPageFixture, cellId: string): Promise<string[]> {
  return page.evaluate(id => {
    const model = (window as any).jupyterapp.shell.currentWidget.content.model;
    for (let index = 0; index < model.cells.length; index++) {
      const cell = model.cells.get(index);
      if (cell.id === id) {
        return (cell.getMetadata('tags') as string[] | undefined) ?? [];
      }
    }
    throw new Error(`no cell ${id}`);
  }, cellId);
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

test('Fix with goat inserts and runs a %%goat cell below that names the failing cell', async ({
  page,
  tmpPath
}) => {
  await putCassette(page, `${tmpPath}/fix.json`, TURNS);
  await putNotebook(page, `${tmpPath}/fix.ipynb`, [
    { id: 'setup', cell_type: 'code', source: setupSource('fix.json') },
    { id: 'failing', cell_type: 'code', source: FAILING },
    { id: 'after', cell_type: 'code', source: 'print("after")' }
  ]);
  await openNotebook(page, `${tmpPath}/fix.ipynb`);
  await startGoat(page, 'setup');
  await startCell(page, 'failing');
  await tagCells(page);
  const failing = cellById(page, 'failing');
  await expect(failing.locator('.jp-OutputArea')).toContainText('TypeError', { timeout: 60_000 });
  const fix = failing.getByRole('button', { name: 'Fix with goat', exact: true });
  await expect(fix).toBeVisible({ timeout: 60_000 });
  await expect(failing.getByRole('button', { name: 'Explain', exact: true })).toBeVisible();
  if (SHOTS) {
    await page.screenshot({ path: `${SHOTS}/fix-with-goat.png` });
    await page.theme.setDarkTheme();
    await page.setViewportSize({ width: 560, height: 700 });
    await page.screenshot({ path: `${SHOTS}/fix-with-goat-dark-narrow.png` });
    await page.setViewportSize({ width: 1024, height: 768 });
    await page.theme.setLightTheme();
  }

  await fix.click();
  await expect
    .poll(async () => (await liveCells(page)).map(cell => cell.id).indexOf('failing'))
    .toBeGreaterThan(0);
  await expect.poll(async () => (await liveCells(page)).length, { timeout: 30_000 }).toBe(4);
  const cells = await liveCells(page);
  const at = cells.findIndex(cell => cell.id === 'failing');
  const inserted = cells[at + 1];
  expect(inserted.source).toMatch(/^%%goat\nFix the error in cell 2, the cell just above this one \(TypeError: /);
  expect(inserted.source).not.toContain('Traceback');
  expect(cells[at + 2].id).toBe('after');
  await tagCells(page);
  await expectText(await outputOf(page, inserted.id), 'Reading cell 2 and its traceback first.');
});

test('Lock for goat: the toolbar toggle and G L set the tag and the marker', async ({ page, tmpPath }) => {
  await putNotebook(page, `${tmpPath}/lock.ipynb`, [
    { id: 'train', cell_type: 'code', source: 'model_fit = "a long training job"' },
    { id: 'other', cell_type: 'code', source: 'x = 1' }
  ]);
  await openNotebook(page, `${tmpPath}/lock.ipynb`);
  await tagCells(page);
  await selectCell(page, 'train');
  const train = cellById(page, 'train');
  const toggle = train.locator('.jp-cell-toolbar [data-command="goat:toggle-lock"]');
  await expect(toggle).toBeVisible({ timeout: 30_000 });
  await toggle.click();
  await expect.poll(() => liveTags(page, 'train')).toEqual(['goat:locked']);
  await expect(train).toHaveClass(/goat-locked/);
  await expect(cellById(page, 'other')).not.toHaveClass(/goat-locked/);
  if (SHOTS) {
    await page.screenshot({ path: `${SHOTS}/locked-cell.png` });
  }

  await selectCell(page, 'train');
  await page.keyboard.press('g');
  await page.keyboard.press('l');
  await expect.poll(() => liveTags(page, 'train')).toEqual([]);
  await expect(train).not.toHaveClass(/goat-locked/);
});

test('Explain from the keyboard (G E)', async ({ page, tmpPath }) => {
  await putCassette(page, `${tmpPath}/explain.json`, TURNS);
  await putNotebook(page, `${tmpPath}/explain.ipynb`, [
    { id: 'setup', cell_type: 'code', source: setupSource('explain.json') },
    { id: 'failing', cell_type: 'code', source: FAILING }
  ]);
  await openNotebook(page, `${tmpPath}/explain.ipynb`);
  await startGoat(page, 'setup');
  await startCell(page, 'failing');
  const failing = cellById(page, 'failing');
  await expect(failing.getByRole('button', { name: 'Explain', exact: true })).toBeVisible({ timeout: 60_000 });
  await selectCell(page, 'failing');
  await page.keyboard.press('g');
  await page.keyboard.press('e');
  await expect.poll(async () => (await liveCells(page)).length, { timeout: 30_000 }).toBe(3);
  const inserted = (await liveCells(page))[2];
  expect(inserted.source).toMatch(/^%%goat\nExplain the error in cell 2, the cell just above this one/);
  await tagCells(page);
  await expectText(await outputOf(page, inserted.id), 'It adds a string to a number.');
});

test.describe('with the cell-actions setting off', () => {
  test.use({
    mockSettings: { ...galata.DEFAULT_SETTINGS, 'goat-jupyter:cell-actions': { enabled: false } }
  });

  test('no buttons under an error, none in the cell toolbar', async ({ page, tmpPath }) => {
    await putNotebook(page, `${tmpPath}/off.ipynb`, [{ id: 'failing', cell_type: 'code', source: FAILING }]);
    await openNotebook(page, `${tmpPath}/off.ipynb`);
    await startCell(page, 'failing');
    await tagCells(page);
    const failing = cellById(page, 'failing');
    await expect(failing.locator('.jp-OutputArea')).toContainText('TypeError', { timeout: 60_000 });
    await selectCell(page, 'failing');
    await expect(failing.locator('.jp-cell-toolbar')).toBeVisible();
    await expect(failing.getByRole('button', { name: 'Fix with goat' })).toHaveCount(0);
    await expect(failing.locator('[data-command="goat:toggle-lock"]')).toBeHidden();
  });
});
