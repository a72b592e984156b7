import { LuaScripts } from '../util/index.js';

/** The rerun batches' Lua scripts (`lua/`): a feed recorded (`rerunAdvance`), runs ended (`rerunEnd`), a cancel (`rerunCancel`). */
export const RERUN_SCRIPTS = new LuaScripts(new URL('./lua/', import.meta.url), ['rerunAdvance', 'rerunEnd', 'rerunCancel']);
