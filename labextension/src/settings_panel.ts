/**
 * The "goat" settings panel: model picker (the known models, which provider keys are set),
 * permission mode, allow/ask/deny rules (validated by the server with goat's rule parser),
 * provider keys (write-only), MCP servers with "Test connection", autoload, and folder trust.
 * Everything goes through the goat_jupyter.server endpoints under /goat/.
 */
import { JupyterFrontEnd, JupyterFrontEndPlugin } from '@jupyterlab/application';
import { ICommandPalette } from '@jupyterlab/apputils';
import { LabIcon } from '@jupyterlab/ui-components';
import { Message } from '@lumino/messaging';
import { Widget } from '@lumino/widgets';

import { IProblem, call, element, labelled, section } from './panel_util';
import { TrustSection } from './trust_section';
import { McpSection } from './mcp_section';

/** The panel's tab and sidebar icon: a goat's head, coloured like JupyterLab's own icons. */
export const goatIcon = new LabIcon({
  name: 'goat-jupyter:goat',
  svgstr:
    '<svg xmlns="http://www.w3.org/2000/svg" width="16" height="16" viewBox="0 0 24 24"><g class="jp-icon3" fill="#616161">' +
    '<path d="M4 3c1.6 1 2.6 2.4 3 4h10c.4-1.6 1.4-3 3-4-.2 2.2-1 3.9-2.3 5 .5.8.8 1.8.8 2.8 0 2.6-1.7 4.8-4 5.6V21h-5v-4.6' +
    'c-2.3-.8-4-3-4-5.6 0-1 .3-2 .8-2.8C5 6.9 4.2 5.2 4 3zm5 7a1 1 0 100 2 1 1 0 000-2zm6 0a1 1 0 100 2 1 1 0 000-2zm-3 3.5' +
    'c-.8 0-1.5.4-1.5 1h3c0-.6-.7-1-1.5-1z"/></g></svg>'
});

export const OPEN_SETTINGS = 'goat:open-settings';

const MODES = ['default', 'acceptEdits', 'plan', 'bypassPermissions', 'dontAsk'];
const RULE_LISTS = ['allow', 'ask', 'deny'] as const;
const BUDGETS: [string, string, string][] = [
  ['max_cost_per_run', 'Per %%goat run ($)', '0.01'],
  ['max_cost_per_session', 'Per session ($)', '0.01'],
  ['max_cost_per_user_per_day', 'Per day, all sessions ($)', '0.01'],
  ['max_tokens_per_run', 'Tokens per run', '1000']
];

interface IPanelSettings {
  model: string;
  small_model: string;
  permission_mode: string;
  permissions: Record<string, string[]>;
  mcpServers: Record<string, unknown>;
  /** Budgets (null: no limit): dollars per run, session and day, tokens per run. */
  budgets?: Record<string, number | null>;
  autoload: boolean;
  path: string;
  /** Settings a project file or the environment decides, whatever this panel says. */
  overrides?: { key: string; value: string; by: string }[];
  defaults?: { model: string };
  managed?: Record<string, IManagedField>;
}

/** A field the administrator's managed policy sets (locked) or bounds, with the reason in words. */
interface IManagedField {
  locked: boolean;
  reason: string;
}

const OVERRIDABLE = ['model', 'small_model', 'permission_mode'];
/** What the hint under the model says of a name the model list does not hold, by the list's state. */
const MODEL_LIST_HINT = {
  loading: 'Loading the model list…',
  loaded: 'Not in the model list (any provider/model name works, e.g. anthropic/claude-sonnet-4-5).',
  failed: 'The model list could not be loaded; any provider/model name works.'
};

interface IProvider {
  provider: string;
  key_present: boolean | null;
  missing: string[];
}

interface ICatalogue {
  models: { id: string; provider: string }[];
  providers: IProvider[];
}

function lines(text: string): string[] {
  return text
    .split('\n')
    .map(line => line.trim())
    .filter(line => line.length > 0);
}

