import FerryCore
import Foundation

/// Xcode model packages on disk: a `.xcdatamodeld` folder (one `.xcdatamodel` folder per
/// version, the current one named by `.xccurrentversion`) or a single `.xcdatamodel` folder
/// holding a `contents` file (COREDATA.md §1.1).
enum XcodeModelPackage {
    static let packageExtension = "xcdatamodeld"
    static let versionExtension = "xcdatamodel"
    static let currentVersionFile = ".xccurrentversion"
    static let currentVersionKey = "_XCCurrentVersionName"

    /// True when `path` names an Xcode model: a package, a version folder, or a version's `contents`.
    static func isXcodeModel(_ path: String) -> Bool {
        let trimmed = trimmingSlashes(path)
        let ext = (trimmed as NSString).pathExtension
        if ext == packageExtension || ext == versionExtension { return true }
        return (trimmed as NSString).lastPathComponent == "contents"
            && ((trimmed as NSString).deletingLastPathComponent as NSString).pathExtension == versionExtension
    }

    /// Loads the package or version at `path` as a bundle; problems go to `errors`.
    static func load(path: String, errors: inout [FerryError]) -> ModelBundle? {
        var trimmed = trimmingSlashes(path)
        if (trimmed as NSString).lastPathComponent == "contents" {
            trimmed = (trimmed as NSString).deletingLastPathComponent
        }
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: trimmed, isDirectory: &isDirectory) else {
            errors.append(
                FerryError(.io, "no model at '\(path)': No such file or directory", at: InputLocation(file: path)))
            return nil
        }
        guard isDirectory.boolValue else {
            errors.append(
                FerryError(
                    .invalidModel, "'\(path)' is a file; an Xcode model is a folder", at: InputLocation(file: path)))
            return nil
        }
        let name = ((trimmed as NSString).lastPathComponent as NSString).deletingPathExtension
        if (trimmed as NSString).pathExtension == versionExtension {
            guard let model = loadVersion(folder: trimmed, name: name, errors: &errors) else { return nil }
            return ModelBundle(
                name: name, versions: [model], currentVersion: model.version, location: InputLocation(file: trimmed))
        }
        return loadPackage(trimmed, name: name, errors: &errors)
    }

    /// Loads one version folder (its `contents`), labelled with the folder's name.
    static func loadVersion(folder: String, name: String, errors: inout [FerryError]) -> ObjectModel? {
        let contents = (folder as NSString).appendingPathComponent("contents")
        guard let data = FileIO.contents(atPath: contents).map({ Data($0) }) else {
            errors.append(
                FerryError(.io, "'\(folder)' has no readable 'contents' file", at: InputLocation(file: contents)))
            return nil
        }
        let label = ((folder as NSString).lastPathComponent as NSString).deletingPathExtension
        var reader = XcodeModelReader(path: contents)
        let model = reader.read(data, name: name, version: label)
        errors += reader.errors
        return reader.errors.isEmpty ? model : nil
    }

    private static func loadPackage(_ folder: String, name: String, errors: inout [FerryError]) -> ModelBundle? {
        let entries: [String]
        do {
            entries = try FileManager.default.contentsOfDirectory(atPath: folder)
        } catch {
            errors.append(
                FerryError(
                    .io, "cannot list '\(folder)': \(error.localizedDescription)", at: InputLocation(file: folder)))
            return nil
        }
        let versionFolders = entries.filter { ($0 as NSString).pathExtension == versionExtension }
        guard !versionFolders.isEmpty else {
            errors.append(
                FerryError(
                    .invalidModel, "'\(folder)' holds no .\(versionExtension) version folder",
                    at: InputLocation(file: folder)))
            return nil
        }
        var versions: [ObjectModel] = []
        for entry in versionFolders {
            if let model = loadVersion(
                folder: (folder as NSString).appendingPathComponent(entry), name: name, errors: &errors)
            {
                versions.append(model)
            }
        }
        let current = currentVersion(of: folder, versions: versionFolders, errors: &errors)
        guard versions.count == versionFolders.count else { return nil }
        let ordered = XcodeVersionOrder.ordered(versions)
        return ModelBundle(
            name: name, versions: ordered, currentVersion: current ?? ordered[ordered.count - 1].version,
            location: InputLocation(file: folder))
    }

    /// The label named by `.xccurrentversion`; nil (the newest version) when the file is absent.
    private static func currentVersion(of folder: String, versions: [String], errors: inout [FerryError]) -> String? {
        let path = (folder as NSString).appendingPathComponent(currentVersionFile)
        guard let data = FileIO.contents(atPath: path).map({ Data($0) }) else {
            if versions.count > 1 {
                errors.append(
                    FerryError(
                        .invalidModel,
                        "'\(folder)' has \(versions.count) versions but no \(currentVersionFile) naming the current one",
                        at: InputLocation(file: folder)))
            }
            return nil
        }
        do {
            _ = try XMLElementNode.parse(data, path: path, code: .invalidModel)
        } catch {
            errors.append(error as? FerryError ?? FerryError(.invalidModel, "\(error)", at: InputLocation(file: path)))
            return nil
        }
        let plist = try? PropertyListSerialization.propertyList(from: data, format: nil)
        guard let dictionary = plist as? [String: Any], let value = dictionary[currentVersionKey] as? String else {
            errors.append(
                FerryError(
                    .invalidModel, "\(currentVersionFile) is not a property list with a '\(currentVersionKey)' string",
                    at: InputLocation(file: path, line: 1, column: 1)))
            return nil
        }
        guard versions.contains(value) else {
            errors.append(
                FerryError(
                    .invalidModel,
                    "\(currentVersionFile) names '\(value)', which is not a version of the package (\(versions.sorted().joined(separator: ", ")))\(Suggestions.didYouMean(value, in: versions))",
                    at: InputLocation(file: path, line: 1, column: 1)))
            return nil
        }
        return (value as NSString).deletingPathExtension
    }

    private static func trimmingSlashes(_ path: String) -> String {
        var trimmed = path
        while trimmed.count > 1, trimmed.hasSuffix("/") { trimmed.removeLast() }
        return trimmed
    }
}
