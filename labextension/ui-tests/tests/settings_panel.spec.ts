/**
 * The goat settings panel (issue 14): pick a model from litellm's catalogue, add a deny rule,
 * save; a %%goat run in a kernel started afterwards uses that model and the rule blocks the read.
 * An invalid rule shows an error in the panel and is not saved.
 */
import { expect, IJupyterLabPageFixture, test } from '@jupyterlab/galata';
import * as fs from 'fs';
import * as path from 'path';

import {
  expectText,
  openNotebook,
  outputOf,
  putCassette,
  putNotebook,
  putText,
  startCell,
  Turn
} from './goat-helpers';

test.describe.configure({ timeout: 180_000 });

// Node's process (no @types/node in ui-tests).
declare const process: { env: Record<string, string | undefined> };
const SHOTS = process.env.GOAT_SCREENSHOTS_DIR;

async function savedSettings(page: IJupyterLabPageFixture): Promise<any> {
  const response = await page.request.get('/goat/settings');
  expect(response.ok()).toBe(true);
  return response.json();
}

async function openPanel(page: IJupyterLabPageFixture) {
  await page.evaluate(async () => {
    await (window as any).jupyterapp.commands.execute('goat:open-settings');
  });
  const panel = page.locator('#goat-settings');
  await expect(panel).toBeVisible();
  return panel;
}

const SETUP = [
  'from goat_jupyter.replay import start_replay',
  'srv = start_replay("panel.json")',
  '%load_ext goat_jupyter',
  'print("GOAT READY")'
].join('\n');

const TURNS: Turn[] = [
  { match: '[panel]', text: '', tool_calls: [{ name: 'Read', arguments: { file_path: 'secret.txt' } }] },
  { match: 'permissions.deny', text: 'The panel rule kept secret.txt closed.' }
];

test('pick a model, add a deny rule, save; a new %%goat run uses both', async ({ page, tmpPath }) => {
  const panel = await openPanel(page);
  // The picker is fed by the known models.
  await expect(panel.locator('#goat-models option[value="gpt-4o-mini"]')).toHaveCount(1, { timeout: 60_000 });

  // An invalid rule: shown in the panel, nothing saved.
  const deny = panel.locator('[data-goat="rules-deny"]');
  await deny.fill('Bash(unclosed');
  await panel.locator('[data-goat="save"]').click();
  await expect(panel.locator('[data-goat="rules-deny-error"]')).toContainText('Bash(unclosed');
  await expect(panel.locator('[data-goat="status"]')).toContainText('Not saved');
  if (SHOTS) {
    await panel.locator('[data-goat="rules-deny-error"]').scrollIntoViewIfNeeded();
    await page.screenshot({ path: `${SHOTS}/settings-invalid-rule.png` });
  }
  expect((await savedSettings(page)).permissions.deny).toEqual([]);

  // A name the model list does not hold: said only once the list has loaded, in the user's words.
  const keyStatus = panel.locator('[data-goat="key-status"]');
  await panel.locator('[data-goat="model"]').fill('acme/made-up-model');
  await expect(keyStatus).toContainText('Not in the model list (any provider/model name works');
  await expect(keyStatus).not.toContainText('litellm');
  if (SHOTS) {
    await page.screenshot({ path: `${SHOTS}/settings-model-hint.png` });
  }

  // The model from the catalogue and a valid deny rule.
  await panel.locator('[data-goat="model"]').fill('gpt-4o-mini');
  await expect(panel.locator('[data-goat="key-status"]')).toContainText('openai');
  await deny.fill('Read(./secret.txt)');
  await panel.locator('[data-goat="save"]').click();
  await expect(panel.locator('[data-goat="status"]')).toContainText('Saved');
  await expect(panel.locator('[data-goat="rules-deny-error"]')).toHaveText('');
  const saved = await savedSettings(page);
  expect(saved.model).toBe('gpt-4o-mini');
  expect(saved.permissions.deny).toEqual(['Read(./secret.txt)']);

  // A provider key: stored, listed by name, its value never shown again.
  await panel.locator('[data-goat="key-name"]').fill('GROQ_API_KEY');
  await panel.locator('[data-goat="key-value"]').fill('gsk-PANEL-SECRET-7');
  await panel.locator('[data-goat="key-save"]').click();
  await expect(panel.locator('[data-goat="keys"]')).toContainText('GROQ_API_KEY');
  await expect(panel.locator('[data-goat="key-value"]')).toHaveValue('');
  expect(await page.content()).not.toContain('gsk-PANEL-SECRET-7');
  const keys = await page.request.get('/goat/keys');
  expect(await keys.text()).not.toContain('gsk-PANEL-SECRET-7');

  if (SHOTS) {
    await panel.evaluate(node => node.scrollTo(0, 0));
    await page.screenshot({ path: `${SHOTS}/settings-light.png` });
    await page.theme.setDarkTheme();
    await page.screenshot({ path: `${SHOTS}/settings-dark.png` });
    await page.theme.setLightTheme();
  }

  // A kernel started after saving: no GOAT_MODEL, no %goat config, just the user settings.
  await putText(page, `${tmpPath}/secret.txt`, 'TOP-SECRET-42\n');
  await putCassette(page, `${tmpPath}/panel.json`, TURNS);
  await putNotebook(page, `${tmpPath}/panel.ipynb`, [
    { id: 'setup', cell_type: 'code', source: SETUP },
    { id: 'goat', cell_type: 'code', source: '%%goat\n[panel] Show me secret.txt' },
    { id: 'model', cell_type: 'code', source: 'print("MODEL", srv.requests[-1]["model"])' }
  ]);
  await openNotebook(page, `${tmpPath}/panel.ipynb`);
  await startCell(page, 'setup');
  await expectText(await outputOf(page, 'setup'), 'GOAT READY', 90_000);
  await startCell(page, 'goat');
  const goat = await outputOf(page, 'goat');
  await expectText(goat, 'The panel rule kept secret.txt closed.');
  await expect(goat).toContainText('Read(./secret.txt)');
  await expect(goat).not.toContainText('TOP-SECRET-42');
  await startCell(page, 'model');
  await expectText(await outputOf(page, 'model'), 'MODEL gpt-4o-mini');

  // Leave the server's user settings as they were for other tests.
  await page.request.put('/goat/keys', { data: { remove: ['GROQ_API_KEY'] } });
  const reset = await page.request.put('/goat/settings', {
    data: { model: '', permissions: { allow: [], ask: [], deny: [] } }
  });
  expect(reset.ok()).toBe(true);
});