/** The panel widget; `load()` fills it from the server. */
export class GoatSettingsPanel extends Widget {
  private model = element('input', { list: 'goat-models', 'data-goat': 'model', spellcheck: 'false' });
  private smallModel = element('input', {
    list: 'goat-models',
    'data-goat': 'small-model',
    spellcheck: 'false',
    placeholder: 'none: the main model'
  });
  private models = element('datalist', { id: 'goat-models' });
  private keyStatus = element('div', { class: 'goat-settings-hint', 'data-goat': 'key-status' });
  private mode = element('select', { 'data-goat': 'mode' });
  private rules: Record<string, HTMLTextAreaElement> = {};
  private ruleErrors: Record<string, HTMLElement> = {};
  private mcp = element('textarea', { 'data-goat': 'mcp', rows: '6', spellcheck: 'false' });
  private mcpErrors = element('div', { class: 'goat-settings-error', 'data-goat': 'mcp-error' });
  private mcpResult = element('div', { class: 'goat-settings-hint', 'data-goat': 'mcp-result' });
  private autoload = element('input', { type: 'checkbox', 'data-goat': 'autoload' });
  private keyList = element('ul', { class: 'goat-settings-keys', 'data-goat': 'keys' });
  private keyName = element('input', { placeholder: 'OPENAI_API_KEY', 'data-goat': 'key-name' });
  private keyValue = element('input', { type: 'password', placeholder: 'value', 'data-goat': 'key-value' });
  private status = element('div', { class: 'goat-settings-status', 'data-goat': 'status' });
  private overrideNotes: Record<string, HTMLElement> = Object.fromEntries(
    OVERRIDABLE.map(key => [key, element('div', { class: 'goat-settings-warning', 'data-goat': `override-${key}` })])
  );
  private managedNote = element('div', { class: 'goat-settings-hint', 'data-goat': 'managed' });
  private locked = new Set<string>();
  private budgets: Record<string, HTMLInputElement> = Object.fromEntries(
    BUDGETS.map(([key, , step]) => [
      key,
      element('input', { type: 'number', min: '0', step, placeholder: 'no limit', 'data-goat': `budget-${key}` })
    ])
  );
  private catalogue: ICatalogue = { models: [], providers: [] };
  /** Until the model list has arrived nothing can be said about a name ("loading", then "loaded" or "failed"). */
  private catalogueState: 'loading' | 'loaded' | 'failed' = 'loading';
  private trust = new TrustSection();
  private mcpServe = new McpSection();
  private tested = new Map<string, { ok: boolean; error?: string; config: string }>();

  constructor() {
    super();
    this.id = 'goat-settings';
    this.title.icon = goatIcon;
    this.title.caption = 'goat settings';
    this.addClass('goat-settings');
    this.build();
  }

  private build(): void {
    for (const mode of MODES) {
      this.mode.append(element('option', { value: mode }, mode));
    }
    this.model.addEventListener('input', () => this.showKeyStatus());
    const save = element('button', { class: 'jp-mod-styled jp-mod-accept', 'data-goat': 'save' }, 'Save');
    save.addEventListener('click', () => void this.save());
    const ruleBoxes = RULE_LISTS.map(name => this.ruleBox(name));
    const test = element('button', { class: 'jp-mod-styled', 'data-goat': 'mcp-test' }, 'Test connection');
    test.addEventListener('click', () => void this.testServers());
    const setKey = element('button', { class: 'jp-mod-styled', 'data-goat': 'key-save' }, 'Store key');
    setKey.addEventListener('click', () => void this.storeKey());
    const keyRow = element('div', { class: 'goat-settings-row' });
    keyRow.append(this.keyName, this.keyValue, setKey);
    this.node.append(
      element('h2', {}, 'goat settings'),
      this.managedNote,
      section(
        'Model',
        labelled('Model', this.model),
        this.overrideNotes.model,
        this.keyStatus,
        labelled('Small model', this.smallModel),
        this.overrideNotes.small_model,
        this.models
      ),
      section(
        'Permissions',
        labelled('Permission mode', this.mode),
        this.overrideNotes.permission_mode,
        ...ruleBoxes
      ),
      section(
        'Provider keys',
        element('div', { class: 'goat-settings-hint' }, 'Stored user-only (mode 0600); values are never shown.'),
        this.keyList,
        keyRow
      ),
      section(
        'Budgets',
        element('div', { class: 'goat-settings-hint' }, 'A run stops before a request that could cross one.'),
        ...BUDGETS.map(([key, label]) => labelled(label, this.budgets[key]))
      ),
      section('MCP servers', this.mcp, this.mcpErrors, test, this.mcpResult),
      section('Kernels', this.checkbox('Load goat in every new kernel (autoload)', this.autoload)),
      save,
      this.trust.node,
      this.mcpServe.node,
      this.status
    );
  }

