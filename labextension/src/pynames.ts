/**
 * The top-level names a notebook cell's Python source binds and the ones it reads before binding
 * them: what the stale markers need to mark only cells that depend on a changed variable (marimo's
 * rule). An approximation without a Python parser: strings and comments are dropped (an f-string's
 * `{expressions}` are kept), names local to a function, lambda or comprehension are not the
 * cell's; writing into an object (`df["a"] = 1`, `obj.x += 1`, `lst.append(x)`, any call with
 * `inplace=True`, `setattr(obj, ...)`) changes `df`, `obj` and `lst`, as binding them does (the kernel's
 * rule, goat_jupyter/kernel/cell_names.py); attributes and keyword-argument names are no variables. IPython magics and shell lines bind nothing; a cell magic other than the timing and
 * capture ones makes the whole cell bind and read nothing (`%%goat`, `%%bash`, `%%html`, ...).
 */

export interface INames {
  /** Names the cell binds at the top level (assignments, imports, def, class, for, with, del). */
  binds: Set<string>;
  /** Names the cell reads before it binds them itself: what it takes from the kernel. */
  reads: Set<string>;
}

const KEYWORDS = new Set(
  (
    'False None True and as assert async await break class continue def del elif else except finally for ' +
    'from global if import in is lambda nonlocal not or pass raise return try while with yield'
  ).split(' ')
);
/** Methods that change their object (lists, dicts, sets, numpy arrays); others only with
 * `inplace=True`. The same list as the kernel's MUTATORS (cell_names.py); a Python test keeps them equal. */
