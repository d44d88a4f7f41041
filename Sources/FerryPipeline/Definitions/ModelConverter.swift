import FerryCore
import Foundation

/// Writes a model bundle in another format (`ferry model convert IN OUT`): the output path's
/// name chooses the format. Never overwrites: the output must not exist, and it appears only
/// once completely written.
package enum ModelConverter {
    /// The formats ferry writes.
    package enum Format: Sendable, Equatable {
        /// A `.xcdatamodeld` package: every version and `.xccurrentversion`.
        case xcodePackage
        /// A single `.xcdatamodel` version folder (the bundle's current version).
        case xcodeVersion
        /// A ferry YAML model file (`.yml`/`.yaml`): a bundle with one version.
        case yamlFile
        /// A ferry bundle folder: `model.yml` and one YAML file per version.
        case yamlBundle
    }

    /// The format that the name of `path` asks for.
    package static func format(of path: String) -> Format {
        switch (path as NSString).pathExtension.lowercased() {
        case XcodeModelPackage.packageExtension: return .xcodePackage
        case XcodeModelPackage.versionExtension: return .xcodeVersion
        case "yml", "yaml": return .yamlFile
        default: return .yamlBundle
        }
    }

    /// Writes `bundle` to `path` in the format its name asks for, and returns warnings about what
    /// the format cannot record.
    ///
    /// - Throws: `.usage` when `path` exists or the bundle does not fit the format; `.io` when
    ///   writing fails (nothing is left behind).
    @discardableResult
    package static func write(_ bundle: ModelBundle, to path: String) throws -> [String] {
        let format = format(of: path)
        if FileManager.default.fileExists(atPath: path) {
            throw FerryError(
                .usage, "'\(path)' already exists; ferry does not overwrite it (remove it or choose another output)")
        }
        var warnings: [String] = []
        switch format {
        case .xcodeVersion, .yamlFile:
            if bundle.versions.count > 1 {
                warnings.append(
                    "'\(path)' holds one version: writing the current version '\(bundle.currentVersion)' of \(bundle.versions.count)"
                )
            }
        case .xcodePackage:
            for version in bundle.versions where version.version.contains("/") || version.version.hasPrefix(".") {
                throw FerryError(.usage, "version label '\(version.version)' cannot name a .xcdatamodel folder")
            }
            let reread = XcodeVersionOrder.ordered(bundle.versions).map(\.version)
            if reread != bundle.versions.map(\.version) {
                warnings.append(
                    "an .xcdatamodeld does not record the order of its versions; read back, they sort as \(reread.joined(separator: ", ")) instead of \(bundle.versions.map(\.version).joined(separator: ", ")) (give every version a version_identifier, or list the .xcdatamodel folders in a model.yml index)"
                )
            }
        case .yamlBundle:
            break
        }
        let folder = (path as NSString).deletingLastPathComponent
        let staging = ((folder.isEmpty ? "." : folder) as NSString).appendingPathComponent(
            ".\((path as NSString).lastPathComponent).ferry-\(UUID().uuidString)")
        do {
            switch format {
            case .xcodePackage:
                try XcodeModelWriter.writePackage(bundle, to: staging)
            case .xcodeVersion:
                try XcodeModelWriter.writeVersion(bundle.current, to: staging)
            case .yamlFile:
                try Data(ModelYAMLWriter.text(of: bundle.current).utf8).write(to: URL(fileURLWithPath: staging))
            case .yamlBundle:
                try ModelYAMLWriter.writeBundle(bundle, to: staging)
            }
            try FileManager.default.moveItem(atPath: staging, toPath: path)
        } catch {
            StoreFiles.removeWorkFile(staging)
            if let error = error as? FerryError { throw error }
            throw FerryError(
                .io, "cannot write '\(path)': \(error.localizedDescription)", at: InputLocation(file: path))
        }
        return warnings
    }
}
