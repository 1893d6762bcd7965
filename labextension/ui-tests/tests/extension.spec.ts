/**
 * Smoke test of the goat-jupyter labextension in a real JupyterLab: a cell opens a comm to
 * `goat.notebook`, the extension answers, and the cell it inserts appears live.
 */
import { expect, IJupyterLabPageFixture, test } from '@jupyterlab/galata';

/** Kernel-side client: an async cell that awaits replies, so the kernel never blocks. */
const CLIENT = `
import asyncio, json, time
from comm import create_comm

loop = asyncio.get_running_loop()
pending = {}

def on_msg(msg):
    data = msg["content"]["data"]
    future = pending.pop(data.get("id"), None)
    if future is not None:
        loop.call_soon_threadsafe(future.set_result, data)

comm = create_comm(target_name="goat.notebook")
comm.on_msg(on_msg)

async def ask(request):
    future = loop.create_future()
    pending[request["id"]] = future
    comm.send(request)
    return await asyncio.wait_for(future, 10)
`;

const SMOKE_CELL = `${CLIENT}
print("REPLY 1", json.dumps(await ask({"id": 1, "op": "hello"}), sort_keys=True))
inserted = await ask({"id": 2, "op": "insert_cell", "after_id": None,
                      "cell_type": "markdown", "source": "hello from goat"})
print("REPLY 2", json.dumps(inserted, sort_keys=True))
print("REPLY 3", json.dumps(await ask({"id": 3, "op": "no_such_op"}), sort_keys=True))
times = []
for n in range(20):
    start = time.perf_counter()
    listed = await ask({"id": 100 + n, "op": "list_cells"})
    times.append((time.perf_counter() - start) * 1000)
first, times = times[0], sorted(times)
print("CELLS", [(c["cell_type"], c["source"][:15]) for c in listed["cells"]])
print("ROUNDTRIP_MS", json.dumps({"n": len(times), "first": round(first, 2), "min": round(times[0], 2),
      "median": round(times[len(times) // 2], 2), "max": round(times[-1], 2)}))
comm.close()
`.trim();

const OPS_CELL = `${CLIENT}
me = get_ipython().kernel.get_parent()["metadata"]["cellId"]
path = (await ask({"id": 1, "op": "hello"}))["path"]
print("RUNNING", (await ask({"id": 2, "op": "running_cell"}))["cell_id"] == me)
below = (await ask({"id": 3, "op": "insert_cell", "after_id": me,
                    "cell_type": "code", "source": "1 + 1"}))["cell_id"]
result = {"output_type": "execute_result", "execution_count": 7,
          "data": {"text/plain": "2"}, "metadata": {}}
print("SET_OUTPUTS", (await ask({"id": 4, "op": "set_outputs", "cell_id": below,
                                 "outputs": [result], "execution_count": 7}))["ok"])
retyped = (await ask({"id": 5, "op": "insert_cell", "after_id": below,
                      "cell_type": "code", "source": "x = 1"}))["cell_id"]
replaced = await ask({"id": 6, "op": "replace_cell", "cell_id": retyped,
                      "cell_type": "markdown", "source": "# Title from goat"})
print("REPLACED_KEEPS_ID", replaced.get("cell_id") == retyped)
doomed = (await ask({"id": 7, "op": "insert_cell", "after_id": retyped,
                     "cell_type": "raw", "source": "to delete"}))["cell_id"]
print("DELETED", (await ask({"id": 8, "op": "delete_cell", "cell_id": doomed}))["ok"])
restored = await ask({"id": 15, "op": "insert_cell", "after_id": retyped, "cell_id": doomed,
                      "cell_type": "raw", "source": "restored"})
print("RESTORED_ID", restored["cell_id"] == doomed)
print("DELETED AGAIN", (await ask({"id": 16, "op": "delete_cell", "cell_id": doomed}))["ok"])
print("MISSING", json.dumps(await ask({"id": 9, "op": "delete_cell", "cell_id": "nope"}), sort_keys=True))
print("IS_OPEN", (await ask({"id": 10, "op": "is_open", "path": path}))["open"],
      (await ask({"id": 11, "op": "is_open", "path": "elsewhere.ipynb"}))["open"])
listed = await ask({"id": 12, "op": "list_cells", "path": path})
print("LAYOUT", listed["dirty"], [(c["cell_type"], c["source"][:12], c["execution_count"])
                                  for c in listed["cells"]])
# This cell's own buffered prints may arrive after the save and make it dirty again.
print("SAVED", (await ask({"id": 13, "op": "save"}))["ok"])
comm.close()
print("OPS DONE")
`.trim();

/** Puts `source` into the first cell of the current notebook and runs it without waiting. */
async function runFirstCell(page: IJupyterLabPageFixture, source: string): Promise<void> {
  // Typing the code would trigger auto-indent and bracket closing; set the source directly.
  await page.evaluate(code => {
    const panel = (window as any).jupyterapp.shell.currentWidget;
    panel.content.model.sharedModel.getCell(0).setSource(code);
  }, source);
  // Cells inserted above shift the running one, so callers wait on its output instead.
  await page.notebook.runCell(0, { inplace: true, wait: false });
}

