/**
 * The transcript as a user sees it (issue 12): Stop ends a run with one line, a five-tool run stays
 * compact, a slow model shows a live status line, RunCell's approval shows the cell's source,
 * diff lines keep WCAG AA contrast in the light and dark themes, and nothing is clipped in a
 * 500 px wide notebook.
 */
import { expect, IJupyterLabPageFixture, test } from '@jupyterlab/galata';
import { Locator } from '@playwright/test';

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
  Turn
} from './goat-helpers';

test.describe.configure({ timeout: 240_000 });

function call(name: string, args: Record<string, unknown>) {
  return { name, arguments: args };
}

const TURNS: Turn[] = [
  {
    match: '[five]',
    text: 'Looking around.',
    tool_calls: [
      call('Read', { file_path: 'data.txt' }),
      call('Glob', { pattern: '*.txt' }),
      call('Grep', { pattern: 'line', output_mode: 'content' }),
      call('LS', { path: '.' }),
      call('Read', { file_path: 'data.txt', limit: 2 })
    ]
  },
  { match: '[five]', text: 'Five tools done.' },
  { match: '[slow]', text: 'Sorry for the wait.', delay_s: 8 },
  { match: '[stop]', tool_calls: [call('Bash', { command: 'echo started-sleeping; sleep 60' })] },
  { match: '[runcell]', tool_calls: [call('RunCell', { cell_id: 'target' })] },
  { match: '[runcell]', text: 'Ran it.' },
  { match: '[diff]', tool_calls: [call('Read', { file_path: 'data.txt' })] },
  {
    match: '[diff]',
    tool_calls: [
      call('Write', {
        file_path: 'data.txt',
        content: 'line one\nline two changed\nline three\nline four\nline five\n'
      })
    ]
  },
  { match: '[diff]', text: 'Changed line two.' }
];

const DATA = 'line one\nline two\nline three\nline four\nline five\n';

async function setup(page: IJupyterLabPageFixture, tmpPath: string, cells: { id: string; source: string }[]) {
  await putText(page, `${tmpPath}/data.txt`, DATA);
  await putCassette(page, `${tmpPath}/transcript.json`, TURNS);
  await putNotebook(page, `${tmpPath}/transcript.ipynb`, [
    { id: 'setup', cell_type: 'code', source: setupSource('transcript.json') },
    ...cells.map(cell => ({ ...cell, cell_type: 'code' as const }))
  ]);
  await openNotebook(page, `${tmpPath}/transcript.ipynb`);
  await startGoat(page, 'setup');
}

async function interruptKernel(page: IJupyterLabPageFixture): Promise<void> {
  const id = await page.evaluate(
    () => (window as any).jupyterapp.shell.currentWidget.sessionContext.session.kernel.id
  );
  const response = await page.request.post(`/api/kernels/${id}/interrupt`);
  expect(response.ok()).toBe(true);
}

/** WCAG contrast of each element's text against its composited background. */
async function contrasts(lines: Locator): Promise<number[]> {
  return lines.evaluateAll(nodes => {
    const probe = document.createElement('canvas').getContext('2d')!;
    const rgba = (css: string): number[] => {
      // Resolve any CSS colour (color-mix, color(srgb ...)) through a canvas pixel.
      probe.clearRect(0, 0, 1, 1);
      probe.fillStyle = '#000';
      probe.fillStyle = css;
      probe.fillRect(0, 0, 1, 1);
      const [r, g, b, a] = probe.getImageData(0, 0, 1, 1).data;
      return [r, g, b, a / 255];
    };
    const over = (top: number[], bottom: number[]) =>
      [0, 1, 2].map(i => top[i] * top[3] + bottom[i] * (1 - top[3])).concat([1]);
    const background = (node: Element): number[] => {
      const layers: number[][] = [];
      for (let el: Element | null = node; el; el = el.parentElement) {
        const color = rgba(getComputedStyle(el).backgroundColor);
        if (color[3] > 0) {
          layers.push(color);
        }
        if (color[3] >= 1) {
          break;
        }
      }
      let result = [255, 255, 255, 1];
      for (const layer of layers.reverse()) {
        result = over(layer, result);
      }
      return result;
    };
    const luminance = (c: number[]) => {
      const [r, g, b] = c.slice(0, 3).map(v => {
        const s = v / 255;
        return s <= 0.03928 ? s / 12.92 : Math.pow((s + 0.055) / 1.055, 2.4);
      });
      return 0.2126 * r + 0.7152 * g + 0.0722 * b;
    };
    return nodes.map(node => {
      const bg = background(node);
      const fg = over(rgba(getComputedStyle(node).color), bg);
      const [l1, l2] = [luminance(fg), luminance(bg)].sort((a, b) => b - a);
      return (l1 + 0.05) / (l2 + 0.05);
    });
  });
}

