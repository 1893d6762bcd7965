// JupyterLab 4.6's Markdown pipeline in node, for tests/ui/test_ui_safe_markdown.py: removeMath
// (@jupyterlab/rendermime), marked with the options and plugins of @jupyterlab/markedparser-extension,
// replaceMath; then htmlparser2 lists the elements the browser would build. One JSON string (the
// Markdown) per stdin line in, one JSON line out: {"elements": [{"tag", "attrs", "outside"}]}.
//   node marked_render.mjs <labextension folder with node_modules>
import { createRequire } from 'node:module';
import { readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { pathToFileURL } from 'node:url';
import { resolve } from 'node:path';

const require = createRequire(resolve(process.argv[2], 'package.json'));
const load = async name => import(pathToFileURL(require.resolve(name)).href);
globalThis.navigator ??= { appName: 'node' }; // latex.js asks which browser it runs in

const { Marked } = await load('marked');
const { gfmHeadingId } = await load('marked-gfm-heading-id');
const { mangle } = await load('marked-mangle');
const { Parser } = await load('htmlparser2');
const latexPath = require.resolve('@jupyterlab/rendermime/lib/latex.js');
const latexSource = readFileSync(latexPath, 'utf8');
const { removeMath, replaceMath } = await import(
  'data:text/javascript;base64,' + Buffer.from(latexSource).toString('base64')
);
const marked = new Marked(gfmHeadingId(), mangle());

async function render(source) {
  const parts = removeMath(source);
  const html = await marked.parse(parts.text, { async: true, gfm: true });
  return replaceMath(html, parts.math);
}

function elements(html) {
  const found = [];
  let depth = 0;
  let wrapperDepth = null;
  const parser = new Parser(
    {
      onopentag(tag, attrs) {
        found.push({ tag, attrs, outside: wrapperDepth === null });
        depth++;
        if (wrapperDepth === null && tag === 'div' && attrs.class === 'mathjax_ignore') wrapperDepth = depth;
      },
      onclosetag() {
        if (depth === wrapperDepth) wrapperDepth = -1; // closed: what follows is outside
        depth--;
      },
      ontext(text) {
        if (wrapperDepth !== null && wrapperDepth !== -1) return;
        if (text.trim()) found.push({ tag: '#text', attrs: {}, outside: true });
      }
    },
    { decodeEntities: true, lowerCaseTags: true, lowerCaseAttributeNames: true }
  );
  parser.write(html);
  parser.end();
  return found.map(e => ({ ...e, outside: e.outside || wrapperDepth === null }));
}

const versions = {
  marked: require('marked/package.json').version,
  markedparser: require('@jupyterlab/markedparser-extension/package.json').version,
  markedRange: require('@jupyterlab/markedparser-extension/package.json').dependencies.marked
};
process.stdout.write(JSON.stringify({ versions }) + '\n');
const lines = createInterface({ input: process.stdin });
for await (const line of lines) {
  const html = await render(JSON.parse(line));
  process.stdout.write(JSON.stringify({ html, elements: elements(html) }) + '\n');
}
