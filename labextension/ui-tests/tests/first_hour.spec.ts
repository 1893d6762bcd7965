/**
 * What a new user meets first (issue 22): a missing API key is one sentence at once, naming the
 * variable and the settings panel; storing a key in the panel keeps the form's unsaved edits; a
 * setting that the environment overrides says so under its field.
 */
import { expect, IJupyterLabPageFixture, test } from '@jupyterlab/galata';

import {
  expectButton,
  expectText,
  isDirty,
  KERNEL_READY_MS,
  openNotebook,
  outputOf,
  putCassette,
  putNotebook,
  setupSource,
  startCell,
  startGoat
} from './goat-helpers';

test.describe.configure({ timeout: 180_000 });

declare const process: { env: Record<string, string | undefined> };
const SHOTS = process.env.GOAT_SCREENSHOTS_DIR;

async function openPanel(page: IJupyterLabPageFixture) {
  await page.evaluate(async () => {
    await (window as any).jupyterapp.commands.execute('goat:open-settings');
  });
  const panel = page.locator('#goat-settings');
  await expect(panel).toBeVisible();
  return panel;
}

const NO_KEY_SETUP = [
  'import os',
  'os.environ.pop("OPENAI_API_KEY", None)',
  'os.environ["GOAT_MODEL"] = "gpt-4o-mini"',
  'os.environ["GOAT_HOME"] = os.path.abspath("goat-home")',
  '%load_ext goat_jupyter',
  'print("GOAT READY")'
].join('\n');

test('a missing API key is one sentence at once, with no retries', async ({ page, tmpPath }) => {
  await putNotebook(page, `${tmpPath}/nokey.ipynb`, [
    { id: 'setup', cell_type: 'code', source: NO_KEY_SETUP },
    { id: 'goat', cell_type: 'code', source: '%%goat\nhello' }
  ]);
  await openNotebook(page, `${tmpPath}/nokey.ipynb`);
  await startCell(page, 'setup');
  await expectText(await outputOf(page, 'setup'), 'GOAT READY', KERNEL_READY_MS);
  await startCell(page, 'goat');
  const goat = await outputOf(page, 'goat');
  await expectText(goat, 'No API key for gpt-4o-mini: set OPENAI_API_KEY');
  await expect(goat).toContainText('goat settings');
  await expect(goat).not.toContainText('retrying');
  await expect(goat).not.toContainText('HTTP 500');
  if (SHOTS) {
    await goat.screenshot({ path: `${SHOTS}/missing-key-light.png` });
  }
});

test('storing a key keeps the unsaved edits of the form', async ({ page }) => {
  const panel = await openPanel(page);
  await expect(panel.locator('[data-goat="model"]')).toHaveAttribute('placeholder', /default: gpt-4o-mini/);
  await panel.locator('[data-goat="model"]').fill('anthropic/claude-sonnet-4-5');
  await panel.locator('[data-goat="rules-deny"]').fill('Read(./secrets/**)');
  const servers = JSON.stringify({ time: { command: 'python', args: ['-m', 'mcp_server_time'] } }, null, 2);
  await panel.locator('[data-goat="mcp"]').fill(servers);

  await panel.locator('[data-goat="key-name"]').fill('GROQ_API_KEY');
  await panel.locator('[data-goat="key-value"]').fill('gsk-FIRST-HOUR-1');
  await panel.locator('[data-goat="key-save"]').click();
  await expect(panel.locator('[data-goat="keys"]')).toContainText('GROQ_API_KEY');
  await expect(panel.locator('[data-goat="status"]')).toContainText('Keys saved');

  await expect(panel.locator('[data-goat="model"]')).toHaveValue('anthropic/claude-sonnet-4-5');
  await expect(panel.locator('[data-goat="rules-deny"]')).toHaveValue('Read(./secrets/**)');
  await expect(panel.locator('[data-goat="mcp"]')).toHaveValue(servers);

  await panel.locator('[data-goat="save"]').click();
  await expect(panel.locator('[data-goat="status"]')).toContainText('Saved');
  const saved = await (await page.request.get('/goat/settings')).json();
  expect(saved.model).toBe('anthropic/claude-sonnet-4-5');
  expect(saved.permissions.deny).toEqual(['Read(./secrets/**)']);
  expect(Object.keys(saved.mcpServers)).toEqual(['time']);
  if (process.env.GOAT_MODEL) {
    // Started with GOAT_MODEL set (as the README suggests): the model field says it is not in effect.
    await expect(panel.locator('[data-goat="override-model"]')).toContainText(
      `the environment variable GOAT_MODEL sets ${process.env.GOAT_MODEL}`
    );
  } else {
    await expect(panel.locator('[data-goat="override-model"]')).toBeHidden();
  }
  if (SHOTS) {
    await panel.evaluate(node => node.scrollTo(0, 0));
    await page.screenshot({ path: `${SHOTS}/settings-first-hour-light.png` });
  }

  await page.request.put('/goat/keys', { data: { remove: ['GROQ_API_KEY'] } });
  const reset = await page.request.put('/goat/settings', {
    data: { model: '', mcpServers: {}, permissions: { allow: [], ask: [], deny: [] } }
  });
  expect(reset.ok()).toBe(true);
});