/** Elements inside `output` that stick out of it or scroll sideways. */
async function clipped(output: Locator): Promise<string[]> {
  return output.evaluate(root => {
    const box = root.getBoundingClientRect();
    const found: string[] = [];
    for (const el of Array.from(root.querySelectorAll('*'))) {
      const rect = el.getBoundingClientRect();
      if (rect.width === 0 || getComputedStyle(el).visibility === 'hidden') {
        continue;
      }
      const name = `${el.tagName.toLowerCase()}.${(el.className || '').toString().slice(0, 40)} "${(el.textContent || '').slice(0, 30)}"`;
      if (rect.right > box.right + 1) {
        found.push(`${name} ends ${Math.round(rect.right - box.right)} px to the right`);
      } else if (el.scrollWidth > el.clientWidth + 1 && getComputedStyle(el).overflowX !== 'visible') {
        const scrollsOnPurpose = getComputedStyle(el).overflowX === 'auto' && el.tagName === 'PRE';
        if (!scrollsOnPurpose) {
          found.push(`${name} scrolls sideways`);
        }
      }
    }
    return found;
  });
}

test('Stop ends the run with one line, no traceback, and the next cell runs', async ({ page, tmpPath }) => {
  await setup(page, tmpPath, [
    { id: 'stop', source: '%%goat --mode bypassPermissions\n[stop] sleep a minute' },
    { id: 'after', source: 'print("still " + "alive")' }
  ]);
  await startCell(page, 'stop');
  const output = await outputOf(page, 'stop');
  await expectText(output, 'started-sleeping');
  await interruptKernel(page);
  await expectText(output, 'Interrupted by the user after 1 turn.');
  const text = await output.innerText();
  for (const bad of ['Traceback', 'CancelledError', '__import__', 'goat_jupyter']) {
    expect(text, `after Stop the cell shows ${bad}`).not.toContain(bad);
  }
  await startCell(page, 'after');
  await expectText(await outputOf(page, 'after'), 'still alive');
});

test('a five-tool run is compact, with its details folded', async ({ page, tmpPath }) => {
  await setup(page, tmpPath, [{ id: 'five', source: '%%goat\n[five] look around' }]);
  await startCell(page, 'five');
  const output = await outputOf(page, 'five');
  await expectText(output, 'Five tools done.');
  const details = output.locator('details');
  expect(await details.count()).toBeGreaterThanOrEqual(5);
  expect(await details.evaluateAll(nodes => nodes.filter(n => (n as HTMLDetailsElement).open).length)).toBe(0);
  const height = (await output.boundingBox())!.height;
  console.log(`five-tool run output height: ${Math.round(height)} px`);
  expect(height).toBeLessThan(400);
  const text = await output.innerText();
  expect(text).not.toContain('call Read with offset');
  expect(text).toContain('lines 1-2 of 5');
  expect(text).not.toContain(tmpPath); // workspace-relative paths
});

test('a slow model shows the live status line until it answers', async ({ page, tmpPath }) => {
  await setup(page, tmpPath, [{ id: 'slow', source: '%%goat\n[slow] take your time' }]);
  await startCell(page, 'slow');
  const output = await outputOf(page, 'slow');
  const status = output.locator('.goat-status');
  await expect(status).toBeVisible({ timeout: 20_000 });
  await expect(status).toContainText('■ Stop to interrupt');
  // `Starting`, then `Loading litellm` in a fresh kernel, then `Working`: always the elapsed time.
  await expect(status).toContainText(/ · \d+s · ■ Stop to interrupt/);
  await expectText(output, 'Sorry for the wait.');
  await expect(output.locator('.goat-status')).toHaveCount(0);
});

test('the RunCell approval shows the cell source and JupyterLab number', async ({ page, tmpPath }) => {
  await setup(page, tmpPath, [
    { id: 'target', source: 'print("ran " + "by goat")' },
    { id: 'runcell', source: '%%goat\n[runcell] run the cell above' }
  ]);
  await startCell(page, 'runcell');
  const output = await outputOf(page, 'runcell');
  const allow = await expectButton(output, 'Allow once');
  await expect(output).toContainText('print("ran " + "by goat")');
  await expect(output).toContainText('Cell 2 of 3');
  await expect(output).toContainText('Always allow: saves');
  await allow.click();
  await expectText(output, 'Ran it.');
  await expectText(await outputOf(page, 'target'), 'ran by goat');
});

