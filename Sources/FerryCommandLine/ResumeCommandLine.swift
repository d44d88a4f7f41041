import Foundation

/// The command that resumes an interrupted import: the command line ferry was started with,
/// `--resume` added, quoted for a POSIX shell so that it can be pasted as it is.
enum ResumeCommandLine {
    static func text(arguments: [String] = CommandLine.arguments) -> String {
        var words = ["ferry"] + arguments.dropFirst()
        if !words.contains("--resume") { words.append("--resume") }
        return words.map(quoted).joined(separator: " ")
    }

    private static func quoted(_ word: String) -> String {
        let plain =
            !word.isEmpty
            && word.unicodeScalars.allSatisfy { scalar in
                scalar.isASCII
                    && (scalar.properties.isAlphabetic || ("0"..."9").contains(scalar)
                        || "_-./:=,@%+".unicodeScalars.contains(scalar))
            }
        return plain ? word : "'" + word.replacingOccurrences(of: "'", with: "'\\''") + "'"
    }
}
