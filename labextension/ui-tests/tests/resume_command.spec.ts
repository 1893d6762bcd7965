/**
 * "List past goat conversations" in a kernel where goat is not loaded yet (issue 33): the cell it
 * inserts loads goat and lists the saved conversations, rather than failing with "magic not found";
 * once goat is loaded, the command inserts a plain `%goat resume`.
 */
import { expect, test } from '@jupyterlab/galata';

import { expectText, liveCells, openNotebook, outputOf, putNotebook, startCell, tagCells } from './goat-helpers';

test.describe.configure({ timeout: 180_000 });

const SETUP = 'import os\nos.environ["GOAT_HOME"] = os.path.abspath("goat-home")  # not ~/.goat\nprint("SET")';

test('the conversations command works in a kernel without goat, then reuses the loaded goat', async ({
  page,
  tmpPath
}) => {
  await putNotebook(page, `${tmpPath}/plain.ipynb`, [{ id: 'setup', cell_type: 'code', source: SETUP }]);
  await openNotebook(page, `${tmpPath}/plain.ipynb`);
  await startCell(page, 'setup');
  await expectText(await outputOf(page, 'setup'), 'SET', 90_000);

  const listed = async (source: string) => {
    await page.evaluate(() => (window as any).jupyterapp.commands.execute('goat:past-conversations'));
    await expect.poll(async () => (await liveCells(page)).map(cell => cell.source), { timeout: 30_000 }).toContain(source);
    await tagCells(page);
    const id = (await liveCells(page)).find(cell => cell.source === source)!.id;
    const output = await outputOf(page, id);
    await expectText(output, 'No saved conversations in this folder yet', 60_000);
    await expect(output).not.toContainText('not found');
    await expect(output).not.toContainText('already loaded');
  };
  await listed('%load_ext goat_jupyter\n%goat resume');
  await listed('%goat resume');
});
