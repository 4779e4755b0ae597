"""HTML building blocks of the report pages: escaping, tables whose cells carry the exact values
(data-value) beside the formatted text, charts as inline SVG from matplotlib (ids made unique per
chart so that several SVGs live in one page), and the page shell with its style sheet. The page
is one file: no script, font, image or style is fetched when it is opened.
"""
import html
import io
import re

STYLE = """
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; margin: 0 auto; max-width: 1180px;
       padding: 16px 24px 48px; color: #1d232b; background: #fff; }
h1 { font-size: 22px; margin: 8px 0 4px; } h2 { font-size: 17px; margin: 28px 0 8px;
     border-bottom: 1px solid #d6dbe1; padding-bottom: 4px; }
p.note { color: #58626e; margin: 4px 0 8px; }
nav a { margin-right: 12px; color: #2b5d9b; text-decoration: none; }
table { border-collapse: collapse; margin: 6px 0 10px; font-variant-numeric: tabular-nums; }
th, td { padding: 3px 9px; border-bottom: 1px solid #e6e9ed; text-align: right; white-space: nowrap; }
th { background: #f3f5f7; position: sticky; top: 0; }
td.t, th.t { text-align: left; }
table.kv td:first-child { text-align: left; color: #58626e; }
table.kv td { text-align: left; white-space: normal; }
td.wrap { white-space: normal; max-width: 420px; text-align: left; }
td.worse { background: #fbe3e0; } td.better { background: #e1f3e4; }
figure.chart { margin: 8px 0 16px; } figure.chart svg { max-width: 100%; height: auto; }
figcaption { color: #58626e; font-size: 13px; }
div.scroll { overflow-x: auto; max-width: 100%; }
details { margin: 6px 0; } summary { cursor: pointer; color: #2b5d9b; }
.big { font-size: 18px; font-weight: 600; }
"""


def esc(text):
    return html.escape(str(text), quote=True)


def number_text(value, digits=4):
    if value is None:
        return "-"
    if isinstance(value, int):
        return f"{value:,}"
    if value == 0:
        return "0"
    if abs(value) >= 1000:
        return f"{value:,.1f}"
    return f"{value:.{digits}g}"


class Cell:
    """A table cell: text shown, the exact value kept in data-value, a CSS class."""

    def __init__(self, value, text=None, css="", raw=None):
        self.value = value
        self.text = text
        self.css = css
        self.raw = raw  # the data-value, when it differs from value

    def render(self):
        value = self.raw if self.raw is not None else self.value
        text = self.text if self.text is not None else (number_text(self.value) if isinstance(self.value, (int, float))
                                                         else "-" if self.value is None else self.value)
        attrs = ""
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            attrs = f' data-value="{esc(repr(value))}"'
        elif value is None:
            attrs = ' data-value=""'
        css = self.css or ("" if isinstance(self.value, (int, float)) or self.value is None else "t")
        if css:
            attrs += f' class="{css}"'
        return f"<td{attrs}>{esc(text)}</td>"


def table(table_id, headers, rows, css=""):
    """headers: column names (text columns start with '<'); rows: lists of Cell or plain values."""
    head = "".join(f'<th class="t">{esc(h[1:])}</th>' if h.startswith("<") else f"<th>{esc(h)}</th>"
                   for h in headers)
    keys = [h.lstrip("<") for h in headers]
    out = [f'<div class="scroll"><table id="{esc(table_id)}" class="data {css}" data-columns="{esc("|".join(keys))}" '
           f'data-rows="{len(rows)}"><thead><tr>{head}</tr></thead><tbody>']
    for row in rows:
        out.append("<tr>" + "".join((c if isinstance(c, Cell) else Cell(c)).render() for c in row) + "</tr>")
    out.append("</tbody></table></div>")
    return "".join(out)


def key_values(table_id, pairs):
    rows = "".join(f'<tr data-key="{esc(k)}"><td>{esc(k)}</td><td>{esc(v)}</td></tr>' for k, v in pairs)
    return f'<table id="{esc(table_id)}" class="kv">{rows}</table>'


_ID = re.compile(r'\bid="([^"]+)"')


def svg_of(fig, prefix):
    """The figure as inline SVG text, its ids prefixed so that charts do not share them."""
    buffer = io.StringIO()
    fig.savefig(buffer, format="svg", bbox_inches="tight", metadata={"Date": None})  # the same input, the same page
    svg = buffer.getvalue()
    svg = svg[svg.index("<svg"):]
    ids = set(_ID.findall(svg))
    if ids:
        svg = _ID.sub(lambda m: f'id="{prefix}-{m.group(1)}"', svg)
        svg = re.sub(r'(url\(#|xlink:href="#|href="#)([^)"]+)',
                     lambda m: m.group(1) + (f"{prefix}-{m.group(2)}" if m.group(2) in ids else m.group(2)), svg)
    return svg


def chart(name, fig, caption, points, plt):
    """A <figure> holding one chart; data-points says how many data points were drawn."""
    fig.tight_layout()
    svg = svg_of(fig, f"c-{name}")
    plt.close(fig)
    return (f'<figure class="chart" id="chart-{esc(name)}" data-chart="{esc(name)}" data-points="{points}">'
            f"{svg}<figcaption>{esc(caption)}</figcaption></figure>")


def note(text):
    return f'<p class="note">{esc(text)}</p>'


def section(section_id, title, body):
    return f'<section id="{esc(section_id)}"><h2>{esc(title)}</h2>{body}</section>'


def page(title, nav, sections, generator):
    links = "".join(f'<a href="#{esc(i)}">{esc(t)}</a>' for i, t in nav)
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<meta name=\"generator\" content=\"{esc(generator)}\">"
            "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
            f"<title>{esc(title)}</title><style>{STYLE}</style></head>\n<body>"
            f"<h1>{esc(title)}</h1><nav>{links}</nav>\n" + "\n".join(sections) + "\n</body></html>\n")