test('the panel is in the Settings menu and the left sidebar; a failed test is said on save', async ({ page }) => {
  // The left sidebar has the goat tab (with its icon).
  const tab = page.locator('.jp-SideBar.jp-mod-left li[data-id="goat-settings"]');
  await expect(tab).toHaveCount(1);
  await expect(tab.locator('svg')).toHaveCount(1);
  // The Settings menu opens it.
  await page.locator('.lm-MenuBar-itemLabel', { hasText: 'Settings' }).click();
  await page.locator('.lm-Menu-itemLabel', { hasText: 'goat settings' }).click();
  const panel = page.locator('#goat-settings');
  await expect(panel).toBeVisible();
  await expect(panel.locator('[data-goat="model"]')).toHaveAttribute('placeholder', /default: gpt-4o-mini/);

  const broken = JSON.stringify({ nowhere: { command: 'goat-no-such-command-xyz' } }, null, 2);
  await panel.locator('[data-goat="mcp"]').fill(broken);
  await panel.locator('[data-goat="mcp-test"]').click();
  await expect(panel.locator('[data-goat="mcp-result"]')).toContainText('nowhere: failed', { timeout: 60_000 });
  await panel.locator('[data-goat="save"]').click();
  await expect(panel.locator('[data-goat="status"]')).toContainText('Saved');
  await expect(panel.locator('[data-goat="mcp-warning"]')).toContainText('connection test failed for nowhere');
  if (SHOTS) {
    await page.screenshot({ path: `${SHOTS}/settings-sidebar-light.png` });
    await page.theme.setDarkTheme();
    await page.screenshot({ path: `${SHOTS}/settings-sidebar-dark.png` });
    await page.theme.setLightTheme();
    await page.setViewportSize({ width: 490, height: 800 });
    await page.screenshot({ path: `${SHOTS}/settings-sidebar-narrow.png` });
  }
  const reset = await page.request.put('/goat/settings', { data: { mcpServers: {} } });
  expect(reset.ok()).toBe(true);
});

test('a %%goat cell keeps its Markdown mode when the notebook opens, and long lines wrap', async ({
  page,
  tmpPath
}) => {
  const prompt = '%%goat\n' + 'Please read the sales data and tell me which month was the weakest and why. '.repeat(4);
  await putNotebook(page, `${tmpPath}/mode.ipynb`, [
    { id: 'goat', cell_type: 'code', source: prompt },
    { id: 'plain', cell_type: 'code', source: 'x = 1' }
  ]);
  await openNotebook(page, `${tmpPath}/mode.ipynb`); // waits for the kernel (its language info)
  await page.waitForTimeout(500);
  const modes = await page.evaluate(() => {
    const panel = (window as any).jupyterapp.shell.currentWidget;
    return panel.content.widgets.map((cell: any) => ({
      mime: cell.model.mimeType,
      wrap: cell.editor?.getOption('lineWrap')
    }));
  });
  expect(modes[0]).toEqual({ mime: 'text/x-ipythongfm', wrap: true });
  expect(modes[1].mime).toBe('text/x-ipython');
  expect(modes[1].wrap).toBeFalsy();
  if (SHOTS) {
    await page.setViewportSize({ width: 490, height: 800 });
    await page.screenshot({ path: `${SHOTS}/prompt-cell-narrow.png` });
  }
});

