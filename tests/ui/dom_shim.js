// A minimal DOM for running the review page's script under node (no browser installed).
// Text set on nodes stays text: there is no HTML parser here at all, as in the page.
"use strict";
const [url, cookie, csrf, script, plan] = process.argv.slice(2);
const origin = new URL(url).origin;
class Node {
  constructor(tag) { this.tag = tag; this.children = []; this.attrs = {}; this.listeners = {}; this.dataset = {}; this.text = ""; this.value = ""; this.checked = false; }
  append(...kids) {  // as the DOM does: anything that is not a node becomes its String() as text
    for (const k of kids) this.children.push(k instanceof Node ? k : document.createTextNode(String(k)));
  }
  replaceChildren(...kids) { this.children = []; this.append(...kids); }
  removeAttribute(k) { delete this.attrs[k]; }
  setAttribute(k, v) { this.attrs[k] = v; if (k.startsWith("data-")) this.dataset[k.slice(5)] = v; if (k === "value") this.value = v; if (k === "checked") this.checked = true; }
  addEventListener(ev, f) { (this.listeners[ev] ||= []).push(f); }
  get content() { return this.attrs.content; }
  get textContent() { return this.tag === "#text" ? this.text : this.children.map(c => c.textContent).join(""); }
  all() { return [this, ...this.children.flatMap(c => c.all ? c.all() : [])]; }
  async fire(ev) { for (const f of this.listeners[ev] || []) await f({key: "Enter"}); }
}
globalThis.Node = Node;
const byId = {main: new Node("main"), nav: new Node("nav")};
const meta = new Node("meta"); meta.attrs.content = csrf;
globalThis.document = {
  createElement: tag => new Node(tag),
  createElementNS: (ns, tag) => new Node(tag),
  createTextNode: t => Object.assign(new Node("#text"), {text: String(t)}),
  getElementById: id => byId[id],
  querySelector: () => meta,
};
globalThis.location = {hash: ""};
const realFetch = globalThis.fetch;
let inFlight = 0;  // settle() waits for the page's requests, however long a view takes
globalThis.fetch = async (path, opts = {}) => {
  inFlight++;
  try {
    const res = await realFetch(origin + path, {...opts,
      headers: {...(opts.headers || {}), Cookie: cookie, ...(opts.method === "POST" ? {Origin: origin} : {})}});
    const body = await res.text();  // read here so that the request is over when settle() returns
    return new Response(body, {status: res.status, headers: res.headers});
  } finally { inFlight--; }
};
const tick = () => new Promise(r => setTimeout(r, 20));
const settle = async () => { for (let quiet = 0; quiet < 5; ) { await tick(); quiet = inFlight ? 0 : quiet + 1; } };
const find = (pred) => byId.main.all().find(pred);
(async () => {
  eval(script);  // the page's own script, as the browser would run it
  await settle();
  const out = {};
  for (const step of JSON.parse(plan)) {
    if (step.view) { byId.nav.children.find(b => b.dataset.view === step.view).fire("click"); await settle(); }
    if (step.click) { await find(n => n.tag === "button" && n.textContent === step.click).fire("click"); await settle(); }
    if (step.clickText) { await find(n => n.listeners.click && n.textContent.includes(step.clickText)).fire("click"); await settle(); }
    if (step.fill) { find(n => n.attrs["aria-label"] === step.fill).value = step.value; }
    if (step.text) out[step.text] = byId.main.textContent;
    if (step.tags) out[step.tags] = byId.main.all().map(n => n.tag).filter(t => t !== "#text");
  }
  process.stdout.write(JSON.stringify(out));
})().catch(e => { console.error(e); process.exit(1); });
