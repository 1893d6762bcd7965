/**
 * Findings that cite their cell (issue 36): a goat answer's citations are checked against the
 * notebook's outputs and shown as links, ✓ for a value the output holds and a warning for one it
 * does not; a click scrolls the notebook to the cited output and highlights it. Screenshots in the
 * light and dark themes and in a 500 px wide notebook (GOAT_SCREENSHOTS_DIR).
 */
import { expect, IJupyterLabPageFixture, test } from '@jupyterlab/galata';

import {
  expectText,
  openNotebook,
  outputOf,
  putCassette,
  putNotebook,
  setupSource,
  startCell,
  startGoat
} from './goat-helpers';

test.describe.configure({ timeout: 240_000 });

declare const process: { env: Record<string, string | undefined> };
const SHOTS = process.env.GOAT_SCREENSHOTS_DIR;

const ANSWER =
  'The mean price is 0.42 [cell 2, out 1] (42.1 % [cell 2, out 2]). ' +
  'The maximum is 0.99 [cell 2, out 1], and [cell 7] holds the rest.';
const FILLER = Array.from({ length: 12 }, (_, i) => ({
  id: `note${i}`,
  cell_type: 'markdown' as const,
  source: `## Note ${i + 1}\n\n${'Some words about the data. '.repeat(12)}`
}));

async function setup(page: IJupyterLabPageFixture, tmpPath: string): Promise<void> {
  await putCassette(page, `${tmpPath}/cite.json`, [{ match: '[cite]', text: ANSWER }]);
  await putNotebook(page, `${tmpPath}/cite.ipynb`, [
    { id: 'setup', cell_type: 'code', source: setupSource('cite.json') },
    { id: 'data', cell_type: 'code', source: 'mean = 0.4213\nprint("mean price", mean)\nmean * 100' },
    ...FILLER,
    { id: 'ask', cell_type: 'code', source: '%%goat\n[cite] what is the mean price?' }
  ]);
  await openNotebook(page, `${tmpPath}/cite.ipynb`);
  await startGoat(page, 'setup');
  await startCell(page, 'data');
  await expectText(await outputOf(page, 'data'), '42.13');
}

test('citations are marked, and a click scrolls to the cited output', async ({ page, tmpPath }) => {
  await setup(page, tmpPath);
  await startCell(page, 'ask');
  const answer = await outputOf(page, 'ask');
  await expectText(answer, 'holds the rest');
  const verified = answer.locator('a[href="#goat-cite-2-1-ok"]');
  await expect(verified).toHaveText('[cell 2, out 1 ✓]');
  await expect(answer.locator('a[href="#goat-cite-2-2-ok"]')).toHaveText('[cell 2, out 2 ✓]');
  await expect(answer.locator('a[href="#goat-cite-2-1-bad"]')).toHaveText(
    '[cell 2, out 1 ⚠ not in output: 0.99]'
  );
  await expect(answer.locator('a[href="#goat-cite-7-0-bad"]')).toHaveText('[cell 7 ⚠ no such cell]');
  const colours = await answer.locator('a[href^="#goat-cite-"]').evaluateAll(links =>
    links.map(link => getComputedStyle(link).color)
  );
  expect(new Set(colours).size, 'verified and flagged citations look different').toBe(2);

  const outputs = (await outputOf(page, 'data')).locator('.jp-OutputArea-child');
  await expect(outputs).toHaveCount(2);
  await expect(outputs.first()).not.toBeInViewport();
  await verified.click();
  await expect(outputs.first()).toBeInViewport();
  await expect(outputs.first()).toHaveClass(/goat-cite-target/);
  await expect(outputs.first()).not.toHaveClass(/goat-cite-target/, { timeout: 5_000 });
  expect(page.url(), 'the link did not navigate').not.toContain('#goat-cite');

  await answer.locator('a[href="#goat-cite-2-2-ok"]').scrollIntoViewIfNeeded();
  await answer.locator('a[href="#goat-cite-2-2-ok"]').click();
  await expect(outputs.nth(1)).toHaveClass(/goat-cite-target/);
  await expect(outputs.nth(1)).toBeInViewport();

  // A citation of a cell that is not there leaves the notebook where it is.
  await answer.locator('a[href="#goat-cite-7-0-bad"]').scrollIntoViewIfNeeded();
  await answer.locator('a[href="#goat-cite-7-0-bad"]').click();
  await expect(answer.locator('a[href="#goat-cite-7-0-bad"]')).toBeInViewport();
  expect(page.url()).not.toContain('#goat-cite');

  if (SHOTS) {
    await answer.scrollIntoViewIfNeeded();
    await answer.screenshot({ path: `${SHOTS}/citations-light.png` });
    await page.theme.setDarkTheme();
    await answer.screenshot({ path: `${SHOTS}/citations-dark.png` });
    await page.evaluate(() => (window as any).jupyterapp.shell.collapseLeft());
    await page.setViewportSize({ width: 560, height: 800 });
    await page.waitForTimeout(500);
    await answer.scrollIntoViewIfNeeded();
    await answer.screenshot({ path: `${SHOTS}/citations-narrow.png` });
    await page.theme.setLightTheme();
  }
});
