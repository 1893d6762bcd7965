/**
 * The model's Markdown runs no script and loads nothing (issue 32, point 1; issue 33, point 4): the
 * red team's payloads and their variants in a live answer, in a recording replayed by Run All and
 * in an ExitPlanMode plan; no script runs (window.__pwned stays unset, no file is written through
 * the contents API), no request leaves the page, links lead only to http(s)/mailto/relative
 * addresses; and the budget stop line shows dollar signs, not math.
 */
import { expect, IJupyterLabPageFixture, test } from '@jupyterlab/galata';
import { Locator } from '@playwright/test';

import {
  expectButton,
  expectText,
  getContents,
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

const WRITE = [
  'window.__pwned=1;',
  "fetch('/api/contents/'+document.body.dataset.goatTmp+'/pwned.txt',{method:'PUT',",
  "body:JSON.stringify({type:'file',format:'text',content:'pwned'})})"
].join('');
const IMG = `<img src=x onerror="${WRITE}">`;
const END = 'END-OF-PAYLOADS';
const PAYLOADS = [
  'Costs $0.0295 of $0.0500 so far.',
  `Inline ${IMG} and <script>window.__pwned=2</script> and <svg/onload="window.__pwned=3">`,
  `<div>\n${IMG}\n</div>`,
  '[click](javascript:window.__pwned=4) [tab](java\tscript:window.__pwned=5) [ent](javascript&#58;window.__pwned=6)',
  '[UP](JAVASCRIPT:window.__pwned=7) <javascript:window.__pwned=8> [ref][r] [data](data:text/html,<script>x</script>)',
  '',
  '[r]: vbscript:msgbox(1)',
  '',
  '![track](https://example.org/track.png) [ok](https://example.org/docs)',
  '',
  `~~~\n${IMG}\n~~~`,
  `\t\`\`\`\n${IMG}\n\t\`\`\``,
  `- a\n\n  \`\`\`\n${IMG}`,
  '',
  `\`\`\`\n\`\`\`~\n${IMG}\n\`\`\``,
  '',
  `Say ${END}.`,
  '',
  `\`\`\`x\`\n${IMG}`
].join('\n');

const TURNS: Turn[] = [
  { match: '[xss]', text: PAYLOADS },
  { match: '[plan]', tool_calls: [{ name: 'ExitPlanMode', arguments: { plan: `# Plan\n${PAYLOADS}` } }] },
  { match: '[plan]', text: 'Planned.' },
  {
    match: '[priced]',
    tool_calls: [{ name: 'Bash', arguments: { command: 'echo one' } }],
    usage: { prompt_tokens: 30000, completion_tokens: 100 }
  },
  {
    match: '[priced]',
    tool_calls: [{ name: 'Bash', arguments: { command: 'echo two' } }],
    usage: { prompt_tokens: 30000, completion_tokens: 100 }
  }
];

/** Every request the page makes from now on. */
function watchRequests(page: IJupyterLabPageFixture): string[] {
  const seen: string[] = [];
  page.on('request', request => seen.push(`${request.method()} ${request.url()}`));
  return seen;
}

async function expectNothingRan(page: IJupyterLabPageFixture, tmpPath: string, requests: string[]) {
  await page.waitForTimeout(1500); // an onerror handler or a fetch would have run by now
  expect(await page.evaluate(() => (window as any).__pwned)).toBeUndefined();
  expect(await getContents(page, `${tmpPath}/pwned.txt`)).toBeNull();
  const base = new URL(page.url());
  const away = requests.filter(line => {
    const url = new URL(line.split(' ')[1]);
    return url.host !== base.host || /pwned|\/x$|track\.png/.test(url.pathname);
  });
  expect(away).toEqual([]);
}

/** No element outside what Markdown makes, no unsafe link, no math typeset. */
async function expectOnlySafeMarkup(output: Locator) {
  const found = await output.evaluate(area => {
    const bad: string[] = [];
    // What outputs render, without JupyterLab's own icons.
    const rendered = Array.from(area.querySelectorAll('.jp-RenderedMarkdown, .jp-RenderedHTMLCommon'));
    const root = {
      querySelectorAll: (selector: string) => rendered.flatMap(r => Array.from(r.querySelectorAll(selector))),
      querySelector: (selector: string) => rendered.map(r => r.querySelector(selector)).find(e => e) ?? null
    };
    for (const element of Array.from(root.querySelectorAll('img, script, svg, iframe, object, embed'))) {
      bad.push(element.outerHTML.slice(0, 80));
    }
    for (const element of Array.from(root.querySelectorAll('*'))) {
      for (const name of element.getAttributeNames()) {
        if (name.startsWith('on')) bad.push(`${element.tagName}[${name}]`);
      }
    }
    for (const link of Array.from(root.querySelectorAll('a[href]'))) {
      const href = link.getAttribute('href')!;
      const scheme = /^([a-z][a-z0-9+.-]*):/i.exec(href.replace(/[\t\n\r]/g, '').trim());
      if (scheme && !['http', 'https', 'mailto'].includes(scheme[1].toLowerCase())) bad.push(`a[href=${href}]`);
    }
    if (root.querySelector('mjx-container, .MathJax')) bad.push('math');
    return bad;
  });
  expect(found).toEqual([]);
}

async function setup(page: IJupyterLabPageFixture, tmpPath: string) {
  await putCassette(page, `${tmpPath}/xss.json`, TURNS);
  await putNotebook(page, `${tmpPath}/xss.ipynb`, [
    { id: 'setup', cell_type: 'code', source: setupSource('xss.json') },
    { id: 'answer', cell_type: 'code', source: '%%goat\n[xss] show me' }
  ]);
  await openNotebook(page, `${tmpPath}/xss.ipynb`);
  await page.evaluate(tmp => (document.body.dataset.goatTmp = tmp), tmpPath);
  await startGoat(page, 'setup');
}

test('a live answer and its Run All replay render the payloads as text', async ({ page, tmpPath }) => {
  const requests = watchRequests(page);
  await setup(page, tmpPath);
  await startCell(page, 'answer');
  const output = await outputOf(page, 'answer');
  await expectText(output, END);
  await expectText(output, 'Done');
  await expectText(output, '$0.0295 of $0.0500');
  await expectOnlySafeMarkup(output);
  await expectNothingRan(page, tmpPath, requests);

  // The saved notebook, opened from disk in a fresh kernel: Run All replays its recording.
  await page.notebook.save();
  const saved = await getContents(page, `${tmpPath}/xss.ipynb`);
  await page.request.put(`/api/contents/${tmpPath}/replayed.ipynb`, {
    data: { type: 'notebook', format: 'json', content: saved }
  });
  await openNotebook(page, `${tmpPath}/replayed.ipynb`);
  await page.evaluate(tmp => (document.body.dataset.goatTmp = tmp), tmpPath);
  await page.evaluate(() => (window as any).jupyterapp.commands.execute('notebook:run-all-cells'));
  const replayed = await outputOf(page, 'answer');
  await expectText(replayed, 'replayed', 120_000);
  await expectText(replayed, END);
  await expectOnlySafeMarkup(replayed);
  await expectNothingRan(page, tmpPath, requests);
});

test('an ExitPlanMode plan renders the payloads as text', async ({ page, tmpPath }) => {
  const requests = watchRequests(page);
  await setup(page, tmpPath);
  await page.notebook.addCell('code', '%%goat --mode plan\n[plan] plan it');
  await tagCells(page);
  const id = await page.evaluate(() => {
    const cells = (window as any).jupyterapp.shell.currentWidget.content.model.cells;
    return cells.get(cells.length - 1).id;
  });
  await startCell(page, id);
  const output = await outputOf(page, id);
  const keep = await expectButton(output, 'Keep planning');
  await expectText(output, END);
  await expectOnlySafeMarkup(output);
  await expectNothingRan(page, tmpPath, requests);
  await keep.click();
});

test('the budget stop line shows dollar signs', async ({ page, tmpPath }) => {
  await setup(page, tmpPath);
  await page.notebook.addCell(
    'code',
    '%%goat --mode bypassPermissions --model openai/gpt-4o-mini --max-cost 0.005\n[priced] spend'
  );
  const id = await page.evaluate(() => {
    const cells = (window as any).jupyterapp.shell.currentWidget.content.model.cells;
    return cells.get(cells.length - 1).id;
  });
  await startCell(page, id);
  const output = await outputOf(page, id);
  await expectText(output, 'Stopped at the budget');
  await expectText(output, '$0.0046 of $0.0050');
  await expectOnlySafeMarkup(output);
  await output.screenshot({ path: test.info().outputPath('budget-line.png') });

  // The control: the same words in HTML without goat's mathjax_ignore block do become math here.
  await page.notebook.addCell('code', 'from IPython.display import HTML\nHTML("<div>$0.0046 of $0.0050</div>")');
  const control = await page.evaluate(() => {
    const cells = (window as any).jupyterapp.shell.currentWidget.content.model.cells;
    return cells.get(cells.length - 1).id;
  });
  await startCell(page, control);
  await expect((await outputOf(page, control)).locator('mjx-container')).toHaveCount(1, { timeout: 30_000 });
});
