/**
 * Folder trust in the settings panel: what a folder's project settings (.goat/, .mcp.json,
 * .claude/) would let goat do, Trust / Revoke, and the folders trusted so far. The same store as
 * `%goat trust`; kernels apply a change with `%goat config reload` or their next start.
 */
import { IProblem, call, element, labelled, section } from './panel_util';

interface ITrustItem {
  kind: string;
  source: string;
  text: string;
  trusted: boolean;
}

interface ITrustView {
  folder: string;
  items: ITrustItem[];
  digest: string;
  trusted_folders: string[];
  errors?: IProblem[];
}

export class TrustSection {
  readonly node: HTMLElement;
  private folder = element('input', {
    'data-goat': 'trust-folder',
    placeholder: 'folder (relative to the Jupyter root)'
  });
  private items = element('ul', { 'data-goat': 'trust-items' });
  private trusted = element('ul', { 'data-goat': 'trust-folders' });
  private status = element('div', { class: 'goat-settings-hint', 'data-goat': 'trust-status' });
  // What the list on screen shows: Trust approves exactly that (the server refuses a changed folder).
  private shown: { folder: string; digest: string } | null = null;

  constructor() {
    const show = element('button', { class: 'jp-mod-styled', 'data-goat': 'trust-show' }, 'Show');
    show.addEventListener('click', () => void this.load());
    const trust = element('button', { class: 'jp-mod-styled jp-mod-warn', 'data-goat': 'trust-trust' }, 'Trust');
    trust.addEventListener('click', () => void this.trust());
    const row = element('div', { class: 'goat-settings-row' });
    row.append(labelled('Folder', this.folder), show, trust);
    const hint = element(
      'div',
      { class: 'goat-settings-hint' },
      "A folder's MCP servers, hooks, allow rules, permission mode and user-only settings (api_base) apply " +
        'only once you trust it; its limits only lower yours; deny and ask rules apply always. Trust ' +
        'approves the list shown here. Running kernels pick a change up with %goat config reload.'
    );
    const listed = element('h4', {}, 'Trusted folders');
    this.node = section('Folder trust', hint, row, this.items, this.status, listed, this.trusted);
  }

  async load(): Promise<void> {
    const folder = encodeURIComponent(this.folder.value.trim());
    await this.send(`trust?folder=${folder}`, 'GET');
  }

  private async trust(): Promise<void> {
    const folder = this.folder.value.trim();
    const digest = this.shown?.folder === folder ? this.shown.digest : '';
    await this.send('trust', 'POST', { folder, digest });
  }

  private async send(path: string, method: string, body?: unknown): Promise<void> {
    const reply = await call<ITrustView>(path, method, body);
    if ('items' in reply.body) {
      this.show(reply.body); // a 409 carries the folder's new list: show it before asking again
    }
    if (!reply.ok) {
      this.status.textContent = reply.body.errors?.map(p => p.message).join(' ') ?? `Error ${reply.status}`;
    }
  }

  private show(view: ITrustView): void {
    this.shown = { folder: this.folder.value.trim(), digest: view.digest };
    this.items.replaceChildren(
      ...view.items.map(item =>
        element('li', {}, `${item.trusted ? '✓ trusted' : '✗ not trusted'}: ${item.source}: ${item.text}`)
      )
    );
    const pending = view.items.filter(item => !item.trusted).length;
    this.status.textContent = view.items.length
      ? `${view.folder}: ${pending} of ${view.items.length} not trusted.`
      : `${view.folder}: its project settings widen nothing; nothing to trust.`;
    this.trusted.replaceChildren(...view.trusted_folders.map(folder => this.trustedRow(folder)));
  }

  private trustedRow(folder: string): HTMLElement {
    const row = element('li', {}, `${folder} `);
    const revoke = element('button', { class: 'jp-mod-styled', title: `Stop trusting ${folder}` }, 'Revoke');
    revoke.addEventListener('click', () => void this.send(`trust?folder=${encodeURIComponent(folder)}`, 'DELETE'));
    row.append(revoke);
    return row;
  }
}
