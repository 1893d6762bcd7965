/**
 * The examples in a real JupyterLab, played from their cassettes (issue 15).
 * - dataframe_agent.ipynb: goat inspects the live DataFrame, inserts a plotting cell below its own
 *   %%goat cell (live, no reload), runs it (the figure shows in that cell), reads the figure (the
 *   model's next request carries the image) and adds a Markdown cell with findings.
 * - teaching_demo.ipynb: the clicks its Markdown cells tell the presenter to make lead through the
 *   recorded session (plan review, approvals, a question, a denial with feedback, a revert).
 */
import { expect, IJupyterLabPageFixture, test } from '@jupyterlab/galata';
import { Locator } from '@playwright/test';

import {
  expectButton,
  expectText,
  getContents,
  GOAT_RUN_MS,
  KERNEL_READY_MS,
  liveCells,
  openNotebook,
  outputOf,
  putText,
  startCell,
  tagCells,
  cellById
} from './goat-helpers';

// Node's fs and path at run time (ui-tests has no @types/node).
declare const require: (name: string) => any;
declare const __dirname: string;
const fs = require('fs');
const path = require('path');

const EXAMPLES = path.resolve(__dirname, '..', '..', '..', 'examples');
const EXAMPLE_FILES = (name: string) => [`${name}.ipynb`, `cassettes/${name}.json`, 'data/sales.csv'];

test.describe.configure({ timeout: 240_000 });
const FEEDBACK = "format the best month's revenue like the totals";

/** Copies the example, its cassette and data into the server under `dir`. */
async function putExample(page: IJupyterLabPageFixture, dir: string, name: string): Promise<void> {
  for (const folder of ['cassettes', 'data']) {
    const response = await page.request.put(`/api/contents/${dir}/${folder}`, {
      data: { type: 'directory' }
    });
    expect(response.ok(), `mkdir ${folder}: ${response.status()}`).toBe(true);
  }
  for (const file of EXAMPLE_FILES(name)) {
    await putText(page, `${dir}/${file}`, fs.readFileSync(path.join(EXAMPLES, file), 'utf-8'));
  }
}

/** Runs `code` in the open notebook's kernel (not in a cell) and returns what it printed. */
async function kernelRun(page: IJupyterLabPageFixture, code: string): Promise<string> {
  return page.evaluate(async source => {
    const panel = (window as any).jupyterapp.shell.currentWidget;
    const future = panel.sessionContext.session.kernel.requestExecute({ code: source });
    let printed = '';
    future.onIOPub = (msg: any) => {
      if (msg.header.msg_type === 'stream') {
        printed += msg.content.text;
      } else if (msg.header.msg_type === 'error') {
        printed += `${msg.content.ename}: ${msg.content.evalue}`;
      }
    };
    await future.done;
    return printed;
  }, code);
}

// Before the setup cell: no provider key (the cassette plays), no user settings, a request log. The
// example needs no project settings: its setup cell allows what the demo does (%goat allow).
const PREPARE = [
  'import os',
  'from goat_jupyter.replay.offline import PROVIDER_KEYS',
  'for key in PROVIDER_KEYS: os.environ.pop(key, None)',
  'os.environ["GOAT_HOME"] = os.path.abspath("goat-home")',
  'os.environ["GOAT_REPLAY_REQUEST_LOG"] = os.path.abspath("requests.jsonl")',
  'print("PREPARED")'
].join('\n');

// After the run: which turns the requests got, and whether the request answered by the turn
// after RunCell (turn 4, the one that writes the findings) carries the figure as an image.
const REQUESTS = [
  'import json',
  'entries = [json.loads(line) for line in open("requests.jsonl")]',
  'def images(entry):',
  '    return json.dumps(entry["request"]["messages"]).count("data:image/png;base64,")',
  'print(json.dumps({"turns": [e["turn"] for e in entries], "images": {e["turn"]: images(e) for e in entries}}))'
].join('\n');

