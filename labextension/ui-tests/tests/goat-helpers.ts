/**
 * Helpers for the goat agent browser tests: notebooks and cassettes written through the
 * Jupyter contents API, cells started without awaiting them, and cells found by their id.
 */
import { expect, IJupyterLabPageFixture } from '@jupyterlab/galata';
import { Locator } from '@playwright/test';

/** One scripted LLM turn (goat_jupyter/replay/cassette.py). */
export type Turn = Record<string, unknown>;

/** A cell of a notebook written by a test: a fixed id so the cassette can name it. */
export interface ICellSpec {
  id: string;
  cell_type: 'code' | 'markdown';
  source: string;
}

// Node's process (no @types/node in ui-tests): playwright.config.js sets the port.
declare const process: { env: Record<string, string | undefined> };

/** The second test server, where the goat-jupyter labextension is disabled. */
const PLAIN_PORT = process.env.GOAT_UI_TESTS_PLAIN_PORT ?? '8889';
export const PLAIN_SERVER_URL = `http://localhost:${PLAIN_PORT}`;

/** Generous bounds on this 2-core machine; a passing run needs a fraction of them. */
export const KERNEL_READY_MS = 90_000;
export const GOAT_RUN_MS = 60_000;

/**
 * The first cell of every test notebook: the kernel plays `cassette` as its LLM (the
 * examples/ notebooks' pattern) and loads goat, with no user-level settings leaking in.
 */
export function setupSource(cassette: string): string {
  return [
    'import os',
    'os.environ["GOAT_MODEL"] = "openai/replay"',
    'os.environ["GOAT_PERMISSION_MODE"] = "default"',
    'os.environ["GOAT_HOME"] = os.path.abspath("goat-home")  # not ~/.goat',
    'from goat_jupyter.replay import start_replay',
    `start_replay(${JSON.stringify(cassette)})`,
    '%load_ext goat_jupyter',
    'print("GOAT READY")'
  ].join('\n');
}

/** A text file in the server's root (under the test's tmpPath), via the contents API. */
export async function putText(page: IJupyterLabPageFixture, path: string, text: string) {
  const response = await page.request.put(`/api/contents/${path}`, {
    data: { type: 'file', format: 'text', content: text }
  });
  expect(response.ok(), `PUT ${path}: ${response.status()}`).toBe(true);
}

/** A cassette (the replay server's script) for the kernel to play. */
export async function putCassette(page: IJupyterLabPageFixture, path: string, turns: Turn[]) {
  await putText(page, path, JSON.stringify({ version: 1, model: 'openai/replay', turns }, null, 1));
}

/** An nbformat 4.5 notebook with the given cells (ids kept by JupyterLab) and a python3 kernel. */
export async function putNotebook(page: IJupyterLabPageFixture, path: string, cells: ICellSpec[]) {
  const content = {
    nbformat: 4,
    nbformat_minor: 5,
    metadata: {
      kernelspec: { name: 'python3', display_name: 'Python 3 (ipykernel)', language: 'python' },
      language_info: { name: 'python' }
    },
    cells: cells.map(cell =>
      cell.cell_type === 'code'
        ? { ...cell, metadata: {}, outputs: [], execution_count: null }
        : { ...cell, metadata: {} }
    )
  };
  const response = await page.request.put(`/api/contents/${path}`, {
    data: { type: 'notebook', format: 'json', content }
  });
  expect(response.ok(), `PUT ${path}: ${response.status()}`).toBe(true);
}

/** The file as stored on disk: parsed JSON for notebooks, text otherwise; null when missing. */
export async function getContents(page: IJupyterLabPageFixture, path: string): Promise<any> {
  const response = await page.request.get(`/api/contents/${path}?content=1`);
  if (response.status() === 404) {
    return null;
  }
  expect(response.ok(), `GET ${path}: ${response.status()}`).toBe(true);
  return (await response.json()).content;
}

/** The raw bytes of a file on disk as text (to check a notebook's JSON layout). */
export async function getRawText(page: IJupyterLabPageFixture, path: string): Promise<string> {
  const response = await page.request.get(`/api/contents/${path}?type=file&format=text&content=1`);
  expect(response.ok(), `GET ${path}: ${response.status()}`).toBe(true);
  return (await response.json()).content as string;
}

