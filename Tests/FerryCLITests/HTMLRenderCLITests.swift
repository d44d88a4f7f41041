import FerryTestSupport
import Foundation
import Testing

/// ferry's HTML pages as a person sees them (issue 29): the run report (`--report run.html`)
/// and `ferry model diff --format html`, opened in headless Chromium with every host name
/// unresolvable. Each page must lay out with its tables and pictures, ask for nothing over the
/// network, and draw something: a screenshot that is not one single colour.
@Suite(
    "HTML pages in headless Chromium", .serialized,
    .enabled(if: Chromium.shouldRun, Comment(rawValue: Chromium.skipReason)))
struct HTMLRenderCLITests {
    /// The share of the screenshot's pixels that are not its most common colour (the
    /// background), and how many pixels have `colour` (RGB as 0xRRGGBB).
    static func drawn(_ image: PNGImage, colour: UInt32? = nil) -> (share: Double, pixels: Int) {
        let counts = image.colourCounts
        let background = counts.values.max() ?? 0
        let total = image.width * image.height
        var pixels = 0
        if let colour {
            // RGBA screenshots: the colour with any alpha.
            pixels = counts.filter { image.bytesPerPixel == 4 ? $0.key >> 8 == colour : $0.key == colour }
                .values.reduce(0, +)
        }
        return (Double(total - background) / Double(max(total, 1)), pixels)
    }

    @Test("the run report: laid out with its step table and chart, offline, not blank")
    func runReport() throws {
        let directory = TemporaryDirectory("ferry-html-render")
        let html = directory.file("run.html")
        let json = directory.file("run.json")
        let job = Fixtures.repository("pipelines/import-shop.yml")
        let result = try runFerry(["run", job, "--param", "out=\(directory.path)", "--report", html, "--quiet"])
        #expect(result.exitCode == 0, "\(result)")
        let again = try runFerry(["run", job, "--param", "out=\(directory.path)", "--report", json, "--quiet"])
        #expect(again.exitCode == 0, "\(again)")
        let steps = try #require(try jsonObject(file: json)["steps"] as? [[String: Any]])

        let page = try Chromium.render(file: html, height: 1600)
        #expect(page.pageRequests == [], "the page asked the network for \(page.pageRequests)")
        #expect(page.dom.contains("<h1>import-shop: succeeded</h1>"), "\(page.dom.prefix(2000))")
        // Every step's counts, as the JSON report of the same job has them, in the laid-out table.
        for step in steps {
            let row = HTMLReportCLITests.row(step)
            #expect(page.dom.contains(row), "no row \(row) in the rendered page")
        }
        // The chart: one bar per step, drawn in the bar colour.
        #expect(page.dom.components(separatedBy: "<rect ").count - 1 == steps.count)
        let (share, bars) = Self.drawn(page.screenshot, colour: 0x4a78b5)
        #expect(share > 0.01, "the screenshot is blank: \(share * 100)% of it differs from the background")
        #expect(bars > 100, "the chart's bars are not on the screenshot (\(bars) pixels of #4a78b5)")
    }

    @Test("ferry model diff --format html: the verdict, picture and change tables, offline, not blank")
    func modelDiff() throws {
        let directory = TemporaryDirectory("ferry-diff-render")
        let html = directory.file("diff.html")
        let result = try runFerry([
            "model", "diff", Fixtures.repository("samples/models/Shop"), "--from", "1", "--to", "3", "--format", "html",
            "--output", html,
        ])
        #expect(result.exitCode == 65, "\(result)")

        let page = try Chromium.render(file: html, height: 1600)
        #expect(page.pageRequests == [], "the page asked the network for \(page.pageRequests)")
        #expect(page.dom.contains("<table>"), "no table in the rendered page")
        // The picture: Graphviz's SVG when dot is on PATH, else the Mermaid text.
        if Graphviz.executable != nil {
            #expect(page.dom.contains("<svg"), "no picture in the rendered page")
            for entity in ["Customer", "Brand", "Product", "Order", "LineItem"] {
                #expect(page.dom.contains(">\(entity)<"), "\(entity) is not in the picture")
            }
        } else {
            #expect(page.dom.contains("classDiagram"), "no Mermaid text in the rendered page")
        }
        let (share, _) = Self.drawn(page.screenshot)
        #expect(share > 0.01, "the screenshot is blank: \(share * 100)% of it differs from the background")
    }

    @Test("the checks see a page that asks the network, and a blank page")
    func checksCatchProblems() throws {
        let directory = TemporaryDirectory("ferry-render-control")
        let page = try directory.write(
            "external.html",
            "<!DOCTYPE html><html><head><link rel=\"stylesheet\" href=\"https://fonts.example.org/a.css\"></head>"
                + "<body style=\"background:#fff\"><img src=\"http://example.com/logo.png\" alt=\"\"></body></html>\n")
        let rendering = try Chromium.render(file: page, width: 400, height: 300)
        #expect(
            Set(rendering.pageRequests) == ["https://fonts.example.org/a.css", "http://example.com/logo.png"],
            "\(rendering.pageRequests)")
        #expect(Self.drawn(rendering.screenshot).share == 0, "a blank page drew something")
    }
}
