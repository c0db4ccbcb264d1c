"""Checks VIZ's page in headless Chromium (run by scripts/viz_check.sh with the page's address
and a folder for screenshots). The page draws everything from /data.json with its own script,
so each check loads an address, lets the script run, and reads the DOM Chromium dumps:
  - a kernel at a pass where rules fired: the summary's kernel count, the pass name, a rule's
    `file:line` and a node it rewrote;
  - the same kernel at its last step: a line of its generated source;
  - the realize with the most kernels: one drawn box per tensor node but DEVICE, a hover title on each,
    one legend entry per kernel;
  - the kernel's own tensor graph: the nodes fused into it drawn; its AST drawn.
Then it saves screenshots of the graph views."""
import json
import subprocess
import sys
import urllib.request

addr, out = sys.argv[1], sys.argv[2]
BROWSER = ["chromium", "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
           "--virtual-time-budget=10000", "--window-size=1500,900"]


def text(s):
    """`s` as Chromium serializes a text node."""
    return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("\u00a0", "&nbsp;")


def dom(fragment):
    run = subprocess.run(BROWSER + ["--dump-dom", f"{addr}/#{fragment}"], capture_output=True, text=True, timeout=120)
    if run.returncode != 0 or "<body" not in run.stdout:
        sys.exit(f"viz_check: chromium failed on #{fragment}: {run.stderr[-2000:]}")
    # What the script drew, without the script's own text (its templates hold the same tags).
    return run.stdout.split("<script>")[0]


def expect(page, want, what):
    if want not in page:
        sys.exit(f"viz_check: the page does not show {what}: {want!r} not in the DOM")
    print(f"viz_check: shows {what}: {want[:100]!r}")


data = json.load(urllib.request.urlopen(f"{addr}/data.json"))
kernels, graphs = data["kernels"], data["graphs"]
if not kernels or not graphs:
    sys.exit(f"viz_check: the log is empty ({len(kernels)} kernels, {len(graphs)} graphs)")

# A kernel with a pass where a rule fired; its steps are [tensor graph], ast, passes..., opts,
# linear, source.
def in_graph(name):
    return any(name in g["kernels"] for g in graphs)

# The largest reduce kernel of a moderate AST makes the most telling screenshot.
ki, pj = max(((i, j) for i, k in enumerate(kernels) for j, p in enumerate(k["passes"]) if p["rules"] and in_graph(k["name"])),
             key=lambda ij: (kernels[ij[0]]["name"].startswith("r_"), len(kernels[ij[0]]["ast"]) < 6000,
                             len(kernels[ij[0]]["ast"]), -ij[1]))
k = kernels[ki]
first = 2  # the tensor graph, then the ast
page = dom(f"k={ki}&s={first + pj}")
expect(page, f"ferrograd VIZ: {len(kernels)} kernels", "the kernel count")
expect(page, f'id="step-name">{text(k["passes"][pj]["pass"])}<', "a pass name")
rule = k["passes"][pj]["rules"][0]
expect(page, text(rule["rule"]), "a rule that fired")
expect(page, text(rule["nodes"][0]), "a node the rule rewrote")

page = dom(f"k={ki}")
line = max((l.strip() for l in k["source"].splitlines() if k["name"] in l), key=len)
expect(page, text(line), "a line of the generated source")

gi = max(range(len(graphs)), key=lambda i: len(graphs[i]["kernels"]))
g = graphs[gi]
page = dom(f"g={gi}")
boxes = page.count('<g class="node')
drawn = sum(n["op"] != "DEVICE" for n in g["nodes"])  # DEVICE nodes are left out of the drawing
if boxes != drawn:
    sys.exit(f"viz_check: realize {g['realize']} has {drawn} tensor nodes (not DEVICE) but {boxes} are drawn")
print(f"viz_check: draws realize {g['realize']}'s {boxes} tensor nodes")
expect(page, "computed by: ", "a node's hover title")
legend = page.count('<button data-k="')
if legend != len(g["kernels"]):
    sys.exit(f"viz_check: {len(g['kernels'])} kernels but {legend} legend entries")

page = dom(f"k={ki}&s=0")
expect(page, 'id="step-name">tensor graph<', "a kernel's tensor graph")
if page.count('<g class="node') == 0:
    sys.exit("viz_check: the kernel's tensor graph has no nodes drawn")

# The kernel's AST drawn: one box per numbered line (but DEVICE).
page = dom(f"k={ki}&s=1&d=1")
expect(page, 'id="step-name">ast<', "the kernel's AST")
want = sum(1 for l in k["ast"].splitlines() if l.startswith("%") and l.split()[1] != "DEVICE")
boxes = page.count('<g class="node')
if boxes != want:
    sys.exit(f"viz_check: the AST has {want} nodes but {boxes} are drawn")
print(f"viz_check: draws the kernel's AST, {boxes} nodes")

for name, fragment in [("graph", f"g={gi}"), ("kernel", f"k={ki}&s=0"), ("pass", f"k={ki}&s={first + pj}"),
                       ("ast", f"k={ki}&s=1&d=1")]:
    subprocess.run(BROWSER + [f"--screenshot={out}/{name}.png", f"{addr}/#{fragment}"], capture_output=True, timeout=120, check=True)
print(f"viz_check: passed; screenshots in {out}/")
