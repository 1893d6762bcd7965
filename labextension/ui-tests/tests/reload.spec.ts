/**
 * Reloading the browser while goat waits for an approval (issue 22, point 12): the reloaded tab
 * shows the prompt again from the kernel's widget state, the click is answered, the rest of the
 * run streams into the cell, and the run's notebook edits reach the reloaded tab's notebook.
 */
import { expect, test } from '@jupyterlab/galata';

import {
  expectButton,
  expectText,
  getContents,
  liveCells,
  openNotebook,
  outputOf,
  putCassette,
  putNotebook,
  setupSource,
  startCell,
  startGoat,
  Turn
} from './goat-helpers';

test.describe.configure({ timeout: 240_000 });

// Node's process (no @types/node in ui-tests); scripts/screenshots sets the folder.
declare const process: { env: Record<string, string | undefined> };
const SHOTS = process.env.GOAT_SCREENSHOTS_DIR;

const TURNS: Turn[] = [
  { match: '[reload]', text: '', tool_calls: [{ name: 'Bash', arguments: { command: 'echo after-reload > reloaded.txt' } }] },
  {
    match: '[reload]',
    text: '',
    tool_calls: [
      {
        name: 'NotebookEdit',
        arguments: {
          notebook_path: 'reload.ipynb',
          new_source: "print('inserted after the reload')",
          cell_type: 'code',
          edit_mode: 'insert'
        }
      }
    ]
  },
  { match: '[reload]', text: 'Both steps done after the reload.' }
];

test('an approval open during a browser reload can still be answered', async ({ page, tmpPath }) => {
  await putCassette(page, `${tmpPath}/reload.json`, TURNS);
  await putNotebook(page, `${tmpPath}/reload.ipynb`, [
    { id: 'setup', cell_type: 'code', source: setupSource('reload.json') },
    { id: 'goat', cell_type: 'code', source: '%%goat\n[reload] Write the file, then add a cell.' }
  ]);
  await openNotebook(page, `${tmpPath}/reload.ipynb`);
  await startGoat(page, 'setup');
  await startCell(page, 'goat');
  await expectButton(await outputOf(page, 'goat'), 'Allow once');

  await page.reload({ waitForIsReady: false }); // "ready" waits for an idle kernel
  // JupyterLab restores the open notebook and reconnects to the same, still busy kernel.
  await expect(page.locator('.jp-NotebookPanel')).toHaveCount(1, { timeout: 60_000 });
  await page.notebook.activate('reload.ipynb');
  await page.evaluate(async () => {
    const panel = (window as any).jupyterapp.shell.currentWidget;
    await panel.sessionContext.ready;
  });
  const goat = await outputOf(page, 'goat');
  const allow = await expectButton(goat, 'Allow once');
  await expect(goat).toContainText('echo after-reload > reloaded.txt');
  if (SHOTS) {
    await goat.screenshot({ path: `${SHOTS}/approval-after-reload.png` });
  }
  expect(await getContents(page, `${tmpPath}/reloaded.txt`)).toBeNull();
  await allow.click();
  await expect(goat).toContainText('Allowed once by');

  // The next approval arrives in the reloaded tab, and the edit lands in its notebook.
  await expect(goat).toContainText('NotebookEdit', { timeout: 60_000 });
  await (await expectButton(goat, 'Allow once')).click();
  await expectText(goat, 'Both steps done after the reload.');
  expect(await getContents(page, `${tmpPath}/reloaded.txt`)).toBe('after-reload\n');
  const cells = await liveCells(page);
  expect(cells.map(cell => cell.source)).toContain("print('inserted after the reload')");
  const ran = cells.find(cell => cell.id === 'goat')!;
  expect(ran.count).not.toBeNull();
  await expect(page.locator('.jp-Cell.jp-mod-selected .jp-InputPrompt, .jp-InputPrompt').filter({ hasText: '[*]' })).toHaveCount(0, { timeout: 30_000 });
});
