// The browser sees one /static/ tree merged from static/ and each app's static/ (Django's
// staticfiles finders; jsconfig.json's rootDirs says the same to tsc), so a dashboard module
// imports "../../core/js/dom.js". Node sees the files: importing this module first lets it
// resolve such an import as the browser does. Import the module under test after it, with
// `await import(...)`: a static import is resolved before this one has run.
import { register } from "node:module";

register("./static_tree_hooks.mjs", import.meta.url);