// Node's environment (playwright.config.js passes it through).
declare const process: { env: Record<string, string | undefined> };

/** With GOAT_SCREENSHOTS_DIR (scripts/screenshots), a screenshot of the page with `focus` in view. */
async function shot(page: IJupyterLabPageFixture, name: string, focus: Locator): Promise<void> {
  const dir = process.env.GOAT_SCREENSHOTS_DIR;
  if (!dir) {
    return;
  }
  await focus.scrollIntoViewIfNeeded();
  await page.screenshot({ path: `${dir}/dataframe_agent-${name}.png` });
}

/**
 * The recorded prompt tokens of every turn played here (the clicked branches included, which no
 * headless run reaches) match the requests, as tests/test_examples.py checks for headless runs.
 * With GOAT_UI_TESTS_REQUEST_LOGS=DIR the log is kept as DIR/NAME.jsonl for
 * `python scripts/cassette_tokens.py --log DIR/NAME.jsonl`.
 */
async function checkTokenCounts(page: IJupyterLabPageFixture, name: string): Promise<void> {
  const keep = process.env.GOAT_UI_TESTS_REQUEST_LOGS;
  const code = [
    'import json, shutil',
    'from goat_jupyter.replay import load_cassette',
    'from goat_jupyter.replay.tokens import off_counts, read_log',
    keep ? `shutil.copy("requests.jsonl", ${JSON.stringify(`${keep}/${name}.jsonl`)})` : '',
    `print(json.dumps(off_counts(load_cassette("cassettes/${name}.json"), read_log("requests.jsonl"))))`
  ].join('\n');
  expect(JSON.parse(await kernelRun(page, code))).toEqual([]);
}

test('dataframe_agent.ipynb: a live plotting cell, its figure, and the findings', async ({
  page,
  tmpPath
}) => {
  await putExample(page, tmpPath, 'dataframe_agent');
  await openNotebook(page, `${tmpPath}/dataframe_agent.ipynb`);
  if (process.env.GOAT_SCREENSHOTS_DIR) {
    await page.setViewportSize({ width: 1200, height: 860 });
    await page.sidebar.close('left');
  }
  expect(await kernelRun(page, PREPARE)).toContain('PREPARED');
  await page.evaluate(() => ((window as any).goatNoReload = true));

  await startCell(page, 'setup');
  await expectText(await outputOf(page, 'setup'), 'replaying the recorded session', KERNEL_READY_MS);
  await startCell(page, 'load');
  await expect(await outputOf(page, 'load')).toContainText('37278.58', { timeout: GOAT_RUN_MS });
  await shot(page, '1-dataframe', cellById(page, 'ask'));

  await startCell(page, 'ask');
  const ask = await outputOf(page, 'ask');
  await expect(ask).toContainText('pandas.DataFrame with shape (48, 4)', { timeout: GOAT_RUN_MS });
  if (process.env.GOAT_SCREENSHOTS_DIR) {
    await ask.locator('details').nth(1).evaluate((details: any) => (details.open = true));
  }
  await shot(page, '2-inspect', ask.locator('details').nth(1));
  await expect.poll(async () => (await liveCells(page)).length, { timeout: GOAT_RUN_MS }).toBe(6);
  await tagCells(page);
  await shot(page, '3-cell-inserted', cellById(page, 'after'));
  await expectText(ask, 'Want me to break the August dip down', 120_000);

  // The cells goat inserted sit right below its own cell, in the open (unsaved) notebook.
  const cells = await liveCells(page);
  const at = cells.findIndex(cell => cell.id === 'ask');
  const plot = cells[at + 1];
  const findings = cells[at + 2];
  expect(plot.type).toBe('code');
  expect(plot.source).toContain('monthly.plot(');
  expect(plot.count).not.toBeNull();
  expect(findings.type).toBe('markdown');
  expect(findings.source).toContain('East leads in every month');
  expect(cells[at + 3].id).toBe('after');
  expect(await page.evaluate(() => (window as any).goatNoReload)).toBe(true);

  // The figure is an image output of the plotting cell on the page, and a thumbnail in goat's card.
  await tagCells(page);
  const plotImage = cellById(page, plot.id).locator('.jp-OutputArea img');
  await expect(plotImage).toHaveCount(1);
  await expect(plotImage).toBeVisible();
  expect(await plotImage.evaluate((img: any) => img.naturalWidth)).toBeGreaterThan(400);
  await expect(ask.locator('img[src^="data:image/png;base64,"]')).toHaveCount(1);
  await expect(ask).toContainText('(image 1: PNG image');
  await expect(cellById(page, findings.id)).toContainText('What the plot shows');
  await shot(page, '4-plot', plotImage);
  await shot(page, '5-goat-sees-the-plot', ask.locator('img[src^="data:image/png;base64,"]'));
  await shot(page, '6-findings', cellById(page, 'after'));

  // The model's next request (the one answered by the findings turn) holds the figure.
  const log = JSON.parse(await kernelRun(page, REQUESTS));
  expect(log.turns).toEqual([0, 1, 2, 3, 4, 5]);
  expect(log.images['3']).toBe(0);
  expect(log.images['4']).toBe(1);
  await checkTokenCounts(page, 'dataframe_agent');
});