test('folder trust: show a folder, trust it, see it listed, revoke it', async ({ page, tmpPath }) => {
  const panel = await openPanel(page);
  const folder = panel.locator('[data-goat="trust-folder"]');
  const status = panel.locator('[data-goat="trust-status"]');
  await folder.fill('..');
  await panel.locator('[data-goat="trust-show"]').click();
  await expect(status).toContainText('outside the Jupyter root');

  await folder.fill(tmpPath);
  await panel.locator('[data-goat="trust-show"]').click();
  await expect(status).toContainText('nothing to trust');
  await panel.locator('[data-goat="trust-trust"]').click();
  const listed = panel.locator('[data-goat="trust-folders"] li', { hasText: tmpPath });
  await expect(listed).toHaveCount(1);
  await listed.getByRole('button', { name: 'Revoke' }).click();
  await expect(listed).toHaveCount(0);
});

test('folder trust: a file changed after Show is not trusted; the panel shows the new list', async ({
  page,
  tmpPath
}) => {
  const shownFolder = await page.request.get(`/goat/trust?folder=${encodeURIComponent(tmpPath)}`);
  const absolute: string = (await shownFolder.json()).folder;
  const settingsFile = path.join(absolute, '.goat', 'settings.json');
  fs.mkdirSync(path.dirname(settingsFile), { recursive: true });
  const servers = (names: string[]) =>
    JSON.stringify({ mcp_servers: Object.fromEntries(names.map(n => [n, { command: `${n}-server` }])) });
  fs.writeFileSync(settingsFile, servers(['seen']));

  const panel = await openPanel(page);
  const items = panel.locator('[data-goat="trust-items"]');
  const status = panel.locator('[data-goat="trust-status"]');
  const listed = panel.locator('[data-goat="trust-folders"] li', { hasText: absolute });
  await panel.locator('[data-goat="trust-folder"]').fill(tmpPath);
  await panel.locator('[data-goat="trust-show"]').click();
  await expect(items).toContainText("MCP server 'seen'");
  await expect(items).not.toContainText('unseen');

  fs.writeFileSync(settingsFile, servers(['seen', 'unseen']));
  await panel.locator('[data-goat="trust-trust"]').click();
  await expect(status).toContainText('changed since they were shown');
  await expect(items).toContainText("MCP server 'unseen'");
  await expect(listed).toHaveCount(0);
  const shots = process.env.GOAT_SCREENSHOTS_DIR;
  if (shots) {
    await page.screenshot({ path: `${shots}/trust-changed-light.png` });
    await page.theme.setDarkTheme();
    await page.setViewportSize({ width: 560, height: 700 });
    await page.screenshot({ path: `${shots}/trust-changed-dark-narrow.png` });
    await page.setViewportSize({ width: 1024, height: 768 });
    await page.theme.setLightTheme();
  }

  await panel.locator('[data-goat="trust-trust"]').click();
  await expect(listed).toHaveCount(1);
  await expect(items).toContainText('✓ trusted');
  await listed.getByRole('button', { name: 'Revoke' }).click();
  await expect(listed).toHaveCount(0);
});