test('diff lines keep 4.5:1 contrast in light and dark, and nothing is clipped at 500 px', async ({
  page,
  tmpPath
}) => {
  await setup(page, tmpPath, [{ id: 'diff', source: '%%goat\n[diff] change line two' }]);
  await startCell(page, 'diff');
  const output = await outputOf(page, 'diff');
  await expectButton(output, 'Allow once');
  const lines = output.locator('pre > span');
  await expect(lines.first()).toBeVisible();
  for (const theme of ['light', 'dark']) {
    if (theme === 'dark') {
      await page.theme.setDarkTheme();
    }
    const ratios = await contrasts(lines);
    console.log(`${theme} diff line contrast: min ${Math.min(...ratios).toFixed(2)}:1`);
    expect(Math.min(...ratios)).toBeGreaterThanOrEqual(4.5);
  }
  await page.theme.setLightTheme();
  // A 500 px wide notebook: the buttons, the feedback box and the diff stay inside the cell.
  await page.evaluate(() => (window as any).jupyterapp.shell.collapseLeft());
  await page.evaluate(() => (window as any).jupyterapp.shell.collapseRight());
  const notebook = page.locator('.jp-NotebookPanel:visible .jp-WindowedPanel-outer').first();
  const current = (await notebook.boundingBox())!.width;
  const viewport = page.viewportSize()!;
  await page.setViewportSize({ width: Math.round(viewport.width - (current - 500)), height: viewport.height });
  await page.waitForTimeout(500);
  const width = (await notebook.boundingBox())!.width;
  console.log(`notebook width: ${Math.round(width)} px`);
  expect(Math.abs(width - 500)).toBeLessThan(20);
  expect(await clipped(output)).toEqual([]);
  await (await expectButton(output, 'Allow once')).click();
  await expectText(output, 'Changed line two.');
  expect(await clipped(output)).toEqual([]);
});

test('Revert this run leaves a record in place of its button', async ({ page, tmpPath }) => {
  await setup(page, tmpPath, [{ id: 'diff', source: '%%goat\n[diff] change line two' }]);
  await startCell(page, 'diff');
  const output = await outputOf(page, 'diff');
  await (await expectButton(output, 'Allow once')).click();
  await expectText(output, 'Changed line two.');
  const revert = output.getByRole('button', { name: 'Revert this run' });
  await expect(revert).toBeVisible();
  await revert.click();
  await expect(output).toContainText('Reverted %%goat run 1', { timeout: 30_000 });
  // The cell's saved outputs: the record as HTML/text, no widget view of the button any more.
  const savedOutputs = () =>
    page.evaluate(() => {
      const model = (window as any).jupyterapp.shell.currentWidget.content.model;
      for (let index = 0; index < model.cells.length; index++) {
        const json = model.cells.get(index).toJSON();
        if (json.id === 'diff') {
          return JSON.stringify(json.outputs);
        }
      }
      return '';
    });
  await expect.poll(savedOutputs, { timeout: 30_000 }).toContain('Reverted %%goat run 1');
  const outputs = await savedOutputs();
  expect(outputs).not.toContain('"widget":"revert"');
  expect(outputs).toContain('line two changed'); // the approved Write's diff stays in the record
});

test('reopened without its kernel, the notebook shows sentences, not "model not found"', async ({
  page,
  tmpPath
}) => {
  await setup(page, tmpPath, [{ id: 'diff', source: '%%goat\n[diff] change line two' }]);
  await startCell(page, 'diff');
  const output = await outputOf(page, 'diff');
  await (await expectButton(output, 'Allow once')).click();
  await expectText(output, 'Changed line two.');
  await expect(output.getByRole('button', { name: 'Revert this run' })).toBeVisible();
  await page.notebook.save();
  await page.evaluate(async () => {
    const panel = (window as any).jupyterapp.shell.currentWidget;
    await panel.sessionContext.shutdown();
  });
  await page.notebook.close(true);
  await page.notebook.openByPath(`${tmpPath}/transcript.ipynb`);
  const reopened = await outputOf(page, 'diff');
  await expect(reopened).toContainText('Changed line two.', { timeout: 30_000 }); // reopening renders after load
  await expect(reopened).toContainText('This run changed 1 file. `%goat undo` reverts it.');
  await page.waitForTimeout(2000);
  const text = await reopened.innerText();
  expect(text).not.toContain('model not found');
  expect(text).not.toContain('HBox(');
});
