/**
 * Issue 35, point 2 (default mode): a NotebookEdit approval is shown at its cell, far down a long
 * notebook. The notebook scrolls the target into view and highlights it, with the diff (edit), the
 * struck-through cell (delete) or the new source where it will go (insert); Deny removes all that and
 * leaves the notebook as it was, Allow applies the change; a reload while it waits draws it again;
 * stopping the run or restarting the kernel clears it and unlocks the cell.
 */
import { expect, IJupyterLabPageFixture, test } from '@jupyterlab/galata';
import { Locator } from '@playwright/test';

import {
  cellById,
  expectButton,
  expectText,
  ICellSpec,
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

test.describe.configure({ timeout: 300_000 });

declare const process: { env: Record<string, string | undefined> };
const SHOTS = process.env.GOAT_SCREENSHOTS_DIR;

const NB = 'marks.ipynb';
const FILLERS = 40;
const TAG = '[marks]';
const edit = (args: Record<string, unknown>): Turn => ({
  match: TAG,
  text: '',
  tool_calls: [{ name: 'NotebookEdit', arguments: { notebook_path: NB, ...args } }]
});
const EDIT = edit({ cell_id: 'c36', new_source: 'x36 = 3600  # scaled\nprint(x36)' });
const INSERT = edit({ cell_id: 'c30', new_source: "summary = 'inserted by goat'", cell_type: 'code', edit_mode: 'insert' });
const DELETE = edit({ cell_id: 'c33', new_source: '', edit_mode: 'delete' });
const TURNS: Turn[] = [
  { match: TAG, text: '', tool_calls: [{ name: 'Read', arguments: { file_path: NB } }] },
  EDIT,
  INSERT,
  DELETE,
  EDIT,
  INSERT,
  DELETE,
  { match: TAG, text: 'The three cell changes are done.' }
];

const TARGET = /goat-approval-target/;

async function longNotebook(page: IJupyterLabPageFixture, tmpPath: string): Promise<void> {
  const cells: ICellSpec[] = [
    { id: 'setup', cell_type: 'code', source: setupSource('marks.json') },
    { id: 'goat', cell_type: 'code', source: `%%goat\n${TAG} Tidy the cells at the end.` }
  ];
  for (let i = 0; i < FILLERS; i++) {
    cells.push({ id: `c${i}`, cell_type: 'code', source: `x${i} = ${i}` });
  }
  await putCassette(page, `${tmpPath}/marks.json`, TURNS);
  await putNotebook(page, `${tmpPath}/${NB}`, cells);
  await openNotebook(page, `${tmpPath}/${NB}`);
  await startGoat(page, 'setup');
  await startCell(page, 'goat');
}

/** The cell with `id`, once the approval's mark is drawn on it (scrolled into view, highlighted). */
async function marked(page: IJupyterLabPageFixture, id: string): Promise<Locator> {
  await expectButton(await outputOf(page, 'goat'), 'Deny');
  await tagCells(page);
  const cell = cellById(page, id);
  await expect(cell).toHaveClass(TARGET, { timeout: 30_000 });
  await expect(cell).toHaveClass(/goat-highlight/);
  await expect(cell).toBeInViewport();
  return cell;
}

/** Answers the open approval from the keyboard: focus on the button, Enter. */
async function answer(page: IJupyterLabPageFixture, choice: 'Allow once' | 'Deny'): Promise<void> {
  const goat = await outputOf(page, 'goat');
  const button = await expectButton(goat, choice);
  await button.focus();
  await page.keyboard.press('Enter');
  await expect(goat).toContainText(choice === 'Deny' ? 'Denied by' : 'Allowed once by');
}

async function source(page: IJupyterLabPageFixture, id: string): Promise<string | undefined> {
  return (await liveCells(page)).find(cell => cell.id === id)?.source;
}

/** The notebook at 820 px around `shown`, light then dark (a theme change moves the scroll: back to it). */
async function shots(page: IJupyterLabPageFixture, name: string, shown: Locator): Promise<void> {
  if (!SHOTS) {
    return;
  }
  const panel = page.locator('.jp-NotebookPanel:visible');
  await panel.screenshot({ path: `${SHOTS}/approval-at-cell-${name}-light.png` });
  const center = () => shown.evaluate(node => node.scrollIntoView({ block: 'center' }));
  await page.theme.setDarkTheme();
  await center();
  await panel.screenshot({ path: `${SHOTS}/approval-at-cell-${name}-dark.png` });
  await page.theme.setLightTheme();
  await center();
}

test('a NotebookEdit approval is shown at its cell until it is answered', async ({ page, tmpPath }) => {
  await page.setViewportSize({ width: 820, height: 760 });
  await longNotebook(page, tmpPath);
  await page.sidebar.close('left'); // opening the notebook showed the file browser
  await page.sidebar.close('right');
  const goat = await outputOf(page, 'goat');
  const ghost = page.locator('.goat-approval-insert');
  const count = (await liveCells(page)).length;

  // Each change is denied once (the notebook stays as it was, nothing stays drawn), then allowed.
  // Edit: the diff at the cell as well as in the card.
  const target = await marked(page, 'c36');
  const note = target.locator('.goat-approval-note');
  await expect(note).toContainText('goat asks to change this cell');
  await expect(note.locator('.goat-approval-diff-del')).toHaveText(['-x36 = 36']);
  await expect(note.locator('.goat-approval-diff-add')).toHaveText(['+x36 = 3600  # scaled', '+print(x36)']);
  await expect(goat).toContainText('x36 = 3600  # scaled');
  await shots(page, 'edit', target);
  await answer(page, 'Deny');
  await expect(target).not.toHaveClass(TARGET);
  await expect(target.locator('.goat-approval-note')).toHaveCount(0);
  expect(await source(page, 'c36')).toBe('x36 = 36');

  // Insert: a placeholder with the new source right after c30, in view.
  await expect(ghost).toBeVisible({ timeout: 30_000 });
  await expect(ghost).toBeInViewport();
  await expect(ghost).toHaveClass(TARGET);
  await expect(cellById(page, 'c30').locator('.goat-approval-insert')).toHaveCount(1);
  await expect(ghost.locator('.goat-approval-source')).toHaveText("summary = 'inserted by goat'");
  await shots(page, 'insert', ghost);
  await answer(page, 'Deny');
  await expect(ghost).toHaveCount(0);

  // Delete: the cell marked for deletion.
  const doomed = await marked(page, 'c33');
  await expect(doomed).toHaveClass(/goat-approval-delete/);
  await expect(doomed.locator('.goat-approval-note')).toContainText('goat asks to delete this cell');
  await shots(page, 'delete', doomed);
  await answer(page, 'Deny');
  await expect(doomed).not.toHaveClass(/goat-approval-delete/);
  await expect(doomed).not.toHaveClass(TARGET);
  expect(await source(page, 'c33')).toBe('x33 = 33');
  expect((await liveCells(page)).length).toBe(count);

  // Allowed, each lands.
  await marked(page, 'c36');
  await answer(page, 'Allow once');
  await expect.poll(() => source(page, 'c36')).toBe('x36 = 3600  # scaled\nprint(x36)');
  await expect(cellById(page, 'c36')).not.toHaveClass(TARGET);
  await expect(ghost).toBeVisible({ timeout: 30_000 });
  await answer(page, 'Allow once');
  await expect(ghost).toHaveCount(0);
  const sources = async () => (await liveCells(page)).map(cell => `${cell.id}:${cell.source}`);
  await expect.poll(async () => (await sources()).join('\n')).toContain("c30:x30 = 30\n");
  const after30 = (await sources()).findIndex(text => text.startsWith('c30:')) + 1;
  expect((await sources())[after30]).toMatch(/:summary = 'inserted by goat'$/);

  // A reload while the delete waits: the mark comes back with the prompt; Allow deletes the cell.
  await marked(page, 'c33');
  await page.reload({ waitForIsReady: false });
  await expect(page.locator('.jp-NotebookPanel')).toHaveCount(1, { timeout: 60_000 });
  await page.notebook.activate(NB);
  const again = await marked(page, 'c33');
  await expect(again).toHaveClass(/goat-approval-delete/);
  await answer(page, 'Allow once');
  await expectText(await outputOf(page, 'goat'), 'The three cell changes are done.');
  expect(await source(page, 'c33')).toBeUndefined();
  await expect(page.locator('.goat-approval-target, .goat-approval-note, .goat-approval-insert')).toHaveCount(0);
});

const STOP_TURNS: Turn[] = [
  { match: '[stop]', text: '', tool_calls: [{ name: 'Read', arguments: { file_path: NB } }] },
  { ...EDIT, match: '[stop]' },
  { match: '[restart]', text: '', tool_calls: [{ name: 'Read', arguments: { file_path: NB } }] },
  { ...EDIT, match: '[restart]' }
];

async function cellState(page: IJupyterLabPageFixture, id: string): Promise<{ readOnly: boolean; source: string }> {
  return page.evaluate(cellId => {
    const notebook = (window as any).jupyterapp.shell.currentWidget.content;
    const cell = notebook.widgets.find((widget: any) => widget.model.id === cellId);
    return { readOnly: cell.readOnly as boolean, source: cell.model.sharedModel.getSource() as string };
  }, id);
}

test('stopping the run or restarting the kernel clears the mark and unlocks the cell', async ({ page, tmpPath }) => {
  const cells: ICellSpec[] = [
    { id: 'setup', cell_type: 'code', source: setupSource('stop.json') },
    { id: 'goat', cell_type: 'code', source: '%%goat\n[stop] Change c36.' },
    { id: 'again', cell_type: 'code', source: '%%goat\n[restart] Change c36.' }
  ];
  for (let i = 0; i < FILLERS; i++) {
    cells.push({ id: `c${i}`, cell_type: 'code', source: `x${i} = ${i}` });
  }
  await putCassette(page, `${tmpPath}/stop.json`, STOP_TURNS);
  await putNotebook(page, `${tmpPath}/${NB}`, cells);
  await openNotebook(page, `${tmpPath}/${NB}`);
  await startGoat(page, 'setup');
  const drawn = page.locator('.goat-approval-target, .goat-approval-note');

  // The stop button's interrupt: the run ends, and with it the mark and the lock.
  await startCell(page, 'goat');
  await marked(page, 'c36');
  expect((await cellState(page, 'c36')).readOnly).toBe(true);
  const kernelId = await page.evaluate(() => (window as any).jupyterapp.shell.currentWidget.sessionContext.session.kernel.id);
  expect((await page.request.post(`/api/kernels/${kernelId}/interrupt`)).ok()).toBe(true);
  await expect(drawn).toHaveCount(0, { timeout: 30_000 });
  expect(await cellState(page, 'c36')).toEqual({ readOnly: false, source: 'x36 = 36' });

  // A restart: the kernel cannot say anything any more; the notebook clears the mark by itself.
  await startCell(page, 'again');
  await expectButton(await outputOf(page, 'again'), 'Deny');
  await expect(cellById(page, 'c36')).toHaveClass(TARGET, { timeout: 30_000 });
  expect((await page.request.post(`/api/kernels/${kernelId}/restart`)).ok()).toBe(true);
  await expect(drawn).toHaveCount(0, { timeout: 30_000 });
  expect(await cellState(page, 'c36')).toEqual({ readOnly: false, source: 'x36 = 36' });
});