export const MUTATORS = [
  'append',
  'extend',
  'insert',
  'pop',
  'remove',
  'clear',
  'update',
  'add',
  'discard',
  'sort',
  'reverse',
  'setdefault',
  'popitem',
  'difference_update',
  'intersection_update',
  'symmetric_difference_update',
  'fill',
  'resize',
  'put',
  'itemset'
];
const MUTATOR_SET = new Set(MUTATORS);
const PYTHON_CELL_MAGICS = /^%%(time|timeit|capture)\b/;
const STRING = /([rRbBuUfF]{0,2})('''|"""|'|")/y;

/** Python source → the text with comments removed and each string replaced by `0` (f-string
 * expressions kept, in parentheses). */
function stripStrings(source: string): string {
  let out = '';
  let i = 0;
  while (i < source.length) {
    const ch = source[i];
    if (ch === '#') {
      while (i < source.length && source[i] !== '\n') {
        i++;
      }
      continue;
    }
    STRING.lastIndex = i;
    const start = /[A-Za-z_0-9]/.test(source[i - 1] ?? '') ? null : STRING.exec(source);
    if (!start) {
      out += ch;
      i++;
      continue;
    }
    const quote = start[2];
    let j = i + start[0].length;
    let body = '';
    while (j < source.length && !source.startsWith(quote, j) && (quote.length === 3 || source[j] !== '\n')) {
      body += source[j] === '\\' ? source.slice(j, j + 2) : source[j];
      j += source[j] === '\\' ? 2 : 1;
    }
    i = j + quote.length;
    out += /f/i.test(start[1]) ? ` (${fieldExpressions(body)}) ` : ' 0 ';
  }
  return out;
}

/** The `{...}` expressions of an f-string body, comma-joined (format specs dropped). */
function fieldExpressions(body: string): string {
  const fields = body.replace(/\{\{|\}\}/g, '').match(/\{[^{}]*\}/g) ?? [];
  return fields.map(field => field.slice(1, -1).split(/[!:=](?![=])/)[0]).join(', ');
}

interface IStatement {
  indent: number;
  text: string;
}

/** Logical statements: bracketed and backslash-continued lines joined, `;` split at depth 0. */
function statements(code: string): IStatement[] {
  const result: IStatement[] = [];
  let depth = 0;
  let current = '';
  let indent = 0;
  const flush = () => {
    current.split(';').forEach(part => part.trim() && result.push({ indent, text: part.trim() }));
    current = '';
  };
  for (const line of code.split('\n')) {
    if (!current) {
      indent = line.length - line.trimStart().length;
      const first = line.trimStart()[0];
      if (first === '%' || first === '!' || first === '?') {
        continue; // a line magic or shell line
      }
    }
    current += ` ${line}`;
    for (const ch of line) {
      depth += '([{'.includes(ch) ? 1 : ')]}'.includes(ch) ? -1 : 0;
    }
    depth = Math.max(depth, 0);
    if (depth === 0 && !line.trimEnd().endsWith('\\')) {
      flush();
    }
  }
  flush();
  return result;
}

interface IToken {
  name: string;
  depth: number;
  before: string; // the nearest non-space character before it
  after: string; // the nearest non-space text after it (two characters)
}

function tokens(text: string): IToken[] {
  const found: IToken[] = [];
  let depth = 0;
  const pattern = /[A-Za-z_][A-Za-z0-9_]*|[([{]|[)\]}]|\d+\.?\d*|./gy;
  let match: RegExpExecArray | null;
  while ((match = pattern.exec(text))) {
    const word = match[0];
    if ('([{'.includes(word)) {
      depth++;
    } else if (')]}'.includes(word)) {
      depth--;
    } else if (/^[A-Za-z_]/.test(word)) {
      const before = text.slice(0, match.index).trimEnd().slice(-1);
      const after = text.slice(pattern.lastIndex).trimStart().slice(0, 2);
      found.push({ name: word, depth, before, after });
    }
  }
  return found;
}

/** The names a target (`a, (b, c)`, `x: int`, `df["a"]`, `obj.attr`) binds. */
function targetNames(target: string): string[] {
  const text = target.split(/:(?!=)/)[0];
  return tokens(text)
    .filter(t => t.before !== '.' && !['.', '[', '('].includes(t.after[0]) && !KEYWORDS.has(t.name))
    .filter(t => !tokens(text).some(other => other.depth < t.depth && other.after[0] === '['))
    .map(t => t.name);
}

/** What assigning to a target changes: the names it binds, or the object it writes into
 * (`df["a"] = 1` and `obj.attr += 1` change `df` and `obj`). */
function changedNames(target: string): string[] {
  const base = /^\s*([A-Za-z_]\w*)\s*[[.]/.exec(target);
  return base ? [base[1]] : targetNames(target);
}

/** Top-level `=` positions of an assignment statement (not `==`, `<=`, `>=`, `!=`, not in brackets). */
function assignmentParts(text: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let last = 0;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i];
    depth += '([{'.includes(ch) ? 1 : ')]}'.includes(ch) ? -1 : 0;
    if (ch === '=' && depth === 0 && text[i + 1] !== '=' && !'=<>!:+-*/%&|^@'.includes(text[i - 1] ?? '')) {
      parts.push(text.slice(last, i));
      last = i + 1;
    }
  }
  parts.push(text.slice(last));
  return parts;
}

/** Names local to comprehensions and lambdas inside one statement. */
function innerLocals(text: string): Set<string> {
  const locals = new Set<string>();
  for (const match of text.matchAll(/\bfor\s+(.+?)\s+in\b/g)) {
    targetNames(match[1]).forEach(name => locals.add(name));
  }
  for (const match of text.matchAll(/\blambda\b([^:]*):/g)) {
    match[1].split(',').forEach(param => {
      const name = param.replace(/[*\s]/g, '').split('=')[0];
      if (name) {
        locals.add(name);
      }
    });
  }
  return locals;
}

/** What one statement binds, and the expression text whose names it reads. */
function bindings(text: string): { binds: string[]; read: string } {
  let match = /^import\s+(.+)$/.exec(text);
  if (match) {
    const binds = match[1].split(',').map(part => {
      const [module, alias] = part.trim().split(/\s+as\s+/);
      return (alias ?? module.split('.')[0]).trim();
    });
    return { binds, read: '' };
  }
  match = /^from\s+\S+\s+import\s+(.+)$/.exec(text);
  if (match) {
    const names = match[1].replace(/[()]/g, '').split(',');
    return { binds: names.map(part => part.trim().split(/\s+as\s+/).pop()!.trim()).filter(n => n && n !== '*'), read: '' };
  }
  match = /^(?:async\s+)?(?:def|class)\s+([A-Za-z_]\w*)/.exec(text);
  if (match) {
    return { binds: [match[1]], read: '' }; // its body is read as a block of its own
  }
  match = /^(?:async\s+)?for\s+(.+?)\s+in\s+(.+):/.exec(text);
  if (match) {
    return { binds: targetNames(match[1]), read: match[2] };
  }
  match = /^(?:async\s+)?with\s+(.+):/.exec(text);
  if (match) {
    const binds = [...match[1].matchAll(/\bas\s+([A-Za-z_]\w*)/g)].map(m => m[1]);
    return { binds, read: match[1].replace(/\bas\s+[A-Za-z_]\w*/g, '') };
  }
  match = /^except\b(.*?)\bas\s+([A-Za-z_]\w*)\s*:/.exec(text);
  if (match) {
    return { binds: [match[2]], read: match[1] };
  }
  match = /^del\s+(.+)$/.exec(text);
  if (match) {
    return { binds: targetNames(match[1]), read: match[1] };
  }
  match = /^([^=]+?)\s*(?:\+|-|\*\*?|\/\/?|%|@|&|\||\^|>>|<<)=(?!=)(.*)$/.exec(text);
  if (match) {
    return { binds: changedNames(match[1]), read: `${match[1]} ${match[2]}` };
  }
  const parts = assignmentParts(text.replace(/:\s*$/, ''));
  const walrus = [...text.matchAll(/([A-Za-z_]\w*)\s*:=/g)].map(m => m[1]);
  const targets = parts.slice(0, -1);
  const annotated = parts.length === 1 && /^[A-Za-z_]\w*\s*:(?!=)/.test(text) ? [text.split(':')[0]] : [];
  return {
    binds: [...targets, ...annotated].flatMap(changedNames).concat(walrus),
    read: [...targets.filter(t => targetNames(t).length === 0 || /[[.]/.test(t)), parts[parts.length - 1]].join(' ')
  };
}

/** The bracket text of the call whose `(` is at `open` (up to its matching `)` or the end). */
function callArguments(text: string, open: number): string {
  let depth = 0;
  for (let i = open; i < text.length; i++) {
    depth += '([{'.includes(text[i]) ? 1 : ')]}'.includes(text[i]) ? -1 : 0;
    if (depth === 0) {
      return text.slice(open + 1, i);
    }
  }
  return text.slice(open + 1);
}

/** The root name of the object expression that ends just before `end` (`df`, for `df.a[0].b()`),
 * walking back over attributes, subscripts and calls; null when it starts with no name. */
function rootBefore(text: string, end: number): string | null {
  let i = end;
  let root: string | null = null;
  for (;;) {
    while (i > 0 && text[i - 1] === ' ') {
      i--;
    }
    if (')]}'.includes(text[i - 1] ?? '(')) {
      let depth = 0;
      do {
        i--;
        depth += ')]}'.includes(text[i]) ? 1 : '([{'.includes(text[i]) ? -1 : 0;
      } while (i > 0 && depth > 0);
      root = null;
      continue;
    }
    const name = /[A-Za-z_]\w*$/.exec(text.slice(0, i));
    if (!name) {
      return root;
    }
    i -= name[0].length;
    root = name[0];
    const before = text.slice(0, i).trimEnd();
    if (!before.endsWith('.')) {
      return KEYWORDS.has(root) ? null : root;
    }
    i = before.length - 1;
  }
}

/** Names whose objects a statement changes by a call: `lst.append(x)`, `df.x.sort_values(inplace=True)`,
 * `setattr(obj, 'a', 1)` / `delattr(obj, 'a')` (the root name of the object called on). */
function calledChanges(text: string): string[] {
  const changed: string[] = [];
  for (const match of text.matchAll(/\.\s*([A-Za-z_]\w*)\s*\(/g)) {
    const args = callArguments(text, match.index! + match[0].length - 1);
    if (MUTATOR_SET.has(match[1]) || /(?:^|[,(\s])inplace\s*=\s*True\b/.test(args)) {
      const root = rootBefore(text, match.index!);
      if (root) {
        changed.push(root);
      }
    }
  }
  for (const match of text.matchAll(/(?<![\w.])(?:setattr|delattr)\s*\(\s*([A-Za-z_]\w*)/g)) {
    changed.push(match[1]);
  }
  return changed;
}

/** Names read by an expression text (not attributes, keyword-argument names or keywords). */
function readNames(text: string): string[] {
  const locals = innerLocals(text);
  return tokens(text)
    .filter(t => t.before !== '.' && !KEYWORDS.has(t.name) && !locals.has(t.name))
    .filter(t => !(t.depth > 0 && t.after[0] === '=' && t.after[1] !== '='))
    .map(t => t.name);
}

/** The names a cell binds at the top level and those it reads from the kernel. */
export function cellNames(source: string): INames {
  const binds = new Set<string>();
  const reads = new Set<string>();
  let code = source;
  if (code.trimStart().startsWith('%%')) {
    if (!PYTHON_CELL_MAGICS.test(code.trimStart())) {
      return { binds, reads };
    }
    code = code.trimStart().split('\n').slice(1).join('\n');
  }
  let inside: { indent: number; locals: Set<string> } | null = null;
  for (const statement of statements(stripStrings(code))) {
    if (inside && statement.indent > inside.indent) {
      const own = bindings(statement.text);
      own.binds.forEach(name => inside!.locals.add(name));
      paramNames(/^(?:async\s+)?def\s+\w+\s*\((.*)\)/.exec(statement.text)?.[1] ?? '').forEach(name =>
        inside!.locals.add(name)
      );
      readNames(own.read)
        .filter(name => !inside!.locals.has(name) && !binds.has(name))
        .forEach(name => reads.add(name));
      continue;
    }
    inside = null;
    const found = bindings(statement.text);
    readNames(found.read).filter(name => !binds.has(name)).forEach(name => reads.add(name));
    found.binds.forEach(name => binds.add(name));
    const def = /^(?:async\s+)?(def|class)\s+\w+\s*(?:\((.*)\))?/.exec(statement.text);
    if (!def) {
      calledChanges(statement.text.replace(/\blambda\b.*/, '')).forEach(name => binds.add(name));
    }
    if (def) {
      const params = def[1] === 'def' ? paramNames(def[2] ?? '') : [];
      readNames(def[1] === 'class' ? def[2] ?? '' : '').forEach(name => reads.add(name)); // base classes
      inside = { indent: statement.indent, locals: new Set(params) };
    }
  }
  return { binds, reads };
}

function paramNames(params: string): string[] {
  return params
    .split(',')
    .map(param => param.replace(/[*\s]/g, '').split(/[:=]/)[0])
    .filter(Boolean);
}