test('teaching_demo.ipynb: the clicks its steps name play the recorded session', async ({
  page,
  tmpPath
}) => {
  await putExample(page, tmpPath, 'teaching_demo');
  await openNotebook(page, `${tmpPath}/teaching_demo.ipynb`);
  expect(await kernelRun(page, PREPARE)).toContain('PREPARED');
  await startCell(page, 'setup');
  await expectText(await outputOf(page, 'setup'), 'replaying the recorded session', KERNEL_READY_MS);

  // Step 1: the plan, Approve; then Bash asks: Allow for session.
  await startCell(page, 'plan');
  const plan = await outputOf(page, 'plan');
  await (await expectButton(plan, 'Approve')).click();
  await expect(plan).toContainText('Plan approved by the user');
  await expect(plan).toContainText('python report.py');
  await (await expectButton(plan, 'Allow for session')).click();
  await expectText(plan, 'East is ahead by about 50k');
  await expect(plan).toContainText('549,676.72');

  // Step 2: the question, then Deny with feedback, then Allow once.
  await startCell(page, 'ask');
  const ask = await outputOf(page, 'ask');
  await (await expectButton(ask, 'Month and revenue')).click();
  await expectButton(ask, 'Deny');
  await ask.getByPlaceholder('Optional feedback for the model').fill(FEEDBACK);
  await ask.getByPlaceholder('Optional feedback for the model').press('Enter');
  await ask.getByRole('button', { name: 'Deny', exact: true }).click();
  await expectText(ask, 'the best month\'s revenue gets the same format');
  await expect(ask).toContainText(`Denied by the user`);
  await expect(ask).toContainText(`feedback: ${FEEDBACK}`);
  await (await expectButton(ask, 'Allow once')).click();
  await expectText(ask, 'Every region had its best month');
  await expect(ask).toContainText('best month 2025-12 (59,841.90)');
  expect(await getContents(page, `${tmpPath}/report.py`)).toContain('({value:,.2f})');

  // Step 3: Revert this run puts report.py back as step 1 wrote it.
  const revert = ask.getByRole('button', { name: 'Revert this run' }); // its icon adds a space
  await expect(revert).toBeVisible();
  await revert.click();
  await expectText(ask, 'Partly reverted %%goat run'); // the Bash command's effects stay
  const report = await getContents(page, `${tmpPath}/report.py`);
  expect(report).toContain('revenue[row["region"]] += float(row["revenue"])');
  expect(report).not.toContain('best month');
  await startCell(page, 'show');
  await expect(await outputOf(page, 'show')).toContainText('print(f"{region:<6} {total:12,.2f}")');
  await checkTokenCounts(page, 'teaching_demo');
});
