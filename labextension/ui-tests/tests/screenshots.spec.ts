/**
 * README screenshots of a real (replayed) goat run in JupyterLab: light, dark and a narrow
 * window. Skipped unless GOAT_SCREENSHOTS_DIR is set; `bash scripts/screenshots` sets it.
 */
import { IJupyterLabPageFixture, test } from '@jupyterlab/galata';

import {
  expectButton,
  expectText,
  openNotebook,
  outputOf,
  putCassette,
  putNotebook,
  putText,
  setupSource,
  startCell,
  startGoat,
  tagCells,
  cellById,
  Turn
} from './goat-helpers';

declare const process: { env: Record<string, string | undefined> };
const OUT = process.env.GOAT_SCREENSHOTS_DIR;

test.describe.configure({ timeout: 240_000 });

function call(name: string, args: Record<string, unknown>) {
  return { name, arguments: args };
}

const SALES = 'month,revenue\n2024-01,120\n2024-02,95\n2024-03,130\n2024-04,80\n2024-05,140\n2024-06,70\n';
const TODOS = [
  { content: 'Read the sales data', status: 'completed', activeForm: 'Reading the sales data' },
  { content: 'Find the three worst months', status: 'in_progress', activeForm: 'Finding the worst months' },
  { content: 'Write a summary file', status: 'pending', activeForm: 'Writing the summary' }
];
const TURNS: Turn[] = [
  {
    text: "I'll look at the data first.",
    tool_calls: [call('TodoWrite', { todos: TODOS }), call('Read', { file_path: 'sales.csv' })]
  },
  { tool_calls: [call('Grep', { pattern: '2024-0[46]', output_mode: 'content' })] },
  {
    tool_calls: [
      call('Bash', { command: "sort -t, -k2 -n sales.csv | head -4 | tail -3 | cut -d, -f1 | paste -sd' '" })
    ]
  },
  {
    tool_calls: [
      call('Write', {
        file_path: 'worst_months.md',
        content: '# Worst months\n\n- 2024-06: 70\n- 2024-04: 80\n- 2024-02: 95\n'
      })
    ]
  },
  {
    tool_calls: [
      call('TodoWrite', { todos: TODOS.map(todo => ({ ...todo, status: 'completed' })) })
    ]
  },
  {
    text:
      'The three worst months are **June** (70), **April** (80) and **February** (95). ' +
      'I wrote them to `worst_months.md`.'
  }
];

async function shoot(page: IJupyterLabPageFixture, name: string) {
  await tagCells(page);
  await page.waitForTimeout(400);
  await cellById(page, 'goat').screenshot({ path: `${OUT}/${name}.png` });
}

test('README screenshots', async ({ page, tmpPath }) => {
  test.skip(!OUT, 'set GOAT_SCREENSHOTS_DIR (bash scripts/screenshots)');
  await page.setViewportSize({ width: 1100, height: 1000 });
  await putText(page, `${tmpPath}/sales.csv`, SALES);
  await putCassette(page, `${tmpPath}/shots.json`, TURNS);
  await putNotebook(page, `${tmpPath}/analysis.ipynb`, [
    { id: 'setup', cell_type: 'code', source: setupSource('shots.json') },
    {
      id: 'goat',
      cell_type: 'code',
      source: '%%goat\nFind the three worst months in sales.csv and write them to worst_months.md.'
    }
  ]);
  await openNotebook(page, `${tmpPath}/analysis.ipynb`);
  await page.evaluate(() => (window as any).jupyterapp.shell.collapseLeft());
  await startGoat(page, 'setup');
  await startCell(page, 'goat');
  const output = await outputOf(page, 'goat');
  const allow = await expectButton(output, 'Allow once');
  await shoot(page, 'approval-light');
  await allow.click();
  await expectText(output, 'I wrote them to');
  await shoot(page, 'transcript-light');
  await page.theme.setDarkTheme();
  await shoot(page, 'transcript-dark');
  await page.theme.setLightTheme();
  await page.setViewportSize({ width: 560, height: 1000 });
  await shoot(page, 'transcript-narrow');
});