  private checkbox(text: string, control: HTMLInputElement): HTMLElement {
    const label = element('label', { class: 'goat-settings-check' });
    label.append(control, element('span', {}, text));
    return label;
  }

  private ruleBox(name: string): HTMLElement {
    const area = element('textarea', { 'data-goat': `rules-${name}`, rows: '4', spellcheck: 'false' });
    area.placeholder = name === 'deny' ? 'Read(./secrets/**)' : 'Bash(git diff:*)';
    this.rules[name] = area;
    this.ruleErrors[name] = element('div', { class: 'goat-settings-error', 'data-goat': `rules-${name}-error` });
    const box = element('div');
    box.append(labelled(`${name} rules (one per line)`, area), this.ruleErrors[name]);
    return box;
  }

  private loading: Promise<void> | null = null;

  /** Filled from the server once, when first shown: showing it again keeps unsaved edits. */
  loaded(): Promise<void> {
    this.loading ??= this.load();
    return this.loading;
  }

  protected onAfterShow(msg: Message): void {
    super.onAfterShow(msg);
    void this.loaded();
  }

  /** Fill the panel from the server: settings, stored key names, then the catalogue. */
  async load(): Promise<void> {
    const reply = await call<IPanelSettings & { errors?: IProblem[] }>('settings');
    if (!reply.ok) {
      this.say(reply.body.errors?.map(p => p.message).join(' ') ?? `Error ${reply.status}`, true);
      return;
    }
    this.fill(reply.body);
    await this.loadKeys();
    await this.trust.load();
    await this.mcpServe.load();
    await this.loadCatalogue();
  }

  /** The known models and which provider keys are present (after a key change too). */
  private async loadCatalogue(): Promise<void> {
    this.showKeyStatus();
    const catalogue = await call<ICatalogue>('models');
    this.catalogueState = catalogue.ok ? 'loaded' : 'failed';
    if (!catalogue.ok) {
      this.showKeyStatus();
    } else {
      this.catalogue = catalogue.body;
      this.models.replaceChildren(
        ...catalogue.body.models.map(m => element('option', { value: m.id }, m.provider))
      );
      this.showKeyStatus();
    }
  }

  private fill(settings: IPanelSettings): void {
    this.model.value = settings.model;
    this.smallModel.value = settings.small_model;
    this.mode.value = settings.permission_mode;
    for (const name of RULE_LISTS) {
      this.rules[name].value = (settings.permissions[name] ?? []).join('\n');
    }
    this.mcp.value = JSON.stringify(settings.mcpServers ?? {}, null, 2);
    for (const [key] of BUDGETS) {
      const value = settings.budgets?.[key];
      this.budgets[key].value = value === null || value === undefined ? '' : String(value);
    }
    this.autoload.checked = settings.autoload;
    this.status.title = settings.path;
    if (settings.defaults) {
      this.model.placeholder = `default: ${settings.defaults.model}`;
    }
    this.showOverrides(settings.overrides ?? []);
    this.showManaged(settings.managed ?? {});
  }

  /** Under each field that does not take effect: the value in use and what sets it. */
  private showOverrides(overrides: { key: string; value: string; by: string }[]): void {
    for (const key of OVERRIDABLE) {
      const found = overrides.find(item => item.key === key);
      this.overrideNotes[key].textContent = found
        ? `Not in effect: ${found.by} sets ${found.value}, which wins over this field.`
        : '';
    }
  }

