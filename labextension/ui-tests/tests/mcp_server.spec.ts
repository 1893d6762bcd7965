/**
 * goat's MCP server with a real MCP client (the Python SDK's, in a child process) against this
 * JupyterLab (issue 37): it reads the notebook with an unsaved edit, inserts a cell and runs it
 * ([*] and streamed output in the tab), a locked cell's edit asks in the notebook and Deny reaches
 * the client as an error, Stop interrupts a blocking cell, and the tab and the saved file agree.
 */
import { expect, IJupyterLabPageFixture, test } from '@jupyterlab/galata';
import { Locator } from '@playwright/test';

import { expectText, getContents, liveCells, openNotebook } from './goat-helpers';

test.describe.configure({ timeout: 300_000 });

declare const process: { env: Record<string, string | undefined>; cwd(): string };
declare const require: (name: string) => any;

const PORT = process.env.GOAT_UI_TESTS_PORT || '8888';
const MCP_URL = `http://localhost:${PORT}/goat/mcp`;
const SLOW = 'import time\nfor i in range(4): print(f"line {i}", flush=True); time.sleep(1)';
const BLOCKING = 'import time\ntime.sleep(120)';

interface IResult {
  error: boolean;
  text: string;
}

/** One tool call by the SDK's client in a child process (started now, awaited later). */
function mcp(tool: string, args: Record<string, unknown>): Promise<IResult> {
  const { execFile } = require('child_process');
  const path = require('path');
  const root = path.resolve(process.cwd(), '..', '..');
  const python = process.env.PYTHON || 'python';
  const argv = ['-m', 'tests.mcp_server.client_cli', MCP_URL, tool, JSON.stringify(args)];
  return new Promise((resolve, reject) => {
    execFile(python, argv, { cwd: root, timeout: 240_000 }, (error: any, stdout: string, stderr: string) => {
      if (error) {
        reject(new Error(`${tool} client failed: ${stderr || error}`));
      } else {
        resolve(JSON.parse(stdout.trim().split('\n').pop() ?? '{}') as IResult);
      }
    });
  });
}

/** The prompt the MCP server shows in the notebook; answers it with `label`. */
async function answer(page: IJupyterLabPageFixture, label: string): Promise<Locator> {
  const dialog = page.locator('.jp-Dialog');
  await expect(dialog).toBeVisible({ timeout: 60_000 });
  await expect(dialog).toContainText('galata-agent asks');
  await dialog.getByRole('button', { name: label, exact: true }).click();
  await expect(dialog).toHaveCount(0);
  return dialog;
}

function cell(page: IJupyterLabPageFixture, index: number): Locator {
  return page.locator('.jp-NotebookPanel:visible .jp-Notebook .jp-Cell').nth(index);
}

async function putLockedNotebook(page: IJupyterLabPageFixture, path: string): Promise<void> {
  const code = (id: string, source: string, tags: string[] = []) => ({
    id, cell_type: 'code', source, metadata: tags.length ? { tags } : {}, outputs: [], execution_count: null
  });
  const content = {
    nbformat: 4,
    nbformat_minor: 5,
    metadata: { kernelspec: { name: 'python3', display_name: 'Python 3 (ipykernel)', language: 'python' } },
    cells: [code('first', 'a = 1'), code('locked', 'secret = 2', ['goat:locked'])]
  };
  const response = await page.request.put(`/api/contents/${path}`, { data: { type: 'notebook', format: 'json', content } });
  expect(response.ok()).toBe(true);
}

