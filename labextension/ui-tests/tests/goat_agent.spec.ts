/**
 * The goat agent in a real JupyterLab (issues 4 and 5): %%goat cells play scripted LLM turns
 * from a cassette (goat_jupyter.replay) and the test acts as the user: it clicks the approval
 * buttons, watches NotebookEdit and RunCell change the open notebook, reverts a run, and runs
 * goat in a JupyterLab where the goat-jupyter labextension is disabled.
 */
import { expect, IJupyterLabPageFixture, test } from '@jupyterlab/galata';

import {
  expectButton,
  expectText,
  getContents,
  getRawText,
  isDirty,
  liveCells,
  openNotebook,
  outputOf,
  PLAIN_SERVER_URL,
  putCassette,
  putNotebook,
  setupSource,
  startCell,
  startGoat,
  Turn
} from './goat-helpers';

test.describe.configure({ timeout: 180_000 });

/** A turn that calls one tool, played only for a request whose messages contain `match`. */
function toolTurn(match: string, name: string, args: Record<string, unknown>, text = ''): Turn {
  return { match, text, tool_calls: [{ name, arguments: args }] };
}

function textTurn(match: string, text: string): Turn {
  return { match, text };
}

test.describe('approvals in the cell (issue 4)', () => {
  const TURNS: Turn[] = [
    toolTurn(
      '[allow]',
      'Bash',
      { command: 'echo "ok-$((40+2))" > approved.txt && cat approved.txt', description: 'Write it' },
      'I will write the file.'
    ),
    // Only the command's output contains "ok-42" (the command computes it): this turn proves
    // the model got the tool result.
    textTurn('ok-42', 'Done: approved.txt now says ok-42.'),
    toolTurn('[deny]', 'Bash', { command: 'echo nope > denied.txt' }),
    textTurn('The user denied this Bash call', 'Understood: I did not create denied.txt.')
  ];

  test('Allow once runs the command; Deny reaches the model', async ({ page, tmpPath }) => {
    await putCassette(page, `${tmpPath}/approve.json`, TURNS);
    await putNotebook(page, `${tmpPath}/approve.ipynb`, [
      { id: 'setup', cell_type: 'code', source: setupSource('approve.json') },
      { id: 'allow', cell_type: 'code', source: '%%goat\n[allow] Write approved.txt.' },
      { id: 'deny', cell_type: 'code', source: '%%goat\n[deny] Write denied.txt.' }
    ]);
    await openNotebook(page, `${tmpPath}/approve.ipynb`);
    await startGoat(page, 'setup');

    // Default mode asks before Bash: the approval widget shows the command in the cell.
    await startCell(page, 'allow');
    const allow = await outputOf(page, 'allow');
    const allowOnce = await expectButton(allow, 'Allow once');
    for (const label of ['Allow for session', 'Always allow', 'Deny']) {
      await expect(allow.getByRole('button', { name: label })).toBeVisible();
    }
    await expect(allow).toContainText('wants permission');
    await expect(allow).toContainText('echo "ok-$((40+2))" > approved.txt');
    const clicked = Date.now();
    await allowOnce.click();

    // The tool card with the command's output, then the model's final text.
    await expectText(allow, 'Done: approved.txt now says ok-42.');
    const ms = Date.now() - clicked;
    console.log(`Allow once click -> Bash result + next scripted turn shown: ${ms} ms`);
    await expect(allow).toContainText('Allowed once by');
    // The Bash card: the tool name, then the command's output (the final text is Markdown).
    await expect(allow.locator('b', { hasText: /^Bash$/ })).toHaveCount(1);
    await expect(allow.locator('pre').filter({ hasText: /^\s*ok-42\s*$/ })).toHaveCount(1);
    await expect(allow.getByRole('button', { name: 'Allow once' })).toHaveCount(0);
    expect(await getContents(page, `${tmpPath}/approved.txt`)).toBe('ok-42\n');

    // Deny: the command does not run and the model's next request carries the denial.
    await startCell(page, 'deny');
    const deny = await outputOf(page, 'deny');
    const denyButton = await expectButton(deny, 'Deny');
    await expect(deny).toContainText('echo nope > denied.txt');
    await denyButton.click();
    await expectText(deny, 'Understood: I did not create denied.txt.');
    await expect(deny).toContainText('Denied by');
    // The model's words reach the model (the scripted answer needs them) but not the cell: one record
    // of the decision, in words for the user.
    await expect(deny).not.toContainText('denied this Bash call');
    expect(await getContents(page, `${tmpPath}/denied.txt`)).toBeNull();
  });
});

