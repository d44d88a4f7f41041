import Foundation

/// Headless Chromium for the tests that look at a page as a person would: the DOM after the page
/// was laid out, a screenshot, and every request the page made, with the network disabled.
public enum Chromium {
    /// The Chromium (or Chrome) executable on `PATH`, or nil.
    public static var executable: String? {
        executableOnPath(["chromium", "chromium-browser", "google-chrome", "google-chrome-stable"])
    }

    /// Whether the Chromium tests must run: Chromium is there, or this is CI.
    public static var shouldRun: Bool { executable != nil || ProcessInfo.processInfo.environment["CI"] == "true" }

    /// Why they were skipped.
    public static let skipReason = "Chromium is not on PATH (Debian: apt-get install chromium)"

    /// What headless Chromium made of a page.
    public struct Rendering: Sendable {
        /// The document as serialized after layout (`--dump-dom`).
        public var dom: String
        /// The screenshot (`--screenshot`), the window's size.
        public var screenshot: PNGImage
        /// Every URL the page asked for (its initiator is the page, not the browser's own
        /// services such as its update and time checks), from Chromium's net log.
        public var pageRequests: [String]
    }

    /// Opens the file at `path` in headless Chromium with every host name unresolvable (no
    /// request can leave the machine), and returns its DOM, a screenshot and the page's requests.
    /// Throws when there is no Chromium or it fails.
    public static func render(file path: String, width: Int = 1200, height: Int = 900) throws -> Rendering {
        guard let executable else { throw Failure(description: "CI=true but \(skipReason)") }
        let scratch = TemporaryDirectory("ferry-chromium")
        let screenshot = scratch.file("screenshot.png")
        let netLog = scratch.file("net-log.json")
        let result = try runProgram(
            executable,
            [
                "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--no-first-run",
                "--user-data-dir=\(scratch.file("profile"))", "--window-size=\(width),\(height)",
                "--host-resolver-rules=MAP * ~NOTFOUND", "--log-net-log=\(netLog)",
                "--screenshot=\(screenshot)", "--dump-dom", URL(fileURLWithPath: path).absoluteString,
            ], timeout: .seconds(120))
        guard result.exitCode == 0 else {
            throw Failure(description: "Chromium failed (exit \(result.exitCode)): \(result.stderr.suffix(2000))")
        }
        let image = try PNGImage(data: Data(contentsOf: URL(fileURLWithPath: screenshot)))
        return Rendering(dom: result.stdout, screenshot: image, pageRequests: try pageRequests(netLog: netLog))
    }

    /// The URLs of the requests a page started, read from a net log: `URL_REQUEST_START_JOB`
    /// events whose initiator is an origin (a page's, `null` for a file), not the browser itself
    /// (`not an origin`). Files (`file:`) are read outside the network stack and never listed.
    static func pageRequests(netLog path: String) throws -> [String] {
        let data = try Data(contentsOf: URL(fileURLWithPath: path))
        guard let log = try JSONSerialization.jsonObject(with: data) as? [String: Any],
            let constants = log["constants"] as? [String: Any],
            let types = constants["logEventTypes"] as? [String: Int],
            let startJob = types["URL_REQUEST_START_JOB"],
            let events = log["events"] as? [[String: Any]]
        else { throw Failure(description: "\(path) is not a Chromium net log") }
        var urls: [String] = []
        for event in events where event["type"] as? Int == startJob {
            guard let parameters = event["params"] as? [String: Any], let url = parameters["url"] as? String,
                let initiator = parameters["initiator"] as? String, initiator != "not an origin"
            else { continue }
            urls.append(url)
        }
        return urls
    }

    struct Failure: Error, CustomStringConvertible {
        var description: String
    }
}