  /** Lock the fields the managed policy sets; say why for each field it sets or bounds. */
  private showManaged(managed: Record<string, IManagedField>): void {
    const controls: Record<string, HTMLElement & { disabled: boolean }> = {
      model: this.model,
      small_model: this.smallModel,
      permission_mode: this.mode,
      mcpServers: this.mcp
    };
    this.locked = new Set(Object.keys(managed).filter(key => managed[key].locked));
    for (const [key, control] of Object.entries(controls)) {
      control.disabled = this.locked.has(key);
      control.title = managed[key]?.reason ?? '';
    }
    const reasons = Object.entries(managed).map(([key, field]) => `${key}: ${field.reason}`);
    this.managedNote.textContent = reasons.length ? `Managed by your administrator. ${reasons.join(' ')}` : '';
  }

  private showKeyStatus(): void {
    const id = this.model.value.trim();
    const model = this.catalogue.models.find(m => m.id === id);
    const provider = model ?? this.catalogue.models.find(m => id.startsWith(`${m.provider}/`));
    const info = this.catalogue.providers.find(p => p.provider === provider?.provider);
    if (!info) {
      this.keyStatus.textContent = id ? MODEL_LIST_HINT[this.catalogueState] : '';
    } else if (info.key_present) {
      this.keyStatus.textContent = `${info.provider}: key present`;
    } else {
      this.keyStatus.textContent = `${info.provider}: key missing (${info.missing.join(', ') || 'unknown'})`;
    }
  }

  private async loadKeys(): Promise<void> {
    const reply = await call<{ keys: { name: string }[] }>('keys');
    if (!reply.ok) {
      return;
    }
    this.keyList.replaceChildren(
      ...reply.body.keys.map(key => {
        const item = element('li', {}, `${key.name} `);
        const remove = element('button', { class: 'jp-mod-styled', title: `Remove ${key.name}` }, 'Remove');
        remove.addEventListener('click', () => void this.changeKeys({ remove: [key.name] }));
        item.append(remove);
        return item;
      })
    );
  }

  private async storeKey(): Promise<void> {
    const name = this.keyName.value.trim();
    await this.changeKeys({ set: { [name]: this.keyValue.value } });
  }

  private async changeKeys(body: unknown): Promise<void> {
    const reply = await call<{ errors?: IProblem[] }>('keys', 'PUT', body);
    if (!reply.ok) {
      this.say(reply.body.errors?.map(p => p.message).join(' ') ?? `Error ${reply.status}`, true);
      return;
    }
    this.keyValue.value = '';
    this.keyName.value = '';
    this.say('Keys saved: kernels started from now on see them; running ones after %goat config reload.');
    await this.loadKeys();
    await this.loadCatalogue(); // not load(): that would refill the form and lose unsaved edits
  }

  private collect(): Record<string, unknown> | null {
    let servers: unknown;
    try {
      servers = JSON.parse(this.mcp.value.trim() || '{}');
    } catch (error) {
      this.mcpErrors.textContent = `Not valid JSON: ${String(error)}`;
      return null;
    }
    const permissions: Record<string, string[]> = {};
    for (const name of RULE_LISTS) {
      permissions[name] = lines(this.rules[name].value);
    }
    const body: Record<string, unknown> = {
      model: this.model.value.trim(),
      small_model: this.smallModel.value.trim(),
      permission_mode: this.mode.value,
      permissions,
      mcpServers: servers,
      autoload: this.autoload.checked
    };
    for (const [key] of BUDGETS) {
      const text = this.budgets[key].value.trim();
      body[key] = text === '' ? null : Number(text);
    }
    for (const key of this.locked) {
      delete body[key]; // set by the managed policy: the user's file keeps whatever it had
    }
    return body;
  }

  private clearErrors(): void {
    for (const name of RULE_LISTS) {
      this.ruleErrors[name].textContent = '';
    }
    this.mcpErrors.textContent = '';
  }

  /** PUT the settings; the server validates, and nothing is written when anything is invalid. */
  async save(): Promise<void> {
    this.clearErrors();
    const update = this.collect();
    if (update === null) {
      this.say('Not saved: fix the errors above.', true);
      return;
    }
    const reply = await call<IPanelSettings & { errors?: IProblem[] }>('settings', 'PUT', update);
    if (reply.ok) {
      this.fill(reply.body);
      this.say('Saved. New %%goat runs in kernels started from now on use it (running kernels: %goat config reload).');
      this.warnFailedServers(update.mcpServers as Record<string, unknown>);
      return;
    }
    this.showProblems(reply.body.errors ?? []);
    this.say('Not saved: fix the errors above.', true);
  }