test('an outside agent works in the live notebook over MCP, under the person in JupyterLab', async ({
  page,
  tmpPath
}) => {
  const path = `${tmpPath}/mcp.ipynb`;
  await putLockedNotebook(page, path);
  await openNotebook(page, path);
  await page.notebook.setCell(0, 'code', 'a = 41  # typed, not saved');

  const read = await mcp('read_notebook', { notebook_path: path });
  expect(read.error).toBe(false);
  expect(read.text).toContain('with unsaved changes');
  expect(read.text).toContain('a = 41  # typed, not saved');
  expect(read.text).toContain('goat:locked');

  const inserting = mcp('edit_cell', {
    notebook_path: path, cell_id: 'first', edit_mode: 'insert', cell_type: 'code', new_source: SLOW
  });
  await answer(page, 'Allow once');
  const inserted = await inserting;
  expect(inserted.error, inserted.text).toBe(false);
  expect(inserted.text).toContain('Read back');
  const slowId = /with id (\S+)/.exec(inserted.text)![1];
  const cells = await liveCells(page);
  expect(cells[1].source).toBe(SLOW);
  expect(cells[1].goat?.prompt).toBe('outside agent galata-agent');

  const running = mcp('run_cell', { notebook_path: path, cell_id: slowId });
  await answer(page, 'Allow once');
  await expect(cell(page, 1).locator('.jp-InputPrompt')).toHaveText('[*]:', { timeout: 30_000 });
  await expectText(cell(page, 1).locator('.jp-OutputArea'), 'line 0', 30_000);
  const ran = await running;
  expect(ran.error, ran.text).toBe(false);
  expect(ran.text).toContain('line 3');
  await expect(cell(page, 1).locator('.jp-InputPrompt')).toHaveText(/\[\d+\]:/);

  const locked = mcp('edit_cell', { notebook_path: path, cell_id: 'locked', new_source: 'secret = 3' });
  const dialog = page.locator('.jp-Dialog');
  await expect(dialog).toContainText('secret = 3', { timeout: 60_000 });
  await expect(dialog).toContainText('goat:locked');
  await answer(page, 'Deny');
  const denied = await locked;
  expect(denied.error).toBe(true);
  expect(denied.text).toContain('denied');
  expect((await liveCells(page))[2].source).toBe('secret = 2');

  const adding = mcp('edit_cell', {
    notebook_path: path, cell_id: slowId, edit_mode: 'insert', cell_type: 'code', new_source: BLOCKING
  });
  await answer(page, 'Allow once');
  const blockingId = /with id (\S+)/.exec((await adding).text)![1];
  const blocked = mcp('run_cell', { notebook_path: path, cell_id: blockingId });
  await answer(page, 'Allow once');
  await expect(cell(page, 2).locator('.jp-InputPrompt')).toHaveText('[*]:', { timeout: 30_000 });
  const stopped = await mcp('stop', { notebook_path: path });
  expect(stopped.text).toContain('Interrupted kernel');
  const started = Date.now();
  const interrupted = await blocked;
  expect(Date.now() - started).toBeLessThan(15_000); // the run ends at the interrupt, not after 120 s
  expect(interrupted.text).toContain('KeyboardInterrupt');
  await expect(cell(page, 2).locator('.jp-OutputArea')).toContainText('KeyboardInterrupt', { timeout: 30_000 });

  await page.notebook.save();
  const saved = await getContents(page, path);
  const live = await liveCells(page);
  const source = (value: string | string[]) => (Array.isArray(value) ? value.join('') : value);
  expect(saved.cells.map((c: any) => source(c.source))).toEqual(live.map(c => c.source));
  expect(saved.cells.map((c: any) => c.id)).toEqual(live.map(c => c.id));
});

test('the settings panel shows the switch, the connect commands and the clients; the prompt in light, dark and narrow', async ({
  page,
  tmpPath
}) => {
  const path = `${tmpPath}/shots.ipynb`;
  await putLockedNotebook(page, path);
  await openNotebook(page, path);
  const listed = await mcp('list_notebooks', {});
  expect(listed.text).toContain('JupyterLab page: connected');
  await page.evaluate(async () => {
    await (window as any).jupyterapp.commands.execute('goat:open-settings');
  });
  const panel = page.locator('#goat-settings');
  await expect(panel.locator('[data-goat="mcp-serve"]')).toBeChecked({ timeout: 30_000 });
  await expect(panel.locator('[data-goat="mcp-serve-reason"]')).toContainText('--GoatMcp.enabled=True');
  await expect(panel.locator('[data-goat="mcp-command-claude_code"]')).toHaveText(
    `claude mcp add --transport http jupyter ${MCP_URL} --header "Authorization: token <token>"`
  );
  await expect(panel.locator('[data-goat="mcp-serve-clients"]')).toContainText('galata-agent: ');
  const section = panel.locator('section', { hasText: 'Outside agents (MCP)' });
  await section.scrollIntoViewIfNeeded();
  await section.screenshot({ path: test.info().outputPath('mcp-panel-light.png') });

  await page.notebook.activate('shots.ipynb');
  expect((await mcp('read_notebook', { notebook_path: path })).error).toBe(false);
  const asking = mcp('edit_cell', { notebook_path: path, cell_id: 'locked', new_source: 'secret = 42' });
  const dialog = page.locator('.jp-Dialog');
  await expect(dialog).toContainText('secret = 42', { timeout: 60_000 });
  await page.screenshot({ path: test.info().outputPath('mcp-approval-light.png') });
  await page.theme.setDarkTheme();
  await page.screenshot({ path: test.info().outputPath('mcp-approval-dark.png') });
  await page.setViewportSize({ width: 560, height: 900 });
  await page.screenshot({ path: test.info().outputPath('mcp-approval-narrow.png') });
  await answer(page, 'Deny');
  expect((await asking).error).toBe(true);
  await page.theme.setLightTheme();
});
