// Module resolution hooks (node:module register) for static_tree.mjs: a relative import that
// is not found under its own static root is looked for, at the same path, under the others.
const REPO = new URL("../../", import.meta.url);
const ROOTS = ["static/", "agentdash/dashboard/static/", "agentdash/live/static/"].map((dir) => new URL(dir, REPO).href);

export async function resolve(specifier, context, nextResolve) {
  try {
    return await nextResolve(specifier, context);
  } catch (error) {
    if (error?.code !== "ERR_MODULE_NOT_FOUND" || !context.parentURL || !specifier.startsWith(".")) throw error;
    const wanted = new URL(specifier, context.parentURL).href;
    const root = ROOTS.find((dir) => wanted.startsWith(dir));
    if (!root) throw error;
    for (const other of ROOTS) {
      if (other === root) continue;
      try {
        return await nextResolve(other + wanted.slice(root.length), context);
      } catch {
        // not under this root either
      }
    }
    throw error;
  }
}