test('the goat.notebook comm target answers the cell that opened it', async ({ page, tmpPath }) => {
  await page.notebook.createNew('goat-smoke.ipynb');
  await runFirstCell(page, SMOKE_CELL);

  const output = page.locator('.jp-OutputArea-output').filter({ hasText: /ROUNDTRIP_MS|Error/ });
  await expect(output).toBeVisible({ timeout: 60_000 });
  const text = await output.innerText();

  expect(text).toContain('REPLY 1 {"app": "JupyterLab", "client": "jupyterlab", "id": 1, "ok": true');
  expect(text).toContain(`"path": "${tmpPath}/goat-smoke.ipynb"`);
  expect(text).toMatch(/REPLY 2 \{"cell_id": "[^"]+", "id": 2, "index": 0, "ok": true\}/);
  expect(text).toContain('REPLY 3 {"error": "unknown op \\"no_such_op\\"');
  expect(text).toContain("CELLS [('markdown', 'hello from goat'), ('code', 'import asyncio,')]");

  // The new cell is in the open notebook without a reload, and the document is dirty.
  expect(await page.notebook.getCellType(0)).toBe('markdown');
  expect(await page.notebook.getCellTextInput(0)).toBe('hello from goat');
  expect(await page.notebook.getCellType(1)).toBe('code');
  const dirty = await page.evaluate(
    () => (window as any).jupyterapp.shell.currentWidget.context.model.dirty as boolean
  );
  expect(dirty).toBe(true);
  await expect(page.locator('.jp-Dialog')).toHaveCount(0);

  const roundTrip = /ROUNDTRIP_MS (\{.*\})/.exec(text)?.[1];
  console.log(`goat.notebook browser round trip for list_cells (ms): ${roundTrip}`);
});

test('every op edits the live notebook, after a kernel change', async ({ page, tmpPath }) => {
  await page.notebook.createNew('goat-ops.ipynb');
  // A new kernel means a new kernel connection: the comm target must follow it.
  const kernels = await page.evaluate(async () => {
    const context = (window as any).jupyterapp.shell.currentWidget.sessionContext;
    await context.ready;
    const before = context.session.kernel.id;
    await context.changeKernel({ name: 'python3' });
    return [before, context.session.kernel.id];
  });
  expect(kernels[1]).not.toBe(kernels[0]);
  await runFirstCell(page, OPS_CELL);

  const output = page.locator('.jp-OutputArea-output').filter({ hasText: /OPS DONE|Error/ });
  await expect(output).toBeVisible({ timeout: 60_000 });
  const text = await output.innerText();
  expect(text).toContain('RUNNING True');
  expect(text).toContain('SET_OUTPUTS True');
  expect(text).toContain('REPLACED_KEEPS_ID True');
  expect(text).toContain('DELETED True');
  expect(text).toContain('RESTORED_ID True');
  expect(text).toContain('DELETED AGAIN True');
  expect(text).toContain(
    `MISSING {"error": "no cell with id 'nope' in '${tmpPath}/goat-ops.ipynb'", "id": 9, "ok": false}`
  );
  expect(text).toContain('IS_OPEN True False');
  expect(text).toContain(
    "LAYOUT True [('code', 'import async', None), ('code', '1 + 1', 7), ('markdown', '# Title from', None)]"
  );
  expect(text).toContain('SAVED True');

  // The browser shows the edits live: outputs set by the kernel, the retyped cell.
  expect(await page.notebook.getCellTextOutput(1)).toEqual(['2']);
  expect(await page.notebook.getCellType(2)).toBe('markdown');
  await expect(page.locator('.jp-Dialog')).toHaveCount(0);

  // `save` wrote the live state to disk.
  const response = await page.request.get(`/api/contents/${tmpPath}/goat-ops.ipynb`);
  const saved = (await response.json()).content;
  expect(saved.cells.map((cell: { cell_type: string }) => cell.cell_type)).toEqual([
    'code',
    'code',
    'markdown'
  ]);
  expect(saved.cells[1].outputs[0].data['text/plain']).toBe('2');
  expect(saved.cells[2].source).toBe('# Title from goat');
});

test('only the client that ran the cell answers', async ({ page, context, baseURL, tmpPath }) => {
  await page.notebook.createNew('goat-two.ipynb');
  await page.notebook.save();
  const kernelId = await page.evaluate(async () => {
    const panel = (window as any).jupyterapp.shell.currentWidget;
    await panel.sessionContext.ready;
    return panel.sessionContext.session.kernel.id as string;
  });

  // A second browser tab opens the same notebook on the same kernel: another client.
  // (Two notebooks in one tab would not do: only the first connection there handles comms.)
  const other = await context.newPage();
  await other.goto(`${baseURL}/lab`);
  await other.waitForFunction(() => (window as any).jupyterapp?.started);
  const otherClient = await other.evaluate(
    async ({ path, id }) => {
      const app = (window as any).jupyterapp;
      await app.restored;
      const panel = await app.commands.execute('docmanager:open', {
        path,
        factory: 'Notebook',
        kernel: { id }
      });
      await panel.sessionContext.ready;
      (window as any).goatPanel = panel;
      const kernel = panel.sessionContext.session.kernel;
      return { kernelId: kernel.id, clientId: kernel.clientId, cells: panel.content.model.cells.length };
    },
    { path: `${tmpPath}/goat-two.ipynb`, id: kernelId }
  );
  expect(otherClient.kernelId).toBe(kernelId);
  expect(otherClient.cells).toBe(1);

  await runFirstCell(page, SMOKE_CELL);
  const output = page.locator('.jp-OutputArea-output').filter({ hasText: /ROUNDTRIP_MS|Error/ });
  await expect(output).toBeVisible({ timeout: 60_000 });
  expect(await output.innerText()).toMatch(/REPLY 2 \{"cell_id": "[^"]+", "id": 2, "index": 0/);

  // The tab that ran the cell got the new cell; the other tab saw the comm_open and ignored it.
  expect(await page.notebook.getCellCount()).toBe(2);
  const otherCells = await other.evaluate(
    () => (window as any).goatPanel.content.model.cells.length as number
  );
  expect(otherCells).toBe(1);
  await other.close();
});