test('the cell RunCell asks to run is read-only until the user decides', async ({ page, tmpPath }) => {
  await putCassette(page, `${tmpPath}/run.json`, [
    { match: '[run]', text: '', tool_calls: [{ name: 'RunCell', arguments: { cell_id: 'compute' } }] },
    { match: '[run]', text: 'The cell printed 42.' }
  ]);
  await putNotebook(page, `${tmpPath}/run.ipynb`, [
    { id: 'setup', cell_type: 'code', source: setupSource('run.json') },
    { id: 'goat', cell_type: 'code', source: '%%goat\n[run] Run the compute cell.' },
    { id: 'compute', cell_type: 'code', source: 'print(6*7)' }
  ]);
  await openNotebook(page, `${tmpPath}/run.ipynb`);
  await startGoat(page, 'setup');
  await startCell(page, 'goat');
  const output = await outputOf(page, 'goat');
  const allowOnce = await expectButton(output, 'Allow once');
  const state = () =>
    page.evaluate(() => {
      const panel = (window as any).jupyterapp.shell.currentWidget;
      const cell = panel.content.widgets.find((c: any) => c.model.id === 'compute');
      return { readOnly: cell.readOnly as boolean, editorReadOnly: cell.editor?.getOption('readOnly') };
    });
  await expect.poll(state).toEqual({ readOnly: true, editorReadOnly: true });
  if (SHOTS) {
    await page.screenshot({ path: `${SHOTS}/runcell-approval-locked.png` });
  }
  await allowOnce.click();
  await expectText(output, 'The cell printed 42.');
  expect((await state()).readOnly).toBe(false);
});

test('opening a notebook with goat cells, badges and old prompts leaves it unmodified', async ({
  page,
  tmpPath
}) => {
  const prompt = {
    output_type: 'display_data',
    data: {
      'application/vnd.jupyter.widget-view+json': { model_id: 'gone', version_major: 2, version_minor: 1 },
      'text/html': '<div>goat asks permission for Bash: ls</div>',
      'text/plain': 'goat asks permission for Bash: ls'
    },
    metadata: { goat: { widget: 'prompt', model: 'gone' } }
  };
  const content = {
    nbformat: 4,
    nbformat_minor: 5,
    metadata: {
      kernelspec: { name: 'python3', display_name: 'Python 3 (ipykernel)', language: 'python' },
      language_info: { name: 'python' }
    },
    cells: [
      { id: 'goat', cell_type: 'code', metadata: {}, execution_count: 3, outputs: [prompt], source: '%%goat\nLook.' },
      {
        id: 'made',
        cell_type: 'code',
        metadata: { goat: { model: 'openai/replay', by: 'goat', source_cell: 'goat', prompt: 'Look.' } },
        execution_count: 4,
        outputs: [],
        source: 'x = 1'
      },
      { id: 'text', cell_type: 'markdown', metadata: {}, source: '# Notes' }
    ]
  };
  const response = await page.request.put(`/api/contents/${tmpPath}/clean.ipynb`, {
    data: { type: 'notebook', format: 'json', content }
  });
  expect(response.ok()).toBe(true);
  await openNotebook(page, `${tmpPath}/clean.ipynb`);
  await page.waitForTimeout(1500); // decorations, the kernel's language info, stale markers
  expect(await isDirty(page)).toBe(false);
  // A real edit still counts.
  await page.evaluate(() => {
    const panel = (window as any).jupyterapp.shell.currentWidget;
    panel.content.model.cells.get(2).sharedModel.setSource('# Notes, edited');
  });
  await expect.poll(() => isDirty(page)).toBe(true);
});
