import Foundation

/// The one rule that keeps a command from destroying its own data: no output (`--output`,
/// `--report`, `--junit`, `--rejects`, a job's export `output` or `rejects`) may be the store, one
/// of the store's companion files (`-wal`, `-shm`, `-journal`, backups, rebuild and dry-run
/// copies), an input of the same command or job, or another output.
///
/// Files are compared by identity (device and inode, so hard links, symlinks, `./x` and `../d/x`
/// are all caught), and names that do not exist yet by their resolved absolute path.
///
/// ```swift
/// var conflicts = OutputConflicts(store: "shop.sqlite")
/// conflicts.input("customers.csv", role: "the input")
/// conflicts.output("customers.csv", role: "--rejects")   // refused: it is the input
/// try conflicts.check()
/// ```
package struct OutputConflicts: Sendable {
    /// A file the command reads or writes, with how the user named it.
    struct Named: Sendable {
        var path: String
        var role: String
        var location: InputLocation?
        var identity: FileIdentity
    }

    private var store: Named?
    private var inputs: [Named] = []
    private var outputs: [Named] = []

    /// Starts the list with the command's store (nil or `:memory:` for none).
    package init(store: String?, location: InputLocation? = nil) {
        if let store, store != ":memory:", !PathOrURL(store).isURL {
            self.store = Named(path: store, role: "the store", location: location, identity: FileIdentity(store))
        }
    }

    /// Adds a file the command reads (`-` for standard input is ignored).
    package mutating func input(_ path: String?, role: String, location: InputLocation? = nil) {
        guard let path, path != "-", !path.isEmpty, !PathOrURL(path).isURL else { return }
        inputs.append(Named(path: path, role: role, location: location, identity: FileIdentity(path)))
    }

    /// Adds a file the command writes (`-` for standard output is ignored).
    package mutating func output(_ path: String?, role: String, location: InputLocation? = nil) {
        guard let path, path != "-", !path.isEmpty, !PathOrURL(path).isURL else { return }
        outputs.append(Named(path: path, role: role, location: location, identity: FileIdentity(path)))
    }

    /// Every output that would overwrite the store, an input or another output, as usage errors
    /// located at the output (empty when all is well).
    package func problems() -> [FerryError] {
        var problems: [FerryError] = []
        for (index, output) in outputs.enumerated() {
            if let store {
                if output.identity.sameFile(as: store.identity) {
                    problems.append(refusal(output, "is the store '\(store.path)'"))
                    continue
                }
                if let companion = output.identity.companion(of: store.identity) {
                    problems.append(refusal(output, "is the store's \(companion) ('\(store.path)')"))
                    continue
                }
            }
            if let input = inputs.first(where: { output.identity.sameFile(as: $0.identity) }) {
                problems.append(
                    refusal(
                        output, "is \(input.role) '\(input.path)'\(Self.shown(input.location, beside: output.location))"
                    ))
                continue
            }
            if let earlier = outputs[..<index].first(where: { output.identity.sameFile(as: $0.identity) }) {
                problems.append(
                    refusal(
                        output,
                        "is also written as \(earlier.role) '\(earlier.path)'\(Self.shown(earlier.location, beside: output.location))"
                    ))
            }
        }
        return problems
    }

    /// Throws the problems (a usage error, exit 64) before anything is opened for writing.
    package func check() throws {
        let problems = problems()
        if problems.count == 1 { throw problems[0] }
        if !problems.isEmpty { throw FerryErrors(problems) }
    }

    /// ` (file:line:column)` of the other file's definition, unless it is where the output is.
    private static func shown(_ location: InputLocation?, beside other: InputLocation?) -> String {
        guard let location, location != other else { return "" }
        return " (\(location))"
    }

    private func refusal(_ output: Named, _ what: String) -> FerryError {
        FerryError(
            .usage, "refusing to write \(output.role) '\(output.path)': it \(what); nothing was written",
            at: output.location)
    }
}

/// What a path names: the file's device and inode when it exists, and its absolute path with
/// symlinks resolved (of the file, or of its folder when the file does not exist yet).
package struct FileIdentity: Sendable, Hashable {
    var device: UInt64?
    var inode: UInt64?
    var resolved: String

    package init(_ path: String) {
        if let file = FileIO.deviceAndInode(of: path) {
            device = file.device
            inode = file.inode
        }
        resolved = Self.resolve(path)
    }

    package func sameFile(as other: FileIdentity) -> Bool {
        if let device, let inode, let otherDevice = other.device, let otherInode = other.inode {
            return device == otherDevice && inode == otherInode
        }
        return resolved == other.resolved
    }

    /// The kind of companion file of `store` this names (`-wal`, a backup…), if any.
    func companion(of store: FileIdentity) -> String? {
        let base = store.resolved
        for companion in StoreFiles.companions(of: base) where resolved == companion {
            return "\(companion.dropFirst(base.count)) file"
        }
        if resolved.hasPrefix(base + ".backup-") { return "backup" }
        if StoreFiles.workFileMarks.contains(where: { resolved.hasPrefix(base + $0) }) { return "working copy" }
        if resolved == base + ".ferry-lock" { return "lock file" }
        return nil
    }

    /// The absolute, symlink-free form of `path`; for a missing file, of its folder plus its name.
    static func resolve(_ path: String) -> String {
        if let real = FileIO.realPath(path) { return real }
        let absolute = path.hasPrefix("/") ? path : FileManager.default.currentDirectoryPath + "/" + path
        let url = URL(fileURLWithPath: absolute).standardizedFileURL
        let folder = url.deletingLastPathComponent().path
        if let prefix = FileIO.realPath(folder) {
            return (prefix == "/" ? "" : prefix) + "/" + url.lastPathComponent
        }
        return url.path
    }
}
