/**
 * goat-jupyter labextension: lets the goat agent running in the kernel read and edit the
 * live notebook through the `goat.notebook` comm (see protocol.ts and ops.ts).
 */
import { JupyterFrontEnd, JupyterFrontEndPlugin } from '@jupyterlab/application';
import { INotebookTracker, NotebookPanel } from '@jupyterlab/notebook';

import { PanelBridge } from './bridge';
import { LiveRuns } from './live';
import { settingsPanelPlugin } from './settings_panel';
import { decorateCells } from './cells_ui';
import { dropStaleWidgets } from './goat_outputs';
import { keepCleanOnLanguageInfo } from './clean_open';
import { cellActionsPlugin } from './cell_actions';
import { markStaleCells } from './stale';
import { followCitations } from './citations';
import { runFreshPlugin } from './run_fresh';
import { reviewPlugin } from './review_ui';
import { mcpTabPlugin } from './mcp_tab';

const plugin: JupyterFrontEndPlugin<void> = {
  id: 'goat-jupyter:bridge',
  description: 'Answers the goat.notebook comm so the goat agent edits the live notebook.',
  autoStart: true,
  requires: [INotebookTracker],
  activate: (app: JupyterFrontEnd, tracker: INotebookTracker): void => {
    const bridge = (panel: NotebookPanel) => {
      const notebookBridge = new PanelBridge(panel, tracker, app.name);
      new LiveRuns(panel, (msgId, cellId) => notebookBridge.adopt(msgId, cellId));
      void panel.context.ready.then(() => dropStaleWidgets(panel));
      keepCleanOnLanguageInfo(panel);
      decorateCells(panel);
      markStaleCells(panel);
      followCitations(panel);
    };
    tracker.forEach(bridge);
    tracker.widgetAdded.connect((_sender, panel) => {
      bridge(panel);
    });
  }
};

export default [plugin, settingsPanelPlugin, cellActionsPlugin, runFreshPlugin, reviewPlugin, mcpTabPlugin];