test.describe('the live notebook (issue 5)', () => {
  /** Read the notebook, insert a cell below the running one, replace the `target` cell. */
  const EDIT_TURNS: Turn[] = [
    toolTurn('[edit]', 'Read', { file_path: 'edit.ipynb' }, 'Let me look at the notebook.'),
    toolTurn('[edit]', 'NotebookEdit', {
      notebook_path: 'edit.ipynb',
      new_source: "print('inserted by goat')",
      cell_type: 'code',
      edit_mode: 'insert'
    }),
    toolTurn('[edit]', 'NotebookEdit', {
      notebook_path: 'edit.ipynb',
      cell_id: 'target',
      new_source: 'x = 2  # replaced by goat'
    }),
    textTurn('[edit]', 'I added a cell and rewrote the target cell.')
  ];

  const GOAT_CELL = '%%goat --mode acceptEdits\n[edit] Add a cell and rewrite the target.';

  /** Opens edit.ipynb, runs the %%goat cell to its end, and checks the edits are live. */
  async function runEdits(page: IJupyterLabPageFixture, tmpPath: string): Promise<string> {
    await putCassette(page, `${tmpPath}/edit.json`, EDIT_TURNS);
    await putNotebook(page, `${tmpPath}/edit.ipynb`, [
      { id: 'setup', cell_type: 'code', source: setupSource('edit.json') },
      { id: 'goat', cell_type: 'code', source: GOAT_CELL },
      { id: 'target', cell_type: 'code', source: 'x = 1' }
    ]);
    await openNotebook(page, `${tmpPath}/edit.ipynb`);
    await page.evaluate(() => {
      // Survives only if JupyterLab never reloads the document.
      const panel = (window as any).jupyterapp.shell.currentWidget;
      (window as any).goatModelBefore = panel.context.model;
    });
    await startGoat(page, 'setup');
    await startCell(page, 'goat');
    const output = await outputOf(page, 'goat');
    await expectText(output, 'I added a cell and rewrote the target cell.');

    const cells = await liveCells(page);
    expect(cells.map(cell => cell.id).filter(id => id !== cells[2].id)).toEqual([
      'setup',
      'goat',
      'target'
    ]);
    const inserted = cells[2];
    expect(inserted.type).toBe('code');
    expect(inserted.source).toBe("print('inserted by goat')");
    expect(inserted.goat).toMatchObject({ model: 'openai/replay' });
    expect(cells[3].source).toBe('x = 2  # replaced by goat');
    expect(cells[3].goat).toMatchObject({ model: 'openai/replay' });
    return inserted.id;
  }

  test('NotebookEdit inserts and replaces cells live, without a reload', async ({
    page,
    tmpPath
  }) => {
    await runEdits(page, tmpPath);

    // The editors show the new sources: the DOM follows the model with no reload.
    expect(await page.notebook.getCellTextInput(2)).toBe("print('inserted by goat')");
    expect(await page.notebook.getCellTextInput(3)).toBe('x = 2  # replaced by goat');
    const sameDocument = await page.evaluate(() => {
      const panel = (window as any).jupyterapp.shell.currentWidget;
      return panel.context.model === (window as any).goatModelBefore;
    });
    expect(sameDocument).toBe(true);
    await expect(page.locator('.jp-Dialog')).toHaveCount(0);
    expect(await isDirty(page)).toBe(true);

    // The edits live in the open notebook; the file changes when the user saves.
    const onDisk = await getContents(page, `${tmpPath}/edit.ipynb`);
    const ids = onDisk.cells.map((cell: { id: string }) => cell.id);
    expect(ids).toEqual(['setup', 'goat', 'target']);
    expect(onDisk.cells[2].source).toBe('x = 1');
  });

  test('Revert this run restores the notebook', async ({ page, tmpPath }) => {
    const insertedId = await runEdits(page, tmpPath);
    const output = await outputOf(page, 'goat');
    const revert = output.getByRole('button', { name: 'Revert this run' });
    await expect(revert).toBeVisible();
    await revert.click();

    await expectText(output, 'Reverted %%goat run 1');
    await expect(output).toContainText(`removed cell ${insertedId} (inserted by the run)`);
    await expect(output).toContainText('restored cell target');
    const cells = await liveCells(page);
    expect(cells.map(cell => [cell.id, cell.source])).toEqual([
      ['setup', setupSource('edit.json')],
      ['goat', GOAT_CELL],
      ['target', 'x = 1']
    ]);
    expect(cells[2].goat).toBeUndefined();
    expect(await page.notebook.getCellTextInput(2)).toBe('x = 1');
    await expect(page.locator('.jp-Dialog')).toHaveCount(0);
  });

  /** Lets goat run the `compute` cell (print(6*7)) with RunCell, clicking Allow once. */
  async function runCompute(page: IJupyterLabPageFixture, tmpPath: string): Promise<void> {
    await putCassette(page, `${tmpPath}/run.json`, [
      toolTurn('[run]', 'RunCell', { cell_id: 'compute' }, 'Running the cell.'),
      textTurn('[run]', 'The cell printed 42.')
    ]);
    await putNotebook(page, `${tmpPath}/run.ipynb`, [
      { id: 'setup', cell_type: 'code', source: setupSource('run.json') },
      { id: 'goat', cell_type: 'code', source: '%%goat\n[run] Run the compute cell.' },
      { id: 'compute', cell_type: 'code', source: 'print(6*7)' },
      { id: 'undo', cell_type: 'code', source: '%goat undo' }
    ]);
    await openNotebook(page, `${tmpPath}/run.ipynb`);
    await startGoat(page, 'setup');

    // RunCell asks in default mode.
    await startCell(page, 'goat');
    const output = await outputOf(page, 'goat');
    const allowOnce = await expectButton(output, 'Allow once');
    await allowOnce.click();
    await expectText(output, 'The cell printed 42.');
  }

  /** Runs the `%goat undo` cell and waits for its report. */
  async function undoRun(page: IJupyterLabPageFixture): Promise<void> {
    await startCell(page, 'undo');
    const undo = await outputOf(page, 'undo');
    await expectText(undo, 'Reverted %%goat run 1');
    await expect(undo).toContainText('restored the outputs of cell compute');
    await expect(undo).toContainText('Not covered by a revert');
  }

  async function computeCell(page: IJupyterLabPageFixture) {
    return (await liveCells(page)).find(cell => cell.id === 'compute')!;
  }

  test('RunCell fills the cell outputs; %goat undo clears them again', async ({
    page,
    tmpPath
  }) => {
    await runCompute(page, tmpPath);
    const compute = await outputOf(page, 'compute');
    await expect(compute).toHaveText('42');
    const ran = await computeCell(page);
    expect(ran.outputs).toEqual(['42\n']);
    expect(ran.count).not.toBeNull();

    // `%goat undo` in another cell reverts the run: the outputs go, and it says what stays.
    await undoRun(page);
    expect((await computeCell(page)).outputs).toEqual([]);
    await expect(compute.locator('.jp-OutputArea-output')).toHaveCount(0);
  });

  test('%goat undo also resets the execution count RunCell set', async ({ page, tmpPath }) => {
    await runCompute(page, tmpPath);
    expect((await computeCell(page)).count).not.toBeNull();
    await undoRun(page);
    expect((await computeCell(page)).count).toBeNull();
  });
});

