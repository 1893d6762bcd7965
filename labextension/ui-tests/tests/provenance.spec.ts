/**
 * Provenance you can follow (issue 25): a cell goat inserted wears a badge naming the model and the
 * `%%goat` prompt it came from, and "edited by you since" once the user changes it; clicking the
 * badge scrolls to that `%%goat` cell, and the `%%goat` cell's footer links scroll to the cell.
 */
import { expect, IJupyterLabPageFixture, test } from '@jupyterlab/galata';

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

const PROMPT = '[prov] Add an exercise at the end.';
const EXERCISE = '# TODO(you): compute the mean of xs';
const FILLERS = Array.from({ length: 25 }, (_, i) => ({
  id: `filler${i}`,
  cell_type: 'markdown' as const,
  source: `## Part ${i}\n\nSome reading.\n\n- one\n- two\n- three`
}));

const TURNS: Turn[] = [
  { match: '[prov]', text: '', tool_calls: [{ name: 'Read', arguments: { file_path: 'prov.ipynb' } }] },
  {
    match: '[prov]',
    text: '',
    tool_calls: [
      {
        name: 'NotebookEdit',
        arguments: {
          notebook_path: 'prov.ipynb',
          cell_id: 'last',
          new_source: EXERCISE,
          cell_type: 'code',
          edit_mode: 'insert'
        }
      }
    ]
  },
  { match: '[prov]', text: 'I added an exercise at the end.' }
];

async function setSource(page: IJupyterLabPageFixture, cellId: string, source: string): Promise<void> {
  await page.evaluate(
    ([id, code]) => {
      const model = (window as any).jupyterapp.shell.currentWidget.content.model;
      for (let i = 0; i < model.cells.length; i++) {
        if (model.cells.get(i).id === id) {
          model.cells.get(i).sharedModel.setSource(code);
        }
      }
    },
    [cellId, source] as [string, string]
  );
}

async function activeCellId(page: IJupyterLabPageFixture): Promise<string> {
  return page.evaluate(() => (window as any).jupyterapp.shell.currentWidget.content.activeCell.model.id);
}

test('the badge names the prompt, says "edited by you since", and links both ways', async ({
  page,
  tmpPath
}) => {
  await putCassette(page, `${tmpPath}/prov.json`, TURNS);
  await putNotebook(page, `${tmpPath}/prov.ipynb`, [
    { id: 'setup', cell_type: 'code', source: setupSource('prov.json') },
    { id: 'goat', cell_type: 'code', source: `%%goat --mode acceptEdits\n${PROMPT}` },
    ...FILLERS,
    { id: 'last', cell_type: 'code', source: 'xs = [1, 2, 3]' }
  ]);
  await openNotebook(page, `${tmpPath}/prov.ipynb`);
  await startGoat(page, 'setup');
  await startCell(page, 'goat');
  const output = await outputOf(page, 'goat');
  await expectText(output, 'I added an exercise at the end.');

  const cells = await liveCells(page);
  const inserted = cells[cells.length - 1];
  expect(inserted.source).toBe(EXERCISE);
  expect(inserted.goat).toMatchObject({ model: 'openai/replay', cell: 'goat', prompt: PROMPT });
  await tagCells(page);
  const badge = cellById(page, inserted.id).locator(':scope > .goat-badge');
  await expect(badge).toHaveAttribute('title', new RegExp(`prompt “${PROMPT.replace(/[.[\]]/g, '\\$&')}”`));
  await expect(badge).not.toHaveAttribute('title', /edited by you since/);
  await expect(badge).not.toContainText('edited by you since');

  // The footer's link scrolls down to the inserted cell.
  const link = output.locator(`a[data-goat-cell="${inserted.id}"]`);
  await expect(link).toHaveText(`cell ${cells.length}`);
  await expect(cellById(page, inserted.id)).not.toBeInViewport();
  await link.click();
  await expect(cellById(page, inserted.id)).toBeInViewport();
  expect(await activeCellId(page)).toBe(inserted.id);

  // The badge sits clear of the cell toolbar (whose delete button it used to cover).
  const toolbar = cellById(page, inserted.id).locator('.jp-cell-toolbar');
  if (await toolbar.count()) {
    const [a, b] = [await badge.boundingBox(), await toolbar.first().boundingBox()];
    if (a && b) {
      const apart = a.x + a.width <= b.x || b.x + b.width <= a.x || a.y + a.height <= b.y || b.y + b.height <= a.y;
      expect(apart).toBe(true);
    }
  }

  // The user edits the exercise: the badge says so; undoing the edit takes it back.
  await setSource(page, inserted.id, 'print(sum(xs) / len(xs))');
  await expect(badge).toContainText('edited by you since');
  await expect(badge).toHaveAttribute('title', /edited by you since/);
  await setSource(page, inserted.id, EXERCISE);
  await expect(badge).not.toContainText('edited by you since');
  await setSource(page, inserted.id, 'print(sum(xs) / len(xs))');
  await expect(badge).toContainText('edited by you since');

  // Clicking the badge scrolls up to the %%goat cell it came from.
  await expect(cellById(page, 'goat')).not.toBeInViewport();
  await badge.click();
  await expect(cellById(page, 'goat')).toBeInViewport();
  expect(await activeCellId(page)).toBe('goat');
});
