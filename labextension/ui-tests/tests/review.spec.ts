/**
 * Reviewing goat's edits on the cells (issue 35): a run in acceptEdits edits two cells, creates one
 * and deletes one; all four wait on the cells with Keep / Undo (and survive a save and a reload);
 * Undo restores an edited cell exactly and says what the kernel still holds from the undone code,
 * Keep (by keyboard) keeps the other edit, Undo of the new cell is refused once the user edited it
 * and removes it once it is goat's text again, Undo of the deletion brings the cell back in place;
 * the saved notebook holds the result and no review metadata; the next %%goat turn's request tells
 * the model what was undone, and its transcript says what was decided.
 */
import { expect, IJupyterLabPageFixture, test } from '@jupyterlab/galata';

import {
  cellById,
  expectButton,
  expectText,
  getContents,
  getRawText,
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

declare const process: { env: Record<string, string | undefined> };
const SHOTS = process.env.GOAT_SCREENSHOTS_DIR;

test.describe.configure({ timeout: 300_000 });

const NB = 'review.ipynb';
const EDIT_A = 'x = 10\nw = x * 2\nprint(w)';
const EDIT_B = 'y = 20  # goat: a rounder number';
const CREATED = 'print(x + y)';
const ORIGINAL_A = 'x = 1\nprint(x)';

function edit(args: Record<string, unknown>) {
  return { name: 'NotebookEdit', arguments: { notebook_path: NB, ...args } };
}

const TURNS: Turn[] = [
  { match: '[review]', text: '', tool_calls: [{ name: 'Read', arguments: { file_path: NB } }] },
  {
    match: '[review]',
    text: '',
    tool_calls: [
      edit({ cell_id: 'a', new_source: EDIT_A, edit_mode: 'replace' }),
      edit({ cell_id: 'b', new_source: EDIT_B, edit_mode: 'replace' }),
      edit({ cell_id: 'b', new_source: CREATED, cell_type: 'code', edit_mode: 'insert' }),
      edit({ cell_id: 'c', new_source: '', edit_mode: 'delete' })
    ]
  },
  { match: '[review]', text: 'I changed cells a and b, added a sum and removed c.' },
  { match: '[after]', text: 'Noted what you undid.' }
];

/** The setup cell, with every request the replay server answers logged to requests.jsonl. */
function setup(): string {
  return setupSource('review.json').replace(
    'from goat_jupyter.replay',
    'os.environ["GOAT_REPLAY_REQUEST_LOG"] = os.path.abspath("requests.jsonl")\nfrom goat_jupyter.replay'
  );
}

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

/** Every cell's full JSON from the live model. */
async function cellJSON(page: IJupyterLabPageFixture): Promise<any[]> {
  return page.evaluate(() => {
    const model = (window as any).jupyterapp.shell.currentWidget.content.model;
    const found = [];
    for (let i = 0; i < model.cells.length; i++) {
      found.push(model.cells.get(i).toJSON());
    }
    return found;
  });
}

async function activeId(page: IJupyterLabPageFixture): Promise<string> {
  return page.evaluate(() => (window as any).jupyterapp.shell.currentWidget.content.activeCell.model.id);
}

async function save(page: IJupyterLabPageFixture): Promise<void> {
  await page.evaluate(() => (window as any).jupyterapp.shell.currentWidget.context.save());
}

async function shot(page: IJupyterLabPageFixture, name: string): Promise<void> {
  const dir = SHOTS ?? test.info().outputDir;
  await page.waitForTimeout(300);
  await page.locator('.jp-NotebookPanel:visible').screenshot({ path: `${dir}/${name}.png` });
}

async function screenshots(page: IJupyterLabPageFixture): Promise<void> {
  // Tall enough for the run's four cells below the %%goat cell's output.
  await page.setViewportSize({ width: 1200, height: 1500 });
  await tagCells(page);
  await cellById(page, 'goat2').scrollIntoViewIfNeeded();
  await shot(page, 'review-light');
  await page.theme.setDarkTheme();
  await shot(page, 'review-dark');
  await page.theme.setLightTheme();
  await page.setViewportSize({ width: 820, height: 1500 });
  await cellById(page, 'goat2').scrollIntoViewIfNeeded();
  await shot(page, 'review-narrow');
  await page.setViewportSize({ width: 1200, height: 1000 });
}

test("Keep / Undo on the cells goat edited, created and deleted; the model hears what was undone", async ({
  page,
  tmpPath
}) => {
  await page.setViewportSize({ width: 1200, height: 1000 });
  await putCassette(page, `${tmpPath}/review.json`, TURNS);
  await putNotebook(page, `${tmpPath}/${NB}`, [
    { id: 'setup', cell_type: 'code', source: setup() },
    { id: 'goat', cell_type: 'code', source: '%%goat --mode acceptEdits\n[review] Tidy cells a, b and c.' },
    { id: 'a', cell_type: 'code', source: ORIGINAL_A },
    { id: 'b', cell_type: 'code', source: 'y = 2' },
    { id: 'c', cell_type: 'markdown', source: '## Old notes\n\nTo be removed.' },
    { id: 'goat2', cell_type: 'code', source: '%%goat\n[after] Go on.' }
  ]);
  await openNotebook(page, `${tmpPath}/${NB}`);
  await page.evaluate(() => (window as any).jupyterapp.shell.collapseLeft());
  await startGoat(page, 'setup');
  // Cell a ran before goat changed it: its output and count are part of what Undo puts back.
  await startCell(page, 'a');
  await expect.poll(async () => (await liveCells(page))[2].outputs.join('')).toContain('1');
  const beforeA = (await cellJSON(page))[2];

  await startCell(page, 'goat');
  await expectText(await outputOf(page, 'goat'), 'removed c.');

  // All four are marked: two edits, the new cell, the deletion's placeholder.
  const cells = await liveCells(page);
  expect(cells.map(cell => cell.id)).toEqual(['setup', 'goat', 'a', 'b', cells[4].id, cells[5].id, 'goat2']);
  const created = cells[4].id;
  const placeholder = cells[5].id;
  expect(cells[4].source).toBe(CREATED);
  expect(cells[5].type).toBe('raw');
  await tagCells(page);
  const kinds = page.locator('.jp-NotebookPanel:visible .goat-review');
  await expect(kinds).toHaveCount(4);
  expect(await kinds.evaluateAll(nodes => nodes.map(node => (node as HTMLElement).dataset.goatReviewKind))).toEqual([
    'edited',
    'edited',
    'created',
    'deleted'
  ]);
  const diffA = cellById(page, 'a').locator('.goat-review-diff');
  await expect(diffA.locator('.goat-diff-del')).toHaveText(['- x = 1', '- print(x)']);
  await expect(diffA.locator('.goat-diff-add')).toHaveText(['+ x = 10', '+ w = x * 2', '+ print(w)']);
  await expect(cellById(page, placeholder).locator('.goat-review-diff')).toContainText('- ## Old notes');
  const bar = cellById(page, 'goat').locator('.goat-review-bar');
  await expect(bar).toContainText('This run changed 4 cells, awaiting your review');
  await screenshots(page);

  // Saved and reloaded, every mark is still there (the state is in the cells' metadata).
  await save(page);
  const saved = await getContents(page, `${tmpPath}/${NB}`);
  expect(saved.cells.filter((cell: any) => cell.metadata.goat_review).length).toBe(4);
  await page.reload({ waitForIsReady: false });
  await expect(page.locator('.jp-NotebookPanel')).toHaveCount(1, { timeout: 60_000 });
  await page.notebook.activate(NB);
  await page.evaluate(async () => {
    const panel = (window as any).jupyterapp.shell.currentWidget;
    await panel.sessionContext.ready;
    await panel.sessionContext.session.kernel.info;
  });
  await tagCells(page);
  await expect(page.locator('.jp-NotebookPanel:visible .goat-review')).toHaveCount(4);

  // The user runs goat's version of cell a, then undoes it: the cell is back exactly, and the
  // cell says the kernel still holds what the undone code bound.
  await startCell(page, 'a');
  await expect.poll(async () => (await liveCells(page))[2].outputs.join('')).toContain('20');
  await tagCells(page);
  await cellById(page, 'a').getByRole('button', { name: 'Undo', exact: true }).click();
  await expect.poll(async () => (await cellJSON(page))[2]).toEqual(beforeA);
  await tagCells(page);
  const note = cellById(page, 'a').locator('.goat-review-note');
  await expect(note).toContainText('the kernel still holds what it bound (`w`, `x`)');
  await expect(bar).toContainText("Undid goat's edit of cell 3");
  // Re-run binds the names from the restored code again; the note goes.
  await note.getByRole('button', { name: 'Re-run', exact: true }).click();
  await expect(note).toHaveCount(0);
  await expect.poll(async () => (await liveCells(page))[2].count).toBeGreaterThan(beforeA.execution_count);
  expect((await liveCells(page))[2].outputs.join('')).toBe('1\n');

  // The user edits goat's version of cell b: Undo is refused with a sentence, the user's text stays.
  await setSource(page, 'b', 'y = 21  # mine');
  await tagCells(page);
  await cellById(page, 'b').getByRole('button', { name: 'Undo', exact: true }).click();
  await expect(cellById(page, 'b').locator('.goat-review-message')).toContainText(
    'Not undone: cell 4 was edited after goat changed it, and Undo would overwrite your text. Your text stays'
  );
  expect((await liveCells(page))[3].source).toBe('y = 21  # mine');
  expect((await cellJSON(page))[3].metadata.goat_review.kind).toBe('edited');
  await setSource(page, 'b', EDIT_B);

  // By keyboard: G J goes to the next cell awaiting review (b), G K keeps its edit.
  await page.evaluate(() => {
    const notebook = (window as any).jupyterapp.shell.currentWidget.content;
    notebook.deselectAll();
    notebook.activeCellIndex = 2;
    notebook.mode = 'command';
    notebook.node.focus();
  });
  await page.keyboard.press('g');
  await page.keyboard.press('j');
  await expect.poll(() => activeId(page)).toBe('b');
  await page.keyboard.press('g');
  await page.keyboard.press('k');
  await expect.poll(async () => (await cellJSON(page))[3].metadata.goat_review).toBeUndefined();
  expect((await liveCells(page))[3].source).toBe(EDIT_B);
  await expect(bar).toContainText("Kept goat's edit of cell 4");

  // The user edits the new cell: Undo is refused with a sentence, the text stays.
  await setSource(page, created, 'print(x * y)  # mine');
  await tagCells(page);
  await cellById(page, created).getByRole('button', { name: 'Undo', exact: true }).click();
  await expect(cellById(page, created).locator('.goat-review-message')).toContainText(
    'Not undone: cell 5 was edited after goat created it'
  );
  expect((await liveCells(page))[4].source).toBe('print(x * y)  # mine');
  // goat's text again: Undo removes the cell.
  await setSource(page, created, CREATED);
  await cellById(page, created).getByRole('button', { name: 'Undo', exact: true }).click();
  await expect.poll(async () => (await liveCells(page)).map(cell => cell.id)).not.toContain(created);

  // Undo of the deletion brings cell c back where it was, as it was.
  await tagCells(page);
  await cellById(page, placeholder).getByRole('button', { name: 'Undo', exact: true }).click();
  await expect
    .poll(async () => (await liveCells(page)).map(cell => cell.id))
    .toEqual(['setup', 'goat', 'a', 'b', 'c', 'goat2']);
  expect((await liveCells(page))[4].source).toBe('## Old notes\n\nTo be removed.');
  await expect(page.locator('.jp-NotebookPanel:visible .goat-review:not(.goat-review-note)')).toHaveCount(0);

  // Saved: the decisions' result, no review metadata left.
  await save(page);
  const final = await getContents(page, `${tmpPath}/${NB}`);
  expect(final.cells.map((cell: any) => cell.id)).toEqual(['setup', 'goat', 'a', 'b', 'c', 'goat2']);
  expect(final.cells.map((cell: any) => (Array.isArray(cell.source) ? cell.source.join('') : cell.source)).slice(2, 5)).toEqual([
    ORIGINAL_A,
    EDIT_B,
    '## Old notes\n\nTo be removed.'
  ]);
  expect(await getRawText(page, `${tmpPath}/${NB}`)).not.toContain('goat_review');

  // The next turn: the transcript says what was decided, the request tells the model.
  await startCell(page, 'goat2');
  const next = await outputOf(page, 'goat2');
  await expectText(next, 'Noted what you undid.');
  await expect(next).toContainText("Your review since the last run: undid goat's edit of cell 3");
  const log = await getRawText(page, `${tmpPath}/requests.jsonl`);
  const last = log.trim().split('\n').pop() ?? '';
  expect(last).toContain('undid your edit of cell 3: it is back as it was before your edit');
  expect(last).toContain('the kernel still holds what the undone code bound: `w`, `x`');
  expect(last).toContain('kept your edit of cell 4');
  expect(last).toContain('undid cell 5, which you created: it is removed');
  expect(last).toContain('undid your deletion of cell 5: the cell is back in place');
});

const APPROVED: Turn[] = [
  { match: '[approved]', text: '', tool_calls: [{ name: 'Read', arguments: { file_path: 'approved.ipynb' } }] },
  {
    match: '[approved]',
    text: '',
    tool_calls: [
      { name: 'NotebookEdit', arguments: { notebook_path: 'approved.ipynb', cell_id: 'a', new_source: 'x = 99' } },
      {
        name: 'NotebookEdit',
        arguments: { notebook_path: 'approved.ipynb', cell_id: 'a', new_source: 'z = 0', cell_type: 'code', edit_mode: 'insert' }
      }
    ]
  },
  { match: '[approved]', text: 'Both edits are in.' }
];

test('in default mode an approved edit still waits for review; Undo all from the %%goat cell; the palette lists the shortcuts', async ({
  page,
  tmpPath
}) => {
  await putCassette(page, `${tmpPath}/approved.json`, APPROVED);
  await putNotebook(page, `${tmpPath}/approved.ipynb`, [
    { id: 'setup', cell_type: 'code', source: setupSource('approved.json') },
    { id: 'goat', cell_type: 'code', source: '%%goat\n[approved] Change a and add z.' },
    { id: 'a', cell_type: 'code', source: 'x = 1' }
  ]);
  await openNotebook(page, `${tmpPath}/approved.ipynb`);
  await startGoat(page, 'setup');
  const original = (await cellJSON(page))[2];
  await startCell(page, 'goat');
  const output = await outputOf(page, 'goat');
  for (let i = 0; i < 2; i++) {
    await (await expectButton(output, 'Allow once')).click();
  }
  await expectText(output, 'Both edits are in.');
  await tagCells(page);
  const bar = cellById(page, 'goat').locator('.goat-review-bar');
  await expect(bar).toContainText('This run changed 2 cells, awaiting your review');
  await bar.getByRole('button', { name: 'Undo all', exact: true }).click();
  await expect.poll(async () => (await cellJSON(page)).map(cell => cell.id)).toEqual(['setup', 'goat', 'a']);
  expect((await cellJSON(page))[2]).toEqual(original);
  await expect(bar).toContainText("Undid goat's edit of cell 3");
  await expect(bar).toContainText('Undid the new cell 4');
  await expect(bar).not.toContainText('awaiting your review');

  const keys = await page.evaluate(() =>
    (window as any).jupyterapp.commands.keyBindings
      .filter((binding: any) => String(binding.command).startsWith('goat:review-'))
      .map((binding: any) => `${binding.command} ${binding.keys.join(' ')}`)
      .sort()
  );
  expect(keys).toEqual([
    'goat:review-keep G K',
    'goat:review-keep-all G Shift K',
    'goat:review-next G J',
    'goat:review-undo G U',
    'goat:review-undo-all G Shift U'
  ]);
  await page.keyboard.press('Control+Shift+C');
  const palette = page.locator('#command-palette');
  await palette.locator('input').fill('goat changes');
  // Listed (greyed out and hidden while nothing awaits review), with its shortcut.
  const item = palette.locator('.lm-CommandPalette-item[data-command="goat:review-undo-all"]');
  await expect(item).toHaveCount(1);
  expect(await item.textContent()).toContain("Undo all of goat's changes");
  await page.keyboard.press('Escape');
});

const DELETED: Turn[] = [
  { match: '[deleted]', text: '', tool_calls: [{ name: 'Read', arguments: { file_path: 'deleted.ipynb' } }] },
  {
    match: '[deleted]',
    text: '',
    tool_calls: [{ name: 'NotebookEdit', arguments: { notebook_path: 'deleted.ipynb', cell_id: 'c', new_source: '', edit_mode: 'delete' } }]
  },
  { match: '[deleted]', text: 'Removed it.' }
];

test('"Revert this run" brings a deleted cell back and its placeholder goes', async ({ page, tmpPath }) => {
  await putCassette(page, `${tmpPath}/deleted.json`, DELETED);
  await putNotebook(page, `${tmpPath}/deleted.ipynb`, [
    { id: 'setup', cell_type: 'code', source: setupSource('deleted.json') },
    { id: 'goat', cell_type: 'code', source: '%%goat --mode acceptEdits\n[deleted] Remove cell c.' },
    { id: 'c', cell_type: 'markdown', source: '# keep me?' },
    { id: 'd', cell_type: 'code', source: 'd = 4' }
  ]);
  await openNotebook(page, `${tmpPath}/deleted.ipynb`);
  await startGoat(page, 'setup');
  await startCell(page, 'goat');
  const output = await outputOf(page, 'goat');
  await expectText(output, 'Removed it.');
  await expect.poll(async () => (await cellJSON(page)).map(cell => cell.cell_type)).toEqual(['code', 'code', 'raw', 'code']);
  await output.getByRole('button', { name: 'Revert this run' }).click(); // its icon adds a space
  await expect
    .poll(async () => (await liveCells(page)).map(cell => `${cell.type}:${cell.source}`))
    .toEqual([expect.stringContaining('code:import os'), expect.stringContaining('code:%%goat'), 'markdown:# keep me?', 'code:d = 4']);
  await tagCells(page);
  await expect(page.locator('.jp-NotebookPanel:visible .goat-review')).toHaveCount(0);
  await expect(cellById(page, 'goat').locator('.goat-review-bar')).toHaveCount(0);
});