test.describe('without the labextension (issue 5)', () => {
  // The second server of playwright.config.js: goat-jupyter is disabled in its page config,
  // as `jupyter labextension disable goat-jupyter` would do.
  test.use({ baseURL: PLAIN_SERVER_URL });

  const TURNS: Turn[] = [
    toolTurn('[fallback]', 'Read', { file_path: 'plain.ipynb' }),
    toolTurn('[fallback]', 'NotebookEdit', {
      notebook_path: 'plain.ipynb',
      new_source: '# added on disk',
      cell_type: 'markdown',
      edit_mode: 'insert'
    }),
    toolTurn('[fallback]', 'NotebookEdit', {
      notebook_path: 'plain.ipynb',
      cell_id: 'keep',
      new_source: '# rewritten on disk'
    }),
    textTurn('[fallback]', 'Edited plain.ipynb on disk.'),
    toolTurn('[again]', 'NotebookEdit', {
      notebook_path: 'plain.ipynb',
      new_source: '# second run',
      cell_type: 'markdown',
      edit_mode: 'insert'
    }),
    textTurn('[again]', 'Edited it on disk again.')
  ];

  test('NotebookEdit falls back to the file and says so once', async ({ page, tmpPath }) => {
    const plugins = await page.evaluate(() => {
      const app = (window as any).jupyterapp;
      return [
        app.hasPlugin('goat-jupyter:bridge'),
        app.hasPlugin('@jupyter-widgets/jupyterlab-manager:plugin')
      ];
    });
    expect(plugins).toEqual([false, true]);

    await putCassette(page, `${tmpPath}/plain.json`, TURNS);
    await putNotebook(page, `${tmpPath}/plain.ipynb`, [
      { id: 'setup', cell_type: 'code', source: setupSource('plain.json') },
      { id: 'goat', cell_type: 'code', source: '%%goat --mode acceptEdits\n[fallback] Edit it.' },
      { id: 'keep', cell_type: 'markdown', source: '# original' },
      { id: 'again', cell_type: 'code', source: '%%goat --mode acceptEdits\n[again] Once more.' }
    ]);
    await openNotebook(page, `${tmpPath}/plain.ipynb`);
    await startGoat(page, 'setup');

    await startCell(page, 'goat');
    const output = await outputOf(page, 'goat');
    await expectText(output, 'Edited plain.ipynb on disk.');
    // Three notebook tool calls probed the bridge; the user is told once.
    const notice = 'live notebook bridge is not available';
    await expect(output).toContainText(notice);
    await expect(output).toContainText('labextension is not installed or enabled');
    expect((await output.innerText()).split(notice).length - 1).toBe(1);

    // A second run in the same kernel edits the file again and does not repeat the notice.
    await startCell(page, 'again');
    const again = await outputOf(page, 'again');
    await expectText(again, 'Edited it on disk again.');
    expect(await again.innerText()).not.toContain(notice);

    // The file on disk has both runs' edits (nbformat, 1-space indent); goat stamped its cells.
    const onDisk = await getContents(page, `${tmpPath}/plain.ipynb`);
    const layout = onDisk.cells.map((cell: { cell_type: string; source: string }) => [
      cell.cell_type,
      cell.source.split('\n')[0]
    ]);
    expect(layout).toEqual([
      ['code', 'import os'],
      ['code', '%%goat --mode acceptEdits'],
      ['markdown', '# added on disk'],
      ['markdown', '# rewritten on disk'],
      ['code', '%%goat --mode acceptEdits'],
      ['markdown', '# second run']
    ]);
    expect(onDisk.cells[2].metadata.goat).toMatchObject({ model: 'openai/replay' });
    expect(onDisk.cells[2].id).toMatch(/^[A-Za-z0-9_-]{1,64}$/);
    expect(await getRawText(page, `${tmpPath}/plain.ipynb`)).toMatch(/^\{\n "cells": \[\n  \{/);

    // Without the extension the open notebook is untouched until the user reloads it.
    const open = (await liveCells(page)).map(cell => cell.id);
    expect(open).toEqual(['setup', 'goat', 'keep', 'again']);
  });
});