/** Opens a notebook and waits for its kernel. */
export async function openNotebook(page: IJupyterLabPageFixture, path: string): Promise<void> {
  await page.sidebar.openTab('filebrowser'); // the goat settings panel may hold the left sidebar
  expect(await page.notebook.openByPath(path)).toBe(true);
  await page.notebook.activate(path.split('/').pop()!);
  await page.evaluate(async () => {
    const panel = (window as any).jupyterapp.shell.currentWidget;
    await panel.sessionContext.ready;
    await panel.sessionContext.session.kernel.info;
  });
}

/**
 * Runs the cell with `cellId` in the current notebook without waiting for it: a %%goat cell
 * that waits for a click would never finish if the test awaited it (DESIGN.md).
 */
export async function startCell(page: IJupyterLabPageFixture, cellId: string): Promise<void> {
  await page.evaluate(id => {
    const app = (window as any).jupyterapp;
    const notebook = app.shell.currentWidget.content;
    const index = notebook.widgets.findIndex((cell: any) => cell.model.id === id);
    if (index < 0) {
      throw new Error(`no cell with id ${id}`);
    }
    notebook.deselectAll();
    notebook.activeCellIndex = index;
    void app.commands.execute('notebook:run-cell');
  }, cellId);
}

/** The cell's DOM node (`.jp-Cell`), found by the id of its model. */
export function cellById(page: IJupyterLabPageFixture, cellId: string): Locator {
  return page.locator(`.jp-NotebookPanel:visible .jp-Cell[data-goat-test-id="${cellId}"]`);
}

/** Tags every cell node of the current notebook with its model id (call after cells change). */
export async function tagCells(page: IJupyterLabPageFixture): Promise<void> {
  await page.evaluate(() => {
    const notebook = (window as any).jupyterapp.shell.currentWidget.content;
    for (const cell of notebook.widgets) {
      cell.node.dataset.goatTestId = cell.model.id;
    }
  });
}

/** The output area of the cell with `cellId` (cells are re-tagged first). */
export async function outputOf(page: IJupyterLabPageFixture, cellId: string): Promise<Locator> {
  await tagCells(page);
  return cellById(page, cellId).locator('.jp-OutputArea');
}

const TRACEBACK = 'Traceback (most recent call last)';

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/**
 * Waits until `output` shows `text`, failing at once (with the output as the message) when a
 * Python traceback shows up instead.
 */
export async function expectText(output: Locator, text: string, timeout = GOAT_RUN_MS) {
  const either = new RegExp(`${escapeRegExp(text)}|${escapeRegExp(TRACEBACK)}`);
  await expect(output).toContainText(either, { timeout });
  expect(await output.innerText()).not.toContain(TRACEBACK);
  await expect(output).toContainText(text);
}

/** Waits for the button labelled `name` in `output` (failing at once on a traceback). */
export async function expectButton(output: Locator, name: string): Promise<Locator> {
  const button = output.getByRole('button', { name, exact: true });
  const either = button.or(output.getByText(TRACEBACK)).first();
  await expect(either).toBeVisible({ timeout: GOAT_RUN_MS });
  expect(await output.innerText()).not.toContain(TRACEBACK);
  await expect(button).toBeVisible();
  return button;
}

/** Runs the setup cell and waits until goat is loaded in the kernel. */
export async function startGoat(page: IJupyterLabPageFixture, setupId: string): Promise<void> {
  await startCell(page, setupId);
  await expectText(await outputOf(page, setupId), 'GOAT READY', KERNEL_READY_MS);
}

/** Cells of the open notebook's live model: id, type, source, goat metadata, outputs as text. */
export async function liveCells(page: IJupyterLabPageFixture): Promise<
  {
    id: string;
    type: string;
    source: string;
    goat: Record<string, unknown> | undefined;
    outputs: string[];
    count: number | null;
  }[]
> {
  return page.evaluate(() => {
    const model = (window as any).jupyterapp.shell.currentWidget.content.model;
    const cells = [];
    for (let index = 0; index < model.cells.length; index++) {
      const json = model.cells.get(index).toJSON();
      const source = Array.isArray(json.source) ? json.source.join('') : json.source;
      const outputs = (json.outputs ?? []).map((output: any) => {
        const text = output.text ?? output.data?.['text/plain'] ?? '';
        return Array.isArray(text) ? text.join('') : String(text);
      });
      cells.push({
        id: json.id,
        type: json.cell_type,
        source,
        goat: json.metadata?.goat,
        outputs,
        count: json.execution_count ?? null
      });
    }
    return cells;
  });
}

/** Whether the open notebook has unsaved changes. */
export async function isDirty(page: IJupyterLabPageFixture): Promise<boolean> {
  return page.evaluate(
    () => (window as any).jupyterapp.shell.currentWidget.context.model.dirty as boolean
  );
}