  private showProblems(problems: IProblem[]): void {
    const general: string[] = [];
    for (const problem of problems) {
      const list = problem.field.startsWith('permissions.') ? problem.field.slice(12) : '';
      const rule = problem.rule === undefined ? '' : String(problem.rule);
      const text = !rule || problem.message.includes(rule) ? problem.message : `${rule}: ${problem.message}`;
      if (list && this.ruleErrors[list]) {
        this.ruleErrors[list].append(element('div', {}, text));
      } else if (problem.field === 'mcpServers') {
        this.mcpErrors.append(element('div', {}, `${problem.server ?? ''}: ${problem.message}`));
      } else {
        general.push(`${problem.field}: ${problem.message}`);
      }
    }
    if (general.length) {
      this.status.append(element('div', { class: 'goat-settings-error' }, general.join(' ')));
    }
  }

  /** Saved anyway, but said: servers whose last "Test connection" (same configuration) failed. */
  private warnFailedServers(servers: Record<string, unknown>): void {
    const failed = Object.entries(servers)
      .map(([name, server]) => ({ name, test: this.tested.get(name), config: JSON.stringify(server) }))
      .filter(item => item.test && !item.test.ok && item.test.config === item.config)
      .map(item => `${item.name} (${item.test?.error ?? 'failed'})`);
    if (failed.length) {
      this.status.append(
        element(
          'div',
          { class: 'goat-settings-warning', 'data-goat': 'mcp-warning' },
          `Warning: the connection test failed for ${failed.join(', ')}; goat will try it but may run without it.`
        )
      );
    }
  }

  private async testServers(): Promise<void> {
    const update = this.collect();
    if (update === null) {
      return;
    }
    const servers = Object.entries(update.mcpServers as Record<string, unknown>);
    this.mcpResult.replaceChildren(element('div', {}, servers.length ? 'Connecting…' : 'No servers configured.'));
    const results = await Promise.all(
      servers.map(async ([name, server]) => {
        const reply = await call<{ ok: boolean; tools?: string[]; error?: string }>('mcp/test', 'POST', {
          name,
          server
        });
        this.tested.set(name, { ok: reply.body.ok, error: reply.body.error, config: JSON.stringify(server) });
        const outcome = reply.body.ok
          ? `connected, ${reply.body.tools?.length ?? 0} tools (${(reply.body.tools ?? []).join(', ')})`
          : `failed: ${reply.body.error ?? reply.status}`;
        return element('div', { class: reply.body.ok ? 'goat-settings-ok' : 'goat-settings-error' }, `${name}: ${outcome}`);
      })
    );
    if (results.length) {
      this.mcpResult.replaceChildren(...results);
    }
  }

  private say(text: string, error = false): void {
    this.status.replaceChildren(element('div', { class: error ? 'goat-settings-error' : 'goat-settings-ok' }, text));
  }
}

/**
 * The panel lives in the left sidebar (goat icon); the command that shows it is in the command
 * palette and in the Settings menu (schema/settings.json).
 */
function registerSettingsPanel(app: JupyterFrontEnd, palette: ICommandPalette | null): void {
  const panel = new GoatSettingsPanel();
  app.shell.add(panel, 'left', { rank: 950 });
  app.commands.addCommand(OPEN_SETTINGS, {
    label: 'goat settings',
    caption: 'Model, permissions, provider keys and MCP servers of the goat agent',
    icon: goatIcon,
    execute: async () => {
      app.shell.activateById(panel.id);
      await panel.loaded();
    }
  });
  palette?.addItem({ command: OPEN_SETTINGS, category: 'goat' });
}

export const settingsPanelPlugin: JupyterFrontEndPlugin<void> = {
  id: 'goat-jupyter:settings',
  description: 'The goat settings panel (model, permissions, keys, MCP servers, autoload).',
  autoStart: true,
  optional: [ICommandPalette],
  activate: registerSettingsPanel
};
