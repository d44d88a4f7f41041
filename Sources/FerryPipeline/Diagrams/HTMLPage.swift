import FerryCore
import Foundation

/// A self-contained HTML page: inline style, no script, font or image from elsewhere, so it
/// reads the same offline and in a CI artifact viewer (`ferry model diff --format html`, the
/// HTML run report).
package enum HTMLPage {
    /// A complete document titled `title` around `body` (already HTML).
    package static func document(title: String, body: String) -> String {
        """
        <!DOCTYPE html>
        <html lang="en">
        <head>
        <meta charset="utf-8">
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <title>\(escape(title))</title>
        <style>
        \(style)
        </style>
        </head>
        <body>
        \(body)
        </body>
        </html>

        """
    }

    /// The page's style sheet.
    static let style = """
        body { font-family: -apple-system, "Segoe UI", Helvetica, Arial, sans-serif; margin: 2em; color: #222; }
        h1 { font-size: 1.5em; } h2 { font-size: 1.2em; margin-top: 1.6em; }
        table { border-collapse: collapse; margin: 0.6em 0; }
        th, td { border: 1px solid #ccc; padding: 0.3em 0.6em; text-align: left; vertical-align: top; }
        th { background: #eef1f6; } td.number { text-align: right; font-variant-numeric: tabular-nums; }
        .swatch { display: inline-block; width: 1em; height: 1em; border: 1px solid #888; vertical-align: middle; }
        .ok { color: #2e7d32; } .failed { color: #c62828; } .note { color: #555; }
        pre { background: #f6f8fa; padding: 0.8em; overflow-x: auto; }
        figure { margin: 1em 0; overflow-x: auto; }
        """

    /// `text` as HTML text or attribute value (XML's escaping, which HTML reads alike).
    package static func escape(_ text: String) -> String { XMLEscaping.escape(text) }

    /// A table with a header row; cells are already HTML. `numeric` columns align right.
    package static func table(header: [String], rows: [[String]], numeric: Set<Int> = []) -> String {
        var html = "<table>\n<tr>" + header.map { "<th>\(escape($0))</th>" }.joined() + "</tr>\n"
        for row in rows {
            html += "<tr>"
            for (index, cell) in row.enumerated() {
                html += numeric.contains(index) ? "<td class=\"number\">\(cell)</td>" : "<td>\(cell)</td>"
            }
            html += "</tr>\n"
        }
        return html + "</table>\n"
    }

    /// SVG text to place inside a page: without the XML declaration, DOCTYPE and comments
    /// Graphviz writes before the `svg` element, and without its namespace declarations (HTML
    /// knows inline SVG without them, and the page then names no URL at all).
    package static func inlineSVG(_ svg: String) -> String {
        guard let start = svg.range(of: "<svg") else { return "" }
        var text = String(svg[start.lowerBound...])
        for attribute in [" xmlns=\"http://www.w3.org/2000/svg\"", " xmlns:xlink=\"http://www.w3.org/1999/xlink\""] {
            text = text.replacingOccurrences(of: attribute, with: "")
        }
        return text
    }
}
