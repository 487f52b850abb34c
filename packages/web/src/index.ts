/**
 * @module @fleetback/web
 * Templates, view helpers and static assets for the server-rendered pages.
 */
export { loadStaticAssets, type StaticAsset } from "./assets.js";
export { formatBytes, formatDuration, formatIso, formatTime } from "./format.js";
export { createViews, type ViewOptions, type Views, viewsDir } from "./views.js";
