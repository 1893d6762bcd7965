/**
 * "Revert this run" and kernel variables, as the review met them (issue 33 point 5): the agent's
 * RunCell doubles a DataFrame's column and changes a total; the user merely looks at both; Revert
 * restores both (a read is not a change) and says so. When the user really changed the DataFrame
 * after the run, the record's headline says "Partly reverted" and names it. The notebook is written
 * by a tool (so it opens untrusted, as a fresh JupyterLab opens it) and the user types the cells.
 */
import { expect, IJupyterLabPageFixture, test } from '@jupyterlab/galata';
import { Locator } from '@playwright/test';

import {
  expectText,
  GOAT_RUN_MS,
  openNotebook,
  putCassette,
  putNotebook,
  setupSource,
  Turn
} from './goat-helpers';

test.describe.configure({ timeout: 420_000 });

declare const process: { env: Record<string, string | undefined> };
const SHOTS = process.env.GOAT_SCREENSHOTS_DIR;

const DOUBLE_CELL = 2; // 0-based: setup, data, the cell the agent runs, the %%goat cell
const TURNS: Turn[] = ['[read-then-revert]', '[write-then-revert]'].flatMap(match => [
  { match, text: '', tool_calls: [{ name: 'RunCell', arguments: { cell_id: `cell-${DOUBLE_CELL}` } }] },
  { match, text: 'Doubled the revenue.' }
]);

/** Types `source` into a new code cell at the end, as a user does (B, Enter, typing, Escape). */
async function typeCell(page: IJupyterLabPageFixture, source: string): Promise<void> {
  await page.evaluate(() => {
    const notebook = (window as any).jupyterapp.shell.currentWidget.content;
    notebook.activeCellIndex = notebook.widgets.length - 1;
    notebook.mode = 'command';
    notebook.activate(); // the keys go to the notebook, wherever the last click left the focus
  });
  await page.keyboard.press('b');
  await page.keyboard.press('Enter');
  await page.keyboard.type(source);
  await page.keyboard.press('Escape');
}

function cellAt(page: IJupyterLabPageFixture, index: number): Locator {
  return page.locator('.jp-NotebookPanel:visible .jp-Notebook .jp-Cell').nth(index);
}

/** Selects the cell at `index` and presses Ctrl+Enter, as a user runs it in place (Shift+Enter on the
 * last cell would add an empty one below); waits until its output shows `shows`. */
async function runTyped(page: IJupyterLabPageFixture, index: number, shows: string): Promise<Locator> {
  await cellAt(page, index).locator('.jp-InputArea-prompt').click();
  await page.keyboard.press('Control+Enter');
  const output = cellAt(page, index).locator('.jp-OutputArea');
  await expectText(output, shows, GOAT_RUN_MS);
  return output;
}

/** A notebook with the setup cell; the user types the data, the agent's cell and the prompt, and runs
 * the %%goat cell: `sales` and `total` are doubled by the agent. Returns the %%goat cell's output. */
async function doubledByTheAgent(page: IJupyterLabPageFixture, tmpPath: string, match: string): Promise<Locator> {
  await putCassette(page, `${tmpPath}/revert.json`, TURNS);
  const setup = setupSource('revert.json').replace('"default"', '"bypassPermissions"');
  await putNotebook(page, `${tmpPath}/revert.ipynb`, [{ id: 'setup', cell_type: 'code', source: setup }]);
  await openNotebook(page, `${tmpPath}/revert.ipynb`);
  await typeCell(page, 'import pandas as pd\nsales = pd.DataFrame({"revenue": [10.0, 20.0, 30.0]})\ntotal = float(sales["revenue"].sum())\nprint("DATA", total)');
  await typeCell(page, 'sales["revenue"] = sales["revenue"] * 2\ntotal = float(sales["revenue"].sum())');
  await typeCell(page, `%%goat\n${match} Double the revenue.`);
  await runTyped(page, 0, 'GOAT READY');
  await runTyped(page, 1, 'DATA 60.0');
  const goat = await runTyped(page, 3, 'Doubled the revenue.');
  return goat;
}

/** Clicks "Revert this run" (its icon adds a space to its name); the record takes the button's place. */
async function revert(goat: Locator): Promise<void> {
  const button = goat.getByRole('button', { name: 'Revert this run' });
  await expect(button).toBeVisible({ timeout: GOAT_RUN_MS });
  await button.click();
  await expect(button).toHaveCount(0, { timeout: GOAT_RUN_MS });
}

test('a DataFrame the user only looked at after the run is restored, and the record says all was', async ({
  page,
  tmpPath
}) => {
  const goat = await doubledByTheAgent(page, tmpPath, '[read-then-revert]');
  await typeCell(page, 'print(total, sales["revenue"].sum())');
  await runTyped(page, 4, '120.0 120.0');

  await revert(goat);
  await expectText(goat, 'Reverted %%goat run 1');
  await goat.getByText('what was reverted').click();
  await expect(goat).not.toContainText('Partly');
  await expect(goat).not.toContainText('left as is');
  await expect(goat).toContainText(/restored `?sales`?/);
  await expect(goat).toContainText(/restored `?total`?/);
  if (SHOTS) {
    await goat.screenshot({ path: `${SHOTS}/revert-vars-restored-light.png` });
  }

  await typeCell(page, 'print("SUM", sales["revenue"].sum(), "TOTAL", total)');
  await runTyped(page, 5, 'SUM 60.0 TOTAL 60.0');
});

test('a DataFrame the user changed after the run is left, and the headline says Partly reverted', async ({
  page,
  tmpPath
}) => {
  const goat = await doubledByTheAgent(page, tmpPath, '[write-then-revert]');
  await typeCell(page, 'sales.loc[0, "revenue"] = 1.0\nprint("EDITED", sales["revenue"].sum())');
  await runTyped(page, 4, 'EDITED 101.0');

  await revert(goat);
  await expectText(goat, 'Partly reverted %%goat run 1');
  await goat.getByText('what was reverted').click();
  await expect(goat).toContainText('1 left as is');
  await expect(goat).toContainText(/`?sales`?: changed after the run by code you ran, left as is/);
  await expect(goat).toContainText(/restored `?total`?/);
  if (SHOTS) {
    await goat.screenshot({ path: `${SHOTS}/revert-vars-partly-light.png` });
  }

  await typeCell(page, 'print("SUM", sales["revenue"].sum(), "TOTAL", total)');
  await runTyped(page, 5, 'SUM 101.0 TOTAL 60.0');
});
