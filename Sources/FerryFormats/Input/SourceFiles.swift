import FerryCore

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The files an import reads: paths and glob patterns (`nightly/*.csv.gz`), expanded by ferry
/// so that a job (and a quoted pattern on the command line) names a whole folder.
///
/// Each pattern's matches are read in natural order of their paths (`day2.csv` before
/// `day10.csv`), the patterns in the order given; a file named twice is read once. Only
/// regular files match (a folder is never a source).
package enum SourceFiles {
    /// True when `path` names files by pattern: it holds glob syntax (`*`, `?` or `[`) and is not
    /// the path of a file that exists as written. A file literally named `[table].csv` is that
    /// file; to match by pattern where such a file exists, or to name one that does not exist yet,
    /// escape the character with a backslash as glob(7) does (`\[table\].csv`).
    package static func isPattern(_ path: String) -> Bool {
        let hasGlobSyntax = path.utf8.contains {
            $0 == UInt8(ascii: "*") || $0 == UInt8(ascii: "?") || $0 == UInt8(ascii: "[")
        }
        return hasGlobSyntax && !isExistingFile(path)
    }

    /// True when a file (not a folder) exists at `path` as written.
    private static func isExistingFile(_ path: String) -> Bool {
        var status = stat()
        return stat(path, &status) == 0 && (status.st_mode & S_IFMT) != S_IFDIR
    }

    /// The files the sources name, in reading order. A pattern that matches no file is an error
    /// naming it (code `.noInput`, exit 66); a plain path is kept as it is (opening it
    /// reports a missing file). `-` (standard input) may only stand alone.
    package static func expand(_ sources: [String]) throws -> [String] {
        try checkStandardInput(sources)
        var files: [String] = []
        var seen = Set<String>()
        for source in sources {
            let matches = isPattern(source) ? try matching(source) : [source]
            for file in matches where seen.insert(file).inserted { files.append(file) }
        }
        return files
    }

    /// Standard input (`-`) may only be the one source: it has no name to tell its records apart.
    package static func checkStandardInput(_ sources: [String]) throws(FerryError) {
        if sources.count > 1, sources.contains("-") {
            throw FerryError(.usage, "standard input ('-') cannot be one of several sources")
        }
    }

    /// The regular files a glob pattern matches, in natural order; an error when there is none.
    package static func matching(_ pattern: String) throws -> [String] {
        var result = glob_t()
        defer { globfree(&result) }
        let status = glob(pattern, GLOB_MARK, nil, &result)
        var files: [String] = []
        if status == 0 {
            for index in 0..<Int(result.gl_pathc) {
                guard let pointer = result.gl_pathv[index] else { continue }
                let path = String(cString: pointer)
                // GLOB_MARK ends folders with '/': they are not sources.
                if !path.hasSuffix("/") { files.append(path) }
            }
        } else if status != GLOB_NOMATCH {
            throw FerryError(
                .io, "cannot list the files matching '\(pattern)' (glob error \(status))",
                at: InputLocation(file: pattern))
        }
        guard !files.isEmpty else {
            throw FerryError(.noInput, "no file matches '\(pattern)'", at: InputLocation(file: pattern))
        }
        return files.sorted(by: naturallyPrecedes)
    }

    /// Natural order: runs of digits compare as numbers (`file2` < `file10`), everything else
    /// byte by byte; equal numbers with more leading zeros come later, so the order is total.
    package static func naturallyPrecedes(_ lhs: String, _ rhs: String) -> Bool {
        let a = Array(lhs.utf8)
        let b = Array(rhs.utf8)
        var i = 0
        var j = 0
        while i < a.count && j < b.count {
            if isDigit(a[i]) && isDigit(b[j]) {
                let startA = i
                let startB = j
                while i < a.count && isDigit(a[i]) { i += 1 }
                while j < b.count && isDigit(b[j]) { j += 1 }
                let digitsA = a[startA..<i].drop { $0 == UInt8(ascii: "0") }
                let digitsB = b[startB..<j].drop { $0 == UInt8(ascii: "0") }
                if digitsA.count != digitsB.count { return digitsA.count < digitsB.count }
                if !digitsA.elementsEqual(digitsB) { return digitsA.lexicographicallyPrecedes(digitsB) }
                if i - startA != j - startB { return i - startA < j - startB }
                continue
            }
            if a[i] != b[j] { return a[i] < b[j] }
            i += 1
            j += 1
        }
        return a.count - i < b.count - j
    }

    @inline(__always)
    private static func isDigit(_ byte: UInt8) -> Bool { byte &- 48 < 10 }
}
